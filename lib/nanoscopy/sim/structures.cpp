#include "nanoscopy/sim/structures.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

std::vector<EmitterPoint> place_emitters(const StructureSettings& s, int n, std::mt19937_64& rng) {
  if (s.structure != "random" && s.structure != "lines" && s.structure != "rings")
    throw UsageError("--structure", "unknown structure '" + s.structure + "' (random, lines or rings)");
  const double x0 = s.x0, x1 = s.x1, y0 = s.y0, y1 = s.y1;
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  auto ux = [&] { return x0 + (x1 - x0) * u01(rng); };
  auto uy = [&] { return y0 + (y1 - y0) * u01(rng); };
  std::vector<EmitterPoint> points;
  points.reserve(static_cast<std::size_t>(n));
  if (n == 0) return points;

  if (s.structure == "random") {
    for (int k = 0; k < n; ++k) {
      const double x = ux();
      points.push_back({x, uy()});
    }
  } else if (s.structure == "lines") {
    // Each filament: the chord of the field through a random point at a random
    // angle. Emitters evenly spaced along the filaments' total length.
    const int count = s.filaments > 0 ? s.filaments : std::max(1, (n + 39) / 40);
    struct Segment {
      EmitterPoint a, b;
      double length;
    };
    std::vector<Segment> segments;
    double total = 0;
    for (int f = 0; f < count; ++f) {
      const EmitterPoint p{ux(), uy()};
      const double angle = std::numbers::pi * u01(rng);
      const double dx = std::cos(angle), dy = std::sin(angle);
      // Clip the line p + t·(dx, dy) to the box [x0, x1] × [y0, y1].
      double t_lo = -1e300, t_hi = 1e300;
      auto clip = [&](double p0, double d, double lo, double hi) {
        if (std::abs(d) < 1e-12) return;
        double a = (lo - p0) / d, b = (hi - p0) / d;
        if (a > b) std::swap(a, b);
        t_lo = std::max(t_lo, a);
        t_hi = std::min(t_hi, b);
      };
      clip(p.x, dx, x0, x1);
      clip(p.y, dy, y0, y1);
      const double length = std::max(0.0, t_hi - t_lo);
      segments.push_back({{p.x + t_lo * dx, p.y + t_lo * dy}, {p.x + t_hi * dx, p.y + t_hi * dy}, length});
      total += length;
    }
    const double spacing = total / n;
    std::size_t seg = 0;
    double seg_start = 0;  // distance along all filaments where `seg` begins
    for (int k = 0; k < n; ++k) {
      const double d = (k + 0.5) * spacing;
      while (seg + 1 < segments.size() && d > seg_start + segments[seg].length) seg_start += segments[seg++].length;
      const auto& g = segments[seg];
      const double f = g.length > 0 ? std::clamp((d - seg_start) / g.length, 0.0, 1.0) : 0.5;
      points.push_back({g.a.x + f * (g.b.x - g.a.x), g.a.y + f * (g.b.y - g.a.y)});
    }
  } else {  // rings
    const int count = s.rings > 0 ? s.rings : std::max(1, (n + 11) / 12);
    for (int r = 0; r < count; ++r) {
      const int in_ring = n / count + (r < n % count ? 1 : 0);
      const double radius_nm = s.ring_radius_min_nm + (s.ring_radius_max_nm - s.ring_radius_min_nm) * u01(rng);
      const double radius = radius_nm / s.pixel_size_nm;
      // Keep the whole ring inside the box when it fits, else centre it.
      auto centre = [&](double lo, double hi) {
        return lo + radius <= hi - radius ? lo + radius + (hi - lo - 2 * radius) * u01(rng) : 0.5 * (lo + hi);
      };
      const double cx = centre(x0, x1);
      const double cy = centre(y0, y1);
      const double phase = 2 * std::numbers::pi * u01(rng);
      for (int k = 0; k < in_ring; ++k) {
        const double a = phase + 2 * std::numbers::pi * k / in_ring;
        points.push_back({cx + radius * std::cos(a), cy + radius * std::sin(a)});
      }
    }
  }
  return points;
}

}  // namespace nanoscopy
