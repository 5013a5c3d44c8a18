// The host side every FRC engine shares: the window, the ring pixel counts and
// the rings' mean radii (both engines upload or use the same values, computed
// here once).
#include "nanoscopy/frc/engine.hpp"

#include <cmath>
#include <numbers>

#include "nanoscopy/frc/frc_math.hpp"

namespace nanoscopy {

std::vector<double> tukey_window(std::int64_t n, double fraction) {
  std::vector<double> w(static_cast<std::size_t>(n > 0 ? n : 0), 1.0);
  const auto m = static_cast<std::int64_t>(std::llround(fraction * static_cast<double>(n)));
  // Half-sample symmetric: w[i] = w[n-1-i], never exactly 0 (the edge pixels still count a little).
  for (std::int64_t i = 0; i < m && i < n; ++i) {
    const double v = 0.5 * (1.0 - std::cos(std::numbers::pi * (static_cast<double>(i) + 0.5) / static_cast<double>(m)));
    w[static_cast<std::size_t>(i)] = v;
    w[static_cast<std::size_t>(n - 1 - i)] = v;
  }
  return w;
}

std::vector<std::int64_t> frc_ring_pixels(std::int64_t width, std::int64_t height) {
  const std::int64_t last = frc_math::last_ring(width, height);
  std::vector<std::int64_t> n(static_cast<std::size_t>(last + 1), 0);
  for (std::int64_t y = 0; y < height; ++y) {
    const std::int64_t ky = frc_math::signed_frequency(y, height);
    for (std::int64_t c = 0; 2 * c <= width; ++c) {
      const std::int64_t r = frc_math::ring_index(c, ky, width, height);
      if (r > last) continue;
      n[static_cast<std::size_t>(r)] += static_cast<std::int64_t>(frc_math::half_spectrum_weight(c, width));
    }
  }
  return n;
}

std::vector<double> frc_ring_radii(std::int64_t width, std::int64_t height) {
  const std::int64_t last = frc_math::last_ring(width, height);
  std::vector<double> sum(static_cast<std::size_t>(last + 1), 0.0), n(sum.size(), 0.0);
  for (std::int64_t y = 0; y < height; ++y) {
    const std::int64_t ky = frc_math::signed_frequency(y, height);
    for (std::int64_t c = 0; 2 * c <= width; ++c) {
      const std::int64_t r = frc_math::ring_index(c, ky, width, height);
      if (r > last) continue;
      const double weight = frc_math::half_spectrum_weight(c, width);  // column c and its mirror: the same |k|
      sum[static_cast<std::size_t>(r)] += weight * frc_math::radius(c, ky, width, height);
      n[static_cast<std::size_t>(r)] += weight;
    }
  }
  for (std::size_t r = 0; r < sum.size(); ++r) sum[r] = n[r] > 0 ? sum[r] / n[r] : static_cast<double>(r) + 0.5;
  return sum;
}

}  // namespace nanoscopy
