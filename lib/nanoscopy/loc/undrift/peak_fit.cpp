#include "nanoscopy/loc/undrift/peak_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace nanoscopy {
namespace {

constexpr int kTerms = 6;  // 1, u, v, u², uv, v²

// Solves the k x k system in place (Gaussian elimination, partial pivoting); false when singular.
bool solve(std::array<std::array<double, kTerms + 1>, kTerms>& m) {
  for (int c = 0; c < kTerms; ++c) {
    int pivot = c;
    for (int r = c + 1; r < kTerms; ++r)
      if (std::abs(m[r][c]) > std::abs(m[pivot][c])) pivot = r;
    if (!(std::abs(m[pivot][c]) > 1e-300)) return false;
    std::swap(m[c], m[pivot]);
    for (int r = 0; r < kTerms; ++r) {
      if (r == c) continue;
      const double f = m[r][c] / m[c][c];
      for (int k = c; k <= kTerms; ++k) m[r][k] -= f * m[c][k];
    }
  }
  for (int c = 0; c < kTerms; ++c) m[c][kTerms] /= m[c][c];
  return true;
}

// Three points f(−1), f(0), f(1): the vertex of their parabola, in [−1, 1].
double parabola(double a, double b, double c) {
  const double den = a - 2.0 * b + c;
  if (!(den < 0.0)) return 0.0;
  return std::clamp(0.5 * (a - c) / den, -1.0, 1.0);
}

}  // namespace

SubpixelShift fit_correlation_peak(const CorrelationPeak& peak) {
  SubpixelShift s;
  if (!peak.found) return s;
  s.ok = true;
  s.x = static_cast<double>(peak.shift_x);
  s.y = static_cast<double>(peak.shift_y);
  const int r = CorrelationPeak::radius;
  const double top = peak.at(0, 0);
  std::array<std::array<double, kTerms + 1>, kTerms> m{};
  int used = 0;
  for (int v = -r; v <= r; ++v)
    for (int u = -r; u <= r; ++u) {
      const double f = peak.at(u, v);
      if (!(f > 1e-6 * top)) continue;  // zero or round-off: no log
      const double w = f * f, l = std::log(f);
      const std::array<double, kTerms> t{1.0, double(u), double(v), double(u * u), double(u * v), double(v * v)};
      for (int a = 0; a < kTerms; ++a) {
        for (int b = 0; b < kTerms; ++b) m[a][b] += w * t[a] * t[b];
        m[a][kTerms] += w * t[a] * l;
      }
      ++used;
    }
  if (used >= 9 && solve(m)) {
    const double bx = m[1][kTerms], by = m[2][kTerms], dxx = m[3][kTerms], dxy = m[4][kTerms], dyy = m[5][kTerms];
    // Maximum of b·p + pᵀ H p / 2 with H = [[2 dxx, dxy], [dxy, 2 dyy]]: negative definite needed.
    const double det = 4.0 * dxx * dyy - dxy * dxy;
    if (dxx < 0.0 && det > 0.0) {
      const double ux = (-2.0 * dyy * bx + dxy * by) / det, uy = (dxy * bx - 2.0 * dxx * by) / det;
      if (std::abs(ux) <= 1.0 && std::abs(uy) <= 1.0) {
        s.x += ux;
        s.y += uy;
        return s;
      }
    }
  }
  s.x += parabola(peak.at(-1, 0), top, peak.at(1, 0));
  s.y += parabola(peak.at(0, -1), top, peak.at(0, 1));
  return s;
}

}  // namespace nanoscopy
