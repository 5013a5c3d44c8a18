// The implicit-amplitude least-squares estimator (Leutenegger & Weber, eqs.
// 5–9 and 13): the model h = α·f(p) + β takes α and β in closed form at every
// evaluation, so LM runs on the N shape parameters p only. From a model's
// pixel sums (Sums<N>) it forms α̂, β̂, the raw χ², JᵀJ and Jᵀ(g − h) with the
// dependence of α̂, β̂ on p included (eq. 8) — the Evaluation<N> the LM driver
// (lm.hpp) consumes.
//
// Estimators are a second axis beside the models: a maximum-likelihood
// (Poisson) estimator would be estimators/mle.hpp, taking its own per-pixel
// sums and filling the same Evaluation<N>; today lsq is the only one.
#pragma once

#include "nanoscopy/core/hd.hpp"
#include "nanoscopy/fit/real.hpp"

namespace nanoscopy::fit_detail {

// Entries of the upper triangle of a symmetric N×N matrix, row by row
// (00 01 … 0N−1 11 12 …), and the index of (j, k), j ≤ k.
constexpr int triangle(int n) {
  return n * (n + 1) / 2;
}
NANOSCOPY_HD constexpr int tri_index(int n, int j, int k) {
  return j * n - j * (j - 1) / 2 + (k - j);
}

// Σ over the ROI of the products the closed forms need (paper eqs. 5 and 7):
// f, f², f·g, ∂_j f, f·∂_j f, g·∂_j f and ∂_j f·∂_k f (j ≤ k, triangle order).
template <class T, int N>
struct Sums {
  T f, ff, fg;
  T d[N], fd[N], gd[N];
  T dd[triangle(N)];
};

// Per-ROI constants: n pixels, g = Σg, gg = Σg².
template <class T>
struct RoiConstants {
  T n, g, gg;
};

// The model at one parameter point: α̂, β̂ (eq. 6), the raw χ², JᵀJ (upper
// triangle) and Jᵀ(g − h), with J the Jacobian of h_i = α̂(p)·f_i(p) + β̂(p).
template <class T, int N>
struct Evaluation {
  T chi2, alpha, beta;
  T h[triangle(N)];
  T grad[N];
};

// Whether an evaluator replaces lsq_assemble's χ² by Σ(g − α̂f − β̂)² over the
// pixels (one more pass). In float the closed form Σg² − α̂·Σfg − β̂·Σg cancels
// catastrophically (bright spots: terms ~1e5–1e7 for a χ² ~1e3, float's 6e-8
// relative rounding then leaves errors far above the stop rule's 1e-6·χ²); the
// residual sum is accurate to a few float ulps. In double the closed form is
// kept (the reference's results are those before issue 17).
template <class T>
inline constexpr bool kResidualChi2 = sizeof(T) < sizeof(double);

// Closed forms from the sums. False when they are undefined (f ≡ const, e.g.
// all f underflowed) or not finite.
template <class T, int N>
NANOSCOPY_HD bool lsq_assemble(const Sums<T, N>& s, const RoiConstants<T>& k, Evaluation<T, N>& e) {
  using real = T;
  const real n = k.n, G = k.g;
  const real D = n * s.ff - s.f * s.f;
  if (!(D > Limits<T>::tiny) || !finite(D)) return false;
  const real inv_d = real(1) / D;
  const real alpha = (n * s.fg - s.f * G) * inv_d;
  const real beta = (G * s.ff - s.f * s.fg) * inv_d;
  real a[N], b[N];  // ∂α̂/∂p_j, ∂β̂/∂p_j
  for (int j = 0; j < N; ++j) {
    const real dF = s.d[j];
    const real dFF = real(2) * s.fd[j];
    const real dFG = s.gd[j];
    const real gamma = n * dFF - real(2) * s.f * dF;
    a[j] = (n * dFG - G * dF - alpha * gamma) * inv_d;
    b[j] = (G * dFF - s.fg * dF - s.f * dFG - beta * gamma) * inv_d;
  }
  // Residual r = g − h: Σ f·r and Σ r vanish at α̂, β̂ up to rounding; kept for exactness.
  const real sum_fr = s.fg - alpha * s.ff - beta * s.f;
  const real sum_r = G - alpha * s.f - beta * n;
  bool ok = true;
  for (int j = 0; j < N; ++j) {
    const real sum_dr = s.gd[j] - alpha * s.fd[j] - beta * s.d[j];
    e.grad[j] = a[j] * sum_fr + alpha * sum_dr + b[j] * sum_r;
    ok = ok && finite(e.grad[j]);
  }
  // J_ij = a_j f_i + α ∂_j f_i + b_j, so (JᵀJ)_jk expands into the sums.
  int idx = 0;
  for (int j = 0; j < N; ++j) {
    for (int m = j; m < N; ++m, ++idx) {
      e.h[idx] = a[j] * a[m] * s.ff + alpha * (a[j] * s.fd[m] + a[m] * s.fd[j]) + (a[j] * b[m] + a[m] * b[j]) * s.f +
                 alpha * alpha * s.dd[idx] + alpha * (b[m] * s.d[j] + b[j] * s.d[m]) + b[j] * b[m] * n;
    }
    ok = ok && finite(e.h[tri_index(N, j, j)]);
  }
  // χ² = Σ(g − αf − β)² = Σg² − α·Σfg − β·Σg at the optimal α, β.
  real chi2 = k.gg - alpha * s.fg - beta * G;
  if (chi2 < real(0)) chi2 = 0;
  e.chi2 = chi2;
  e.alpha = alpha;
  e.beta = beta;
  return ok && finite(alpha) && finite(beta) && finite(chi2);
}

}  // namespace nanoscopy::fit_detail
