#include "nanoscopy/smre/set_family.hpp"

#include <string>

namespace nanoscopy {

std::vector<int> SetFamily::edges() const {
  std::vector<int> e;
  if (kind == Projection::exact) {
    for (int edge = mr_depth; edge >= 1; --edge) e.push_back(edge);
  } else {
    for (int edge = kIcdTile; edge >= 1; edge /= 2) e.push_back(edge);
  }
  return e;
}

void SetFamily::for_each_square(int edge, const std::function<void(std::int64_t, std::int64_t)>& f) const {
  if (kind == Projection::exact) {
    for (std::int64_t y = 0; y + edge <= height; ++y)
      for (std::int64_t x = 0; x + edge <= width; ++x) f(x, y);
    return;
  }
  for (int pass = 0; pass < kIcdPasses; ++pass) {
    const int offset = icd_pass_offset(pass);
    if (edge < offset) continue;  // pass i uses edges >= 2^i
    for (std::int64_t ty = offset; ty + kIcdTile <= height; ty += kIcdTile)
      for (std::int64_t tx = offset; tx + kIcdTile <= width; tx += kIcdTile)
        for (int sy = 0; sy < kIcdTile; sy += edge)
          for (int sx = 0; sx < kIcdTile; sx += edge) f(tx + sx, ty + sy);
  }
}

std::int64_t SetFamily::exact_tilings() const {
  if (kind != Projection::exact) return 0;
  std::int64_t n = 0;
  for (int e = 1; e <= mr_depth; ++e) n += static_cast<std::int64_t>(e) * e;
  return n;
}

std::string SetFamily::describe() const {
  if (kind == Projection::exact)
    return "exact Dykstra, squares of edge 1.." + std::to_string(mr_depth) + " px at every shift (" +
           std::to_string(exact_tilings()) + " tilings)";
  return "incomplete Dykstra, dyadic squares of edge 1..32 px in 32x32 tiles, 5 shifted passes";
}

}  // namespace nanoscopy
