#include "nanoscopy/bench/crb.hpp"

#include <cmath>
#include <limits>

namespace nanoscopy {
namespace {

constexpr int kP = 5;
using Matrix = std::array<std::array<double, kP>, kP>;

// Inverse by Gauss–Jordan with partial pivoting; NaN matrix when singular.
Matrix invert(Matrix a) {
  Matrix inv{};
  for (int i = 0; i < kP; ++i) inv[i][i] = 1;
  for (int c = 0; c < kP; ++c) {
    int pivot = c;
    for (int r = c + 1; r < kP; ++r)
      if (std::abs(a[r][c]) > std::abs(a[pivot][c])) pivot = r;
    if (std::abs(a[pivot][c]) < 1e-300) {
      for (auto& row : inv) row.fill(std::numeric_limits<double>::quiet_NaN());
      return inv;
    }
    std::swap(a[c], a[pivot]);
    std::swap(inv[c], inv[pivot]);
    const double d = a[c][c];
    for (int k = 0; k < kP; ++k) {
      a[c][k] /= d;
      inv[c][k] /= d;
    }
    for (int r = 0; r < kP; ++r) {
      if (r == c) continue;
      const double f = a[r][c];
      for (int k = 0; k < kP; ++k) {
        a[r][k] -= f * a[c][k];
        inv[r][k] -= f * inv[c][k];
      }
    }
  }
  return inv;
}

}  // namespace

SpotCrb spot_crb(int width, int height, double x, double y, double sigma, double alpha, double beta) {
  Matrix fisher{};
  const double s2 = sigma * sigma;
  for (int r = 0; r < height; ++r) {
    for (int c = 0; c < width; ++c) {
      const double dx = c - x, dy = r - y;
      const double f = std::exp(-(dx * dx + dy * dy) / (2 * s2));
      const double mu = alpha * f + beta;
      const double v = mu + 1.0 / 12.0;
      const std::array<double, kP> d = {alpha * f * dx / s2, alpha * f * dy / s2,
                                       alpha * f * (dx * dx + dy * dy) / (s2 * sigma), f, 1.0};
      // Gaussian with mean μ(θ) and variance v(θ), dv/dθ = dμ/dθ.
      const double w = 1.0 / v + 1.0 / (2.0 * v * v);
      for (int j = 0; j < kP; ++j)
        for (int k = 0; k < kP; ++k) fisher[j][k] += w * d[j] * d[k];
    }
  }
  const Matrix inv = invert(fisher);
  return {std::sqrt(inv[0][0]), std::sqrt(inv[1][1]), std::sqrt(inv[2][2])};
}

}  // namespace nanoscopy
