#include "nanoscopy/sim/loc_sim.hpp"

#include <cmath>
#include <random>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

SimulatedLocalizations simulate_localizations(const LocSimSettings& s) {
  if (s.frames < 1) throw UsageError("--frames", "must be at least 1");
  if (s.width < 8 || s.height < 8) throw UsageError("--size", "the field must be at least 8 px a side");
  if (s.emitters < 0 || s.markers < 0) throw UsageError("--emitters", "must not be negative");
  if (!(s.on_fraction > 0 && s.on_fraction < 1)) throw UsageError("--on-fraction", "must lie in (0, 1)");
  if (!(s.mean_on_frames >= 1)) throw UsageError("--mean-on", "a blink lasts at least one frame on average");
  if (!(s.precision_nm > 0) || !(s.marker_precision_nm > 0))
    throw UsageError("--precision", "must be a positive number of nm");
  SimulatedLocalizations out;
  std::mt19937_64 rng(s.seed);
  StructureSettings st = s.structure;
  st.x0 = st.y0 = 2.0;
  st.x1 = static_cast<double>(s.width) - 3.0;
  st.y1 = static_cast<double>(s.height) - 3.0;
  st.pixel_size_nm = s.pixel_size_nm;
  out.emitters = place_emitters(st, s.emitters, rng);
  std::uniform_real_distribution<double> ux(st.x0, st.x1), uy(st.y0, st.y1);
  for (int k = 0; k < s.markers; ++k) {
    const double x = ux(rng);
    out.emitters.push_back({x, uy(rng)});
  }
  DriftSimSettings drift = s.drift;
  drift.seed = s.seed;
  out.drift = simulate_drift(drift, s.frames, s.pixel_size_nm);

  // The movie simulator's blinking: off after each on frame with 1/mean_on, on with the rate that gives
  // the duty cycle; each emitter starts in its stationary state.
  const double p_off = 1.0 / s.mean_on_frames;
  const double p_on = std::min(1.0, p_off * s.on_fraction / (1.0 - s.on_fraction));
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 1.0);
  const auto n_emitters = static_cast<std::size_t>(s.emitters);
  std::vector<std::int64_t> current(n_emitters, -1);  // the blink an emitter is in, −1: off
  std::vector<double> blink_lp(n_emitters, 0.0);
  const auto start_blink = [&](std::size_t k) {
    current[k] = out.blinks++;
    blink_lp[k] = s.precision_nm / s.pixel_size_nm * std::exp(0.3 * g(rng));
  };
  for (std::size_t k = 0; k < n_emitters; ++k)
    if (u(rng) < s.on_fraction) start_blink(k);
  const double expected = static_cast<double>(s.emitters) * static_cast<double>(s.frames) * s.on_fraction +
                          static_cast<double>(s.markers) * static_cast<double>(s.frames);
  out.locs.reserve(static_cast<std::size_t>(expected * 1.05) + 16);
  out.blink.reserve(out.locs.capacity());
  const double marker_lp = s.marker_precision_nm / s.pixel_size_nm;
  const auto add = [&](std::int64_t t, const EmitterPoint& p, double lp, std::int64_t blink) {
    Localization l;
    l.frame = t;
    l.x = p.x + out.drift.dx[static_cast<std::size_t>(t)] + lp * g(rng);
    l.y = p.y + out.drift.dy[static_cast<std::size_t>(t)] + lp * g(rng);
    l.lpx = l.lpy = lp;
    // Precision ∝ 1/√photons: the blink's photons from its precision.
    const double r = s.precision_nm / s.pixel_size_nm / lp;
    l.photons = s.photons * r * r;
    l.sigma = 1.2;
    l.background = 10;
    l.status = FitStatus::converged_min_delta;
    out.locs.push_back(l);
    out.blink.push_back(blink);
  };
  for (std::int64_t t = 0; t < s.frames; ++t) {
    for (std::size_t k = 0; k < n_emitters; ++k) {
      if (t > 0) {
        if (current[k] >= 0) {
          if (u(rng) < p_off) current[k] = -1;
        } else if (u(rng) < p_on) {
          start_blink(k);
        }
      }
      if (current[k] >= 0) add(t, out.emitters[k], blink_lp[k], current[k]);
    }
    for (int m = 0; m < s.markers; ++m) add(t, out.emitters[n_emitters + static_cast<std::size_t>(m)], marker_lp, -1);
  }
  return out;
}

}  // namespace nanoscopy
