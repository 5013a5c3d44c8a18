#include "nanoscopy/sim/drift.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

DriftTrace simulate_drift(const DriftSimSettings& s, std::int64_t frames, double pixel_size_nm) {
  if (!std::isfinite(s.linear_nm)) throw UsageError("--drift-linear", "must be a finite number of nm per 1000 frames");
  if (!std::isfinite(s.angle_deg)) throw UsageError("--drift-angle", "must be a finite angle in degrees");
  if (!(s.walk_nm >= 0) || !std::isfinite(s.walk_nm)) throw UsageError("--drift-walk", "must be 0 or more nm per √frame");
  DriftTrace d;
  const auto n = static_cast<std::size_t>(std::max<std::int64_t>(frames, 0));
  d.dx.resize(n);
  d.dy.resize(n);
  d.markers.assign(n, 0);
  const double angle = s.angle_deg * std::numbers::pi / 180.0;
  const double vx = s.linear_nm / 1000.0 * std::cos(angle) / pixel_size_nm;  // px per frame
  const double vy = s.linear_nm / 1000.0 * std::sin(angle) / pixel_size_nm;
  // Its own stream: the same seed gives the same emitters with or without drift.
  std::mt19937_64 rng(s.seed ^ 0xd21f7d21f7d21f7dULL);
  std::normal_distribution<double> step(0.0, s.walk_nm / pixel_size_nm);
  double wx = 0, wy = 0;
  for (std::size_t t = 0; t < n; ++t) {
    if (t > 0 && s.walk_nm > 0) {
      wx += step(rng);
      wy += step(rng);
    }
    d.dx[t] = vx * static_cast<double>(t) + wx;
    d.dy[t] = vy * static_cast<double>(t) + wy;
  }
  return d;
}

}  // namespace nanoscopy
