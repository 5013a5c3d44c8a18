#include "nanoscopy/sofi/bleach_fit.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace nanoscopy {
namespace {

struct Linear {
  double a = 0, c = 0, sse = 0;
};

// A and C for a fixed rate k = 1/tau: least squares of y ~ A e^{-k t} + C.
Linear fit_at(std::span<const double> y, double k) {
  double se = 0, see = 0, sy = 0, sey = 0;
  const double n = static_cast<double>(y.size());
  for (std::size_t t = 0; t < y.size(); ++t) {
    const double e = std::exp(-k * static_cast<double>(t));
    se += e;
    see += e * e;
    sy += y[t];
    sey += e * y[t];
  }
  const double det = n * see - se * se;
  Linear l;
  if (!(det > 0)) return {0, sy / n, 0};
  l.a = (n * sey - se * sy) / det;
  l.c = (sy - l.a * se) / n;
  for (std::size_t t = 0; t < y.size(); ++t) {
    const double r = y[t] - l.a * std::exp(-k * static_cast<double>(t)) - l.c;
    l.sse += r * r;
  }
  return l;
}

}  // namespace

double BleachFit::gain(double t) const {
  if (!decays) return 1.0;
  const double now = amplitude * std::exp(-t / tau_frames) + constant;
  if (!(now > 0)) return kMaxBleachGain;
  return std::min((amplitude + constant) / now, kMaxBleachGain);
}

BleachFit fit_exponential_decay(std::span<const double> y) {
  if (y.size() < 3) throw std::invalid_argument("an exponential fit needs at least 3 values");
  const double n = static_cast<double>(y.size());
  // log k from ln(1/(100 n)) to ln(3): 200 steps, then golden section around the best.
  const double lo = std::log(1.0 / (100.0 * n)), hi = std::log(3.0);
  constexpr int steps = 200;
  int best = 0;
  double best_sse = HUGE_VAL;
  for (int i = 0; i <= steps; ++i) {
    const double sse = fit_at(y, std::exp(lo + (hi - lo) * i / steps)).sse;
    if (sse < best_sse) best_sse = sse, best = i;
  }
  double a = lo + (hi - lo) * std::max(best - 1, 0) / steps, b = lo + (hi - lo) * std::min(best + 1, steps) / steps;
  const double g = 0.5 * (std::sqrt(5.0) - 1.0);
  for (int it = 0; it < 60; ++it) {
    const double m1 = b - g * (b - a), m2 = a + g * (b - a);
    if (fit_at(y, std::exp(m1)).sse < fit_at(y, std::exp(m2)).sse)
      b = m2;
    else
      a = m1;
  }
  const double k = std::exp(0.5 * (a + b));
  const Linear l = fit_at(y, k);
  BleachFit f;
  f.amplitude = l.a;
  f.tau_frames = 1.0 / k;
  f.constant = l.c;
  f.rms_residual = std::sqrt(l.sse / n);
  f.decays = l.a > 0 && l.a + l.c > 0;
  return f;
}

}  // namespace nanoscopy
