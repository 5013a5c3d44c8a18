// The host side after the engine: the curve from the ring sums, the threshold
// and the crossing.
#include "nanoscopy/frc/frc.hpp"

#include <cmath>

namespace nanoscopy {

const char* to_string(FrcCrossing::Status status) {
  switch (status) {
    case FrcCrossing::Status::crossed:
      return "crossed";
    case FrcCrossing::Status::not_reached:
      return "not reached";
    case FrcCrossing::Status::never_above:
      return "never above";
  }
  return "?";
}

FrcCrossing find_crossing(std::span<const FrcPoint> curve) {
  FrcCrossing c;
  const auto n = static_cast<std::int64_t>(curve.size());
  const auto d = [&](std::int64_t r) {
    const FrcPoint& p = curve[static_cast<std::size_t>(r)];
    return p.frc - p.threshold;
  };
  std::int64_t r = 1;
  while (r < n && !(d(r) >= 0)) ++r;  // first ring at or above the threshold
  if (r >= n) return c;               // never above
  while (r < n && d(r) >= 0) ++r;     // first ring below it after that
  if (r >= n) {
    c.status = FrcCrossing::Status::not_reached;
    c.ring = static_cast<double>(n - 1);
    c.frequency = 0.5;
    c.resolution_px = 2.0;
    return c;
  }
  const double d0 = d(r - 1), d1 = d(r);
  const double a = d0 / (d0 - d1);
  const double f0 = curve[static_cast<std::size_t>(r - 1)].frequency, f1 = curve[static_cast<std::size_t>(r)].frequency;
  c.status = FrcCrossing::Status::crossed;
  c.ring = static_cast<double>(r - 1) + a;
  c.frequency = f0 + a * (f1 - f0);
  c.resolution_px = 1.0 / c.frequency;
  return c;
}

FrcResult frc_from_sums(const FrcRingSums& sums, const FrcGeometry& g, const FrcThreshold& threshold) {
  FrcResult out;
  out.width = g.width;
  out.height = g.height;
  out.side = g.side();
  out.threshold = threshold;
  const std::size_t rings = sums.cross.size();
  out.curve.resize(rings);
  // The engines pass the rings' mean radii; sums made elsewhere get them from the geometry.
  const std::vector<double> radii = sums.radius.size() == rings ? sums.radius : frc_ring_radii(g.width, g.height);
  for (std::size_t r = 0; r < rings; ++r) {
    FrcPoint& p = out.curve[r];
    p.ring = static_cast<std::int64_t>(r);
    p.radius = r < radii.size() ? radii[r] : static_cast<double>(r) + 0.5;
    p.frequency = p.radius / static_cast<double>(out.side);
    const double denominator = std::sqrt(sums.power1[r] * sums.power2[r]);
    p.frc = denominator > 0 ? sums.cross[r] / denominator : 0.0;
    p.pixels = sums.pixels[r];
    p.threshold = threshold.at(p.pixels);
  }
  out.crossing = find_crossing(out.curve);
  return out;
}

FrcResult compute_frc(FrcEngine& engine, std::span<const float> a, std::span<const float> b,
                      const FrcThreshold& threshold) {
  return frc_from_sums(engine.ring_sums(a, b), engine.geometry(), threshold);
}

FrcResult compute_frc(std::span<const float> a, std::span<const float> b, const FrcGeometry& geometry,
                      const FrcThreshold& threshold) {
  auto engine = make_cpu_frc_engine(geometry);
  return compute_frc(*engine, a, b, threshold);
}

}  // namespace nanoscopy
