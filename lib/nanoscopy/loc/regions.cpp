#include "nanoscopy/loc/regions.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"

namespace nanoscopy {

std::vector<Region> parse_regions(const std::string& path, std::int64_t frame_width, std::int64_t frame_height) {
  plan_input(path, "the regions (--regions)");
  std::ifstream in(path);
  if (!in) throw InputError(path, "cannot open the regions file");
  std::vector<Region> regions;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = path + ":" + std::to_string(number);
    line = line.substr(0, line.find('#'));
    std::replace_if(line.begin(), line.end(), [](char c) { return c == ',' || c == '\t' || c == '\r'; }, ' ');
    std::istringstream fields(line);
    std::vector<std::int64_t> v;
    std::string word;
    while (fields >> word) {
      std::int64_t value = 0;
      const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
      if (ec != std::errc() || end != word.data() + word.size())
        throw InputError(where, "'" + word + "' is not a whole number of pixels (expected: x0 y0 width height)");
      v.push_back(value);
    }
    if (v.empty()) continue;
    if (v.size() != 4) throw InputError(where, "expected 4 numbers, x0 y0 width height, not " + std::to_string(v.size()));
    const Region r{v[0], v[1], v[2], v[3]};
    if (r.width <= 0 || r.height <= 0) throw InputError(where, "the region's width and height must be positive");
    if (r.x0 < 0 || r.y0 < 0 || r.x0 + r.width > frame_width || r.y0 + r.height > frame_height)
      throw InputError(where, "the region reaches outside the " + std::to_string(frame_width) + "x" +
                                  std::to_string(frame_height) + " frame");
    regions.push_back(r);
  }
  if (regions.empty()) throw InputError(path, "no regions in the file (lines of: x0 y0 width height)");
  return regions;
}

bool in_regions(const std::vector<Region>& regions, std::int64_t x, std::int64_t y) {
  return regions.empty() ||
         std::any_of(regions.begin(), regions.end(), [&](const Region& r) { return r.contains(x, y); });
}

std::vector<unsigned char> region_mask(const std::vector<Region>& regions, int width, int height) {
  const auto w = static_cast<std::int64_t>(std::max(width, 0)), h = static_cast<std::int64_t>(std::max(height, 0));
  std::vector<unsigned char> mask(static_cast<std::size_t>(w * h), regions.empty() ? 1 : 0);
  for (const Region& r : regions) {  // clipped to the frame
    const std::int64_t x0 = std::max<std::int64_t>(r.x0, 0), x1 = std::min(r.x0 + r.width, w);
    for (std::int64_t y = std::max<std::int64_t>(r.y0, 0); y < std::min(r.y0 + r.height, h); ++y)
      if (x0 < x1) std::fill(mask.begin() + y * w + x0, mask.begin() + y * w + x1, 1);
  }
  return mask;
}

}  // namespace nanoscopy
