#include "nanoscopy/smre/noise.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "nanoscopy/smre/smre_math.hpp"

namespace nanoscopy {

double estimate_noise_sigma(std::span<const float> f, std::int64_t w, std::int64_t h) {
  if (w < 3 || h < 3) return 0.0;
  std::vector<double> r;
  r.reserve(static_cast<std::size_t>((w - 2) * (h - 2)));
  for (std::int64_t y = 1; y + 1 < h; ++y)
    for (std::int64_t x = 1; x + 1 < w; ++x) {
      auto at = [&](std::int64_t dx, std::int64_t dy) { return static_cast<double>(f[(y + dy) * w + x + dx]); };
      r.push_back(at(-1, -1) + at(1, -1) + at(-1, 1) + at(1, 1) - 2 * (at(0, -1) + at(0, 1) + at(-1, 0) + at(1, 0)) +
                  4 * at(0, 0));
    }
  auto median = [](std::vector<double>& v) {
    auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    return *mid;
  };
  const double med = median(r);
  for (double& v : r) v = std::fabs(v - med);
  return 1.4826 * median(r) / 6.0;
}

void anscombe_forward(std::span<float> v) {
  for (float& x : v) x = static_cast<float>(smre_math::anscombe_forward(x));
}

void anscombe_inverse(std::span<float> v) {
  for (float& x : v) x = static_cast<float>(smre_math::anscombe_inverse(x));
}

}  // namespace nanoscopy
