// Per-pixel SMRE math, written once for the CPU reference and the CUDA kernels
// (NANOSCOPY_HD). Arrays are one frame, row-major, `w` pixels per row.
#pragma once

#include <cmath>
#include <cstdint>

#include "nanoscopy/core/hd.hpp"

namespace nanoscopy::smre_math {

// Linearized x-step (notes/reference.md 4): x + gamma [A^T(rho1 (I - eps - A x) + u1) + rho2 (z - x) - u2],
// where `at_r` = A^T(rho1 (I - eps - A x) + u1) was computed by the caller.
NANOSCOPY_HD float x_update(float x, float at_r, float z, float u2, float gamma, float rho2) {
  return x + gamma * (at_r + rho2 * (z - x) - u2);
}

// The argument of A^T in the x-step.
NANOSCOPY_HD float data_residual_term(float image, float eps, float ax, float u1, float rho1) {
  return rho1 * (image - eps - ax) + u1;
}

// The z-step's argument v = x + u2/rho2 (the point the prox is taken at).
NANOSCOPY_HD float prox_argument(float x, float u2, float rho2) { return x + u2 / rho2; }

// The eps-step's argument I - A x + u1/rho1 (the point P_G projects), with A x
// of the new x.
NANOSCOPY_HD float projection_argument(float image, float ax, float u1, float rho1) { return image - ax + u1 / rho1; }

// The dual steps at a pixel, after the x-, z- and eps-steps:
//   r1 = I - eps - A x,  r2 = x - z,  u1 += alpha1 r1,  u2 += alpha2 r2.
// Returns both residuals for the iteration's statistics (c1, c2).
struct DualResiduals {
  float r1, r2;
};

NANOSCOPY_HD DualResiduals dual_update(float image, float eps, float ax, float x, float z, float alpha1, float alpha2,
                                       float& u1, float& u2) {
  const float r1 = image - eps - ax;
  const float r2 = x - z;
  u1 += alpha1 * r1;
  u2 += alpha2 * r2;
  return {r1, r2};
}

// A float difference squared in double: the per-pixel term of the statistics
// (step, c1, c2), summed in double by both engines.
NANOSCOPY_HD double squared(float d) {
  const double v = d;
  return v * v;
}

// z-step for R = lambda |z|^2/2: argmin lambda z^2/2 + rho2/2 (z - v)^2 with v = x + u2/rho2.
NANOSCOPY_HD float prox_l2(float v, float lambda, float rho2) { return rho2 * v / (rho2 + lambda); }

// z-step for R = lambda |z|_1: soft threshold at lambda/rho2.
NANOSCOPY_HD float prox_l1(float v, float lambda, float rho2) {
  const float t = lambda / rho2;
  return v > t ? v - t : (v < -t ? v + t : 0.0f);
}

// Isotropic TV prox by Chambolle's dual projection (J. Math. Imaging Vis. 20, 2004):
// z = v - theta div p, with p updated by
//   p <- (p + tau grad(div p - v/theta)) / (1 + tau |grad(div p - v/theta)|),   tau = 1/8.
// grad is the forward difference with zero at the last row/column (Neumann);
// div = -grad^T, so the prox is exact in the limit of many iterations.
struct TvGrad {
  float gx, gy;
};

NANOSCOPY_HD float tv_divergence(const float* px, const float* py, std::int64_t w, std::int64_t h, std::int64_t x,
                                 std::int64_t y) {
  const std::int64_t i = y * w + x;
  float d = 0.0f;
  if (x < w - 1) d += px[i];
  if (x > 0) d -= px[i - 1];
  if (y < h - 1) d += py[i];
  if (y > 0) d -= py[i - w];
  return d;
}

// Forward-difference gradient of the field f (one frame) at (x, y).
NANOSCOPY_HD TvGrad tv_gradient(const float* f, std::int64_t w, std::int64_t h, std::int64_t x, std::int64_t y) {
  const std::int64_t i = y * w + x;
  TvGrad g{0.0f, 0.0f};
  if (x < w - 1) g.gx = f[i + 1] - f[i];
  if (y < h - 1) g.gy = f[i + w] - f[i];
  return g;
}

// One dual update at a pixel, given grad(div p - v/theta) there.
NANOSCOPY_HD void tv_dual_update(float& px, float& py, TvGrad g) {
  const float tau = 0.125f;
  const float norm = 1.0f + tau * sqrtf(g.gx * g.gx + g.gy * g.gy);
  px = (px + tau * g.gx) / norm;
  py = (py + tau * g.gy) / norm;
}

// Chambolle's d = div p - v/theta at (x, y): the field whose gradient the dual update takes
// (both engines keep it in z between the dual updates).
NANOSCOPY_HD float tv_dual_argument(const float* px, const float* py, std::int64_t w, std::int64_t h, std::int64_t x,
                                    std::int64_t y, float v, float theta) {
  return tv_divergence(px, py, w, h, x, y) - v / theta;
}

// The TV prox after the dual iterations: z = v - theta div p at (x, y) (theta > 0).
NANOSCOPY_HD float tv_primal(const float* px, const float* py, std::int64_t w, std::int64_t h, std::int64_t x,
                             std::int64_t y, float v, float theta) {
  return v - theta * tv_divergence(px, py, w, h, x, y);
}

// Projection of a square's residual onto {c sum eps^2 <= sigma^2} (eq. 14 with the
// noise sigma, decision 1): the factor that multiplies every eps of the square.
NANOSCOPY_HD float projection_scale(float sum_sq, float c, float sigma2) {
  const float t = c * sum_sq;
  return t > sigma2 ? sqrtf(sigma2 / t) : 1.0f;
}

// One Dykstra step at a pixel of a square whose projection factor is f
// (projection_scale), with y = eps - q the pixel's residual minus its memory:
// eps = f y, and the square's new memory q = eps - y. On the GPU the
// subtraction is kept apart from the product (no fused multiply-add), so q is
// rounded as on the CPU.
struct DykstraPixel {
  float eps, q;
};

NANOSCOPY_HD DykstraPixel dykstra_pixel(float y, float f) {
  const float e = f * y;
#if defined(__CUDA_ARCH__)
  return {e, __fsub_rn(e, y)};
#else
  return {e, e - y};
#endif
}

// Anscombe transform for Poisson data and the Makitalo-Foi closed-form
// approximation of its exact unbiased inverse (decision 6).
NANOSCOPY_HD double anscombe_forward(double x) { return 2.0 * sqrt(x + 0.375); }
NANOSCOPY_HD double anscombe_inverse(double y) {
  // E[2 sqrt(0 + 3/8)] = sqrt(3/2) is the smallest value the forward transform of
  // Poisson data can average to; the formula is exactly 0 there and not monotone below.
  if (y <= 1.2247448713915890) return 0.0;
  const double s = sqrt(1.5);
  const double iy = 1.0 / y;
  return 0.25 * y * y - 0.125 + 0.25 * s * iy - 1.375 * iy * iy + 0.625 * s * iy * iy * iy;
}

}  // namespace nanoscopy::smre_math
