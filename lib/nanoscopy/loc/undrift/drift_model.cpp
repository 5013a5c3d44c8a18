#include "nanoscopy/loc/undrift/drift_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {
namespace {

constexpr int kRobustRounds = 3;

// Second derivatives of the natural cubic spline through (t, v) (tridiagonal solve).
std::vector<double> spline_moments(std::span<const double> t, std::span<const double> v) {
  const std::size_t n = t.size();
  std::vector<double> m(n, 0.0);
  if (n < 3) return m;
  std::vector<double> diag(n, 0.0), upper(n, 0.0), rhs(n, 0.0);
  for (std::size_t i = 1; i + 1 < n; ++i) {
    const double h0 = t[i] - t[i - 1], h1 = t[i + 1] - t[i];
    diag[i] = 2.0 * (h0 + h1);
    upper[i] = h1;
    rhs[i] = 6.0 * ((v[i + 1] - v[i]) / h1 - (v[i] - v[i - 1]) / h0);
  }
  // Forward elimination over rows 1 … n−2 (m[0] = m[n−1] = 0).
  for (std::size_t i = 2; i + 1 < n; ++i) {
    const double lower = t[i] - t[i - 1];
    const double f = lower / diag[i - 1];
    diag[i] -= f * upper[i - 1];
    rhs[i] -= f * rhs[i - 1];
  }
  for (std::size_t i = n - 2; i >= 1; --i) {
    m[i] = (rhs[i] - (i + 2 < n ? upper[i] * m[i + 1] : 0.0)) / diag[i];
    if (i == 1) break;
  }
  return m;
}

}  // namespace

std::vector<double> interpolate_samples(std::span<const double> t, std::span<const double> v, std::int64_t frames) {
  if (t.size() != v.size() || t.empty()) throw UsageError("undrift", "no drift samples to interpolate");
  for (std::size_t k = 1; k < t.size(); ++k)
    if (!(t[k] > t[k - 1])) throw UsageError("undrift", "the drift samples' times do not increase");
  std::vector<double> out(static_cast<std::size_t>(std::max<std::int64_t>(frames, 0)), v[0]);
  const std::size_t n = t.size();
  if (n == 1) return out;
  const auto m = spline_moments(t, v);
  for (std::int64_t f = 0; f < frames; ++f) {
    const double x = static_cast<double>(f);
    double y = 0.0;
    if (x <= t[0] || x >= t[n - 1]) {
      // The end piece's tangent: natural ends have zero curvature, so this continues the spline smoothly.
      const bool left = x <= t[0];
      const std::size_t a = left ? 0 : n - 2, b = a + 1;
      const double h = t[b] - t[a];
      const double slope = (v[b] - v[a]) / h + (left ? -h * (2.0 * m[a] + m[b]) / 6.0 : h * (m[a] + 2.0 * m[b]) / 6.0);
      y = left ? v[0] + slope * (x - t[0]) : v[n - 1] + slope * (x - t[n - 1]);
    } else {
      const std::size_t b = static_cast<std::size_t>(std::upper_bound(t.begin(), t.end(), x) - t.begin());
      const std::size_t a = b - 1;
      const double h = t[b] - t[a], p = (t[b] - x) / h, q = (x - t[a]) / h;
      y = p * v[a] + q * v[b] + ((p * p * p - p) * m[a] + (q * q * q - q) * m[b]) * h * h / 6.0;
    }
    out[static_cast<std::size_t>(f)] = y;
  }
  return out;
}

std::vector<double> robust_smooth(std::span<const double> values, std::span<const double> weights,
                                  std::int64_t window) {
  if (values.size() != weights.size()) throw UsageError("undrift", "values and weights differ in length");
  if (window < 3) throw UsageError("--smooth", "the smoothing window must be at least 3 frames");
  const auto n = static_cast<std::int64_t>(values.size());
  const std::int64_t half = window / 2;
  const double reach = static_cast<double>(half + 1);  // tricube reaches zero just beyond the window
  std::vector<double> tricube(static_cast<std::size_t>(half + 1));
  for (std::int64_t d = 0; d <= half; ++d) {
    const double u = static_cast<double>(d) / reach;
    const double c = 1.0 - u * u * u;
    tricube[static_cast<std::size_t>(d)] = c * c * c;
  }
  std::vector<double> robust(values.size(), 1.0), fit(values.size(), std::numeric_limits<double>::quiet_NaN());
  for (int round = 0; round <= kRobustRounds; ++round) {
#pragma omp parallel for schedule(static)
    for (std::int64_t t = 0; t < n; ++t) {
      double s0 = 0, s1 = 0, s2 = 0, sy = 0, sty = 0;
      for (std::int64_t k = std::max<std::int64_t>(0, t - half); k <= std::min(n - 1, t + half); ++k) {
        const auto i = static_cast<std::size_t>(k);
        const double w = weights[i] * robust[i] * tricube[static_cast<std::size_t>(std::abs(k - t))];
        if (!(w > 0.0)) continue;
        const double d = static_cast<double>(k - t);
        s0 += w;
        s1 += w * d;
        s2 += w * d * d;
        sy += w * values[i];
        sty += w * d * values[i];
      }
      double y = std::numeric_limits<double>::quiet_NaN();
      if (s0 > 0.0) {
        const double det = s0 * s2 - s1 * s1;
        // The line's value at t (d = 0); one frame or one point's worth of data: the weighted mean.
        y = det > 1e-9 * s0 * s2 ? (s2 * sy - s1 * sty) / det : sy / s0;
      }
      fit[static_cast<std::size_t>(t)] = y;
    }
    if (round == kRobustRounds) break;
    std::vector<double> residuals;
    for (std::size_t i = 0; i < values.size(); ++i)
      if (weights[i] > 0.0 && std::isfinite(fit[i])) residuals.push_back(std::abs(values[i] - fit[i]));
    if (residuals.empty()) break;
    auto mid = residuals.begin() + static_cast<std::ptrdiff_t>(residuals.size() / 2);
    std::nth_element(residuals.begin(), mid, residuals.end());
    const double scale = 6.0 * *mid;
    if (!(scale > 0.0)) break;
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (!(weights[i] > 0.0) || !std::isfinite(fit[i])) continue;
      const double u = std::abs(values[i] - fit[i]) / scale;
      robust[i] = u < 1.0 ? (1.0 - u * u) * (1.0 - u * u) : 0.0;
    }
  }
  return fit;
}

void fill_gaps(std::vector<double>& v) {
  const auto n = static_cast<std::int64_t>(v.size());
  std::int64_t previous = -1;
  for (std::int64_t t = 0; t <= n; ++t) {
    if (t < n && !std::isfinite(v[static_cast<std::size_t>(t)])) continue;
    for (std::int64_t k = previous + 1; k < t; ++k) {
      const auto i = static_cast<std::size_t>(k);
      if (previous < 0 && t >= n) {
        v[i] = 0.0;
      } else if (previous < 0) {
        v[i] = v[static_cast<std::size_t>(t)];
      } else if (t >= n) {
        v[i] = v[static_cast<std::size_t>(previous)];
      } else {
        const double w = static_cast<double>(k - previous) / static_cast<double>(t - previous);
        v[i] = (1.0 - w) * v[static_cast<std::size_t>(previous)] + w * v[static_cast<std::size_t>(t)];
      }
    }
    previous = t;
  }
}

void zero_mean(DriftTrace& trace) {
  if (trace.frames() == 0) return;
  double mx = 0, my = 0;
  for (std::int64_t t = 0; t < trace.frames(); ++t) {
    mx += trace.dx[static_cast<std::size_t>(t)];
    my += trace.dy[static_cast<std::size_t>(t)];
  }
  mx /= static_cast<double>(trace.frames());
  my /= static_cast<double>(trace.frames());
  for (std::int64_t t = 0; t < trace.frames(); ++t) {
    trace.dx[static_cast<std::size_t>(t)] -= mx;
    trace.dy[static_cast<std::size_t>(t)] -= my;
  }
}

}  // namespace nanoscopy
