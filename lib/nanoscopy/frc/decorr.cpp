// Decorrelation analysis on the host: the apodization mask, the curves from an
// engine's sums, getDcorrLocalMax's peak rules and getDcorr's two-step
// refinement (decorr.hpp).
#include "nanoscopy/frc/decorr.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {
namespace {

std::vector<double> linspace(double a, double b, int n) {
  std::vector<double> v(static_cast<std::size_t>(std::max(n, 0)));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = n == 1 ? a : a + (b - a) * i / (n - 1);
  if (n > 1) v.back() = b;
  return v;
}

// Matlab's [A, ind] = max(d(1:len)): the first index of the maximum.
std::size_t first_max(const std::vector<double>& d, std::size_t len) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < len; ++i)
    if (d[i] > d[best]) best = i;
  return best;
}

DecorrCurve make_curve(const DecorrSums& sums, int filter, const DecorrPass& pass) {
  DecorrCurve c;
  c.g = pass.g[static_cast<std::size_t>(filter)] > 0 ? pass.g[static_cast<std::size_t>(filter)] : 0.0;
  c.radius = pass.radii();
  c.d = decorr_curve(sums, filter, pass.nr);
  c.peak = decorr_local_max(c.d);
  c.kc = c.radius[static_cast<std::size_t>(c.peak)];
  c.amplitude = c.d[static_cast<std::size_t>(c.peak)];
  return c;
}

}  // namespace

std::vector<double> DecorrPass::radii() const {
  return linspace(r_min, r_max, nr);
}

std::vector<double> decorr_apodization(std::int64_t n, double apodization_px) {
  std::vector<double> w(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)), 1.0);
  if (n < 2) return w;
  const double band = std::min(apodization_px, static_cast<double>(n / 4));
  if (!(band > 0)) return w;
  const double half = static_cast<double>(n) / 2;
  std::vector<double> x(w.size()), d(w.size(), 0.0);
  std::vector<bool> edge(w.size());
  double mean = 0;
  int count = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    x[i] = std::abs(-half + static_cast<double>(i) * static_cast<double>(n) / static_cast<double>(n - 1));
    edge[i] = x[i] > half - band;
    if (edge[i]) mean += -x[i], ++count;
  }
  if (count == 0) return w;
  mean /= count;
  for (std::size_t i = 0; i < w.size(); ++i)
    if (edge[i]) d[i] = -x[i] - mean;
  const auto [lo, hi] = std::minmax_element(d.begin(), d.end());
  const double span = *hi - *lo;
  if (!(span > 0)) return w;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (!edge[i]) continue;  // sin(pi/2): 1
    const double t = std::clamp((d[i] - *lo) / span, 0.0, 1.0);
    w[i] = (std::sin(t * std::numbers::pi - std::numbers::pi / 2) + 1) / 2;
  }
  return w;
}

void check_decorr_geometry(const DecorrGeometry& g) {
  if (g.width < kMinDecorrSide || g.height < kMinDecorrSide)
    throw UsageError("decorr", "an image of " + std::to_string(g.width) + "x" + std::to_string(g.height) +
                                   " px is too small for decorrelation analysis: it needs at least " +
                                   std::to_string(kMinDecorrSide) + "x" + std::to_string(kMinDecorrSide) + " px");
  if (g.width * g.height >= (1LL << 31))
    throw UsageError("decorr", "an image of " + std::to_string(g.width) + "x" + std::to_string(g.height) +
                                   " px is too large (at most 2^31 pixels)");
  if (!(g.apodization_px >= 0)) throw UsageError("--apodization", "the apodization band must be >= 0 px");
}

int decorr_local_max(std::span<const double> curve) {
  std::vector<double> d(curve.begin(), curve.end());
  std::size_t len = d.size();
  if (len < 2) return 0;
  std::size_t ind = first_max(d, len);
  while (len > 1) {
    if (ind == len - 1) {
      --len;
      ind = first_max(d, len);
    } else if (ind == 0) {
      break;
    } else {
      const double low =
          *std::min_element(d.begin() + static_cast<std::ptrdiff_t>(ind), d.begin() + static_cast<std::ptrdiff_t>(len));
      if (d[ind] - low >= 0.0005) break;
      --len;
      ind = first_max(d, len);
    }
  }
  return static_cast<int>(ind);
}

std::vector<double> decorr_curve(const DecorrSums& s, int filter, int nr) {
  std::vector<double> d(static_cast<std::size_t>(nr), 0.0);
  const double norm = std::sqrt(s.power[static_cast<std::size_t>(filter)]);
  double amp = 0, n = 0;
  for (int k = 0; k < nr; ++k) {
    amp += s.amplitude[static_cast<std::size_t>(filter) * static_cast<std::size_t>(nr) + static_cast<std::size_t>(k)];
    n += s.count[static_cast<std::size_t>(k)];
    const double v = amp / (norm * std::sqrt(n));
    d[static_cast<std::size_t>(k)] = std::isfinite(v) ? std::floor(1000 * v) / 1000 : 0.0;
  }
  return d;
}

DecorrResult analyse_uploaded(DecorrEngine& engine, const DecorrSettings& settings) {
  if (settings.nr < 30 || settings.nr > kMaxDecorrRadii)
    throw UsageError("--radii", "Nr must lie in [30, " + std::to_string(kMaxDecorrRadii) + "] (got " +
                                    std::to_string(settings.nr) + ")");
  if (settings.ng < 5 || settings.ng + 1 > kMaxDecorrFilters)
    throw UsageError("--filters", "Ng must lie in [5, " + std::to_string(kMaxDecorrFilters - 1) + "] (got " +
                                      std::to_string(settings.ng) + ")");
  const DecorrGeometry& geo = engine.geometry();
  const int nr = settings.nr, ng = settings.ng;
  engine.transform();
  DecorrResult out;
  out.width = geo.width;
  out.height = geo.height;

  // d0: no filter over linspace(0, 1, Nr).
  DecorrPass p0;
  p0.nr = nr;
  p0.g = {0.0};
  out.d0 = make_curve(engine.sums(p0), 0, p0);
  const double k0 = out.d0.kc, snr0 = out.d0.amplitude;

  // Ng + 1 high-pass filters on the same radii.
  const double g_max = k0 > 0 ? 2 / k0 : static_cast<double>(std::max(geo.width, geo.height)) / 2;
  DecorrPass p1 = p0;
  p1.g = {static_cast<double>(geo.height) / 4};
  for (double lg : linspace(std::log(g_max), std::log(0.15), ng)) p1.g.push_back(std::exp(lg));
  const DecorrSums s1 = engine.sums(p1);
  for (int f = 0; f <= ng; ++f) out.coarse.push_back(make_curve(s1, f, p1));

  // Refinement (getDcorr, refin == 1): kc(1) = k0, kc(h + 1) = filter h.
  std::vector<double> kc{k0};
  for (const DecorrCurve& c : out.coarse) kc.push_back(c.kc);
  const double top = *std::max_element(kc.begin(), kc.end());
  std::size_t i = kc.size() - 1;
  while (kc[i] != top) --i;
  const std::vector<double>& g = p1.g;
  double g1, g2;
  if (i == 0) {
    g1 = static_cast<double>(geo.height);
    g2 = g[0];
  } else if (i >= static_cast<std::size_t>(ng)) {
    g1 = g[i - 2];
    g2 = g[i - 1];
  } else {
    g1 = g[i - 1];
    g2 = g[i];
  }
  const double step = p0.radii()[1] - p0.radii()[0];
  const double r1 = std::max(kc[i] - step, 0.0), r2 = std::min(kc[i] + 0.4, 1.0);
  DecorrPass p2;
  p2.nr = nr;
  p2.r_min = r1;
  p2.r_max = std::min(r2, p0.r_max);
  for (double lg : linspace(std::log(g1), std::log(g2), ng)) p2.g.push_back(std::exp(lg));
  const DecorrSums s2 = engine.sums(p2);
  for (int f = 0; f < ng; ++f) out.refined.push_back(make_curve(s2, f, p2));

  // Candidates: k0, the first Ng coarse filters (getDcorr's kc(Ng + 2) is overwritten by the first refined one),
  // the refined ones, and k0 again; amplitudes below 0.05 do not count.
  std::vector<const DecorrCurve*> candidates{&out.d0};
  for (int f = 0; f < ng; ++f) candidates.push_back(&out.coarse[static_cast<std::size_t>(f)]);
  for (const DecorrCurve& c : out.refined) candidates.push_back(&c);
  for (const DecorrCurve* c : candidates)
    if (c->amplitude >= 0.05) out.kc_max = std::max(out.kc_max, c->kc);
  out.a0 = snr0;
  return out;
}

DecorrResult compute_decorr(DecorrEngine& engine, std::span<const float> image, const DecorrSettings& settings) {
  engine.upload(image);
  return analyse_uploaded(engine, settings);
}

}  // namespace nanoscopy
