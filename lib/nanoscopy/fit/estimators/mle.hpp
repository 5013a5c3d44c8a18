// The per-pixel estimators: Poisson maximum likelihood (mle) and weighted least
// squares (wlsq), written once for the CPU loop and the CUDA kernel, templated
// on the scalar T and sized by the model's N shape parameters.
//
// Parameters θ = (p_0 … p_{N−1}, α, β): the model's shape parameters, then the
// amplitude α and the background β as free parameters. (The implicit-amplitude
// closed form of lsq.hpp is a property of least squares: with a Poisson or a
// weighted objective α̂(p), β̂(p) have no closed form.) What carries over from
// lsq: the separable per-axis terms (each pixel's f and ∂f/∂p come from its
// column and row terms, M::pixel), the paper's initial estimate of p, and lsq's
// closed-form α̂, β̂ at that estimate as the starting point of α, β
// (pixel_start). The LM driver (lm.hpp) runs on all N + 2 parameters.
//
// Per pixel i, with the data g_i in photons and the sCMOS variance shift
// s_i = var_i/gain_i² (0 for other cameras; core/camera_maps.hpp):
//   μ_i = α·f_i + β + s_i,   g'_i = g_i + s_i,   ∂μ/∂θ = (α·∂f/∂p, f, 1).
// mle (Laurence & Chromy, Nat. Methods 7, 338, 2010; as Gpufit's MLE):
//   D = 2Σ[μ − g' − g'·ln(μ/g')] (the g'·ln g' term is 0 at g' = 0; g' < 0, left by a
//       baseline subtracted from read noise, counts as 0),
//   grad = Σ (g'/μ − 1)·∂μ  (= −½∇D, the Jᵀ(g − h) convention of lsq),
//   H = Σ (g'/μ²)·∂μ∂μᵀ,
//   and a μ ≤ 0 anywhere makes the evaluation undefined (the LM step is rejected).
// wlsq: w = 1/max(g', 1), χ²_w = Σ w(g' − μ)², grad = Σ w(g' − μ)·∂μ, H = Σ w·∂μ∂μᵀ.
// D and χ²_w go into Evaluation::chi2, so the LM stop rules work unchanged.
//
// At the estimate both report the Cramér–Rao bound from the Poisson Fisher
// information I = Σ (1/μ)·∂μ∂μᵀ (its inverse's diagonal, by the LDLᵀ solve of
// lm.hpp) and Picasso's log-likelihood (gaussmle.py: the Poisson
// log-likelihood ratio to the saturated model, Stirling's approximation):
// Σ[g'·ln μ − μ − g'·ln g' + g'] (−μ where g' ≤ 0), summed over the box in photons.
#pragma once

#include <math.h>

#include "nanoscopy/core/hd.hpp"
#include "nanoscopy/fit/estimators/lsq.hpp"
#include "nanoscopy/fit/fit_types.hpp"
#include "nanoscopy/fit/lm.hpp"
#include "nanoscopy/fit/real.hpp"

namespace nanoscopy::fit_detail {

// The estimator's parameter count for a model of N shape parameters.
template <int N>
inline constexpr int kPixelParams = N + 2;

template <class T, int P>
NANOSCOPY_HD void clear_evaluation(Evaluation<T, P>& e) {
  e.chi2 = e.alpha = e.beta = 0;
  NANOSCOPY_FIT_UNROLL
  for (int j = 0; j < triangle(P); ++j) e.h[j] = 0;
  NANOSCOPY_FIT_UNROLL
  for (int j = 0; j < P; ++j) e.grad[j] = 0;
}

// ∂μ/∂θ = (α·∂f/∂p_0 … α·∂f/∂p_{N−1}, f, 1) at one pixel.
template <class T, int N>
NANOSCOPY_HD void mu_derivatives(T f, const T df[N], T alpha, T d[N + 2]) {
  NANOSCOPY_FIT_UNROLL
  for (int j = 0; j < N; ++j) d[j] = alpha * df[j];
  d[N] = f;
  d[N + 1] = T(1);
}

// Adds w·d·dᵀ to the upper triangle h and c·d to grad.
template <class T, int P>
NANOSCOPY_HD void add_outer(T h[triangle(P)], T grad[P], T w, T c, const T d[P]) {
  int idx = 0;
  NANOSCOPY_FIT_UNROLL
  for (int j = 0; j < P; ++j) {
    grad[j] += c * d[j];
    const T wd = w * d[j];
    NANOSCOPY_FIT_UNROLL
    for (int k = j; k < P; ++k, ++idx) h[idx] += wd * d[k];
  }
}

struct Mle {
  static constexpr Estimator kind = Estimator::mle;
  static constexpr const char* name = "mle";
  // One pixel of shifted data gs = g + s and model mu = α·f + β + s; false when μ ≤ 0.
  template <class T, int P>
  NANOSCOPY_HD static bool add(Evaluation<T, P>& e, T gs, T mu, const T d[P]) {
    if (!(mu > T(0))) return false;
    const T gp = gs > T(0) ? gs : T(0);
    const T ratio = gp / mu;
    e.chi2 += T(2) * (mu - gp) + (gp > T(0) ? T(2) * gp * log(ratio) : T(0));
    add_outer<T, P>(e.h, e.grad, ratio / mu, ratio - T(1), d);
    return true;
  }
};

struct Wlsq {
  static constexpr Estimator kind = Estimator::wlsq;
  static constexpr const char* name = "wlsq";
  template <class T, int P>
  NANOSCOPY_HD static bool add(Evaluation<T, P>& e, T gs, T mu, const T d[P]) {
    const T w = T(1) / (gs > T(1) ? gs : T(1));
    const T res = gs - mu;
    e.chi2 += w * res * res;
    add_outer<T, P>(e.h, e.grad, w, w * res, d);
    return true;
  }
};

// After the pixel sums: α, β from θ, and whether everything is finite.
template <class T, int P>
NANOSCOPY_HD bool pixel_finish(Evaluation<T, P>& e, const T theta[P]) {
  e.alpha = theta[P - 2];
  e.beta = theta[P - 1];
  bool ok = finite(e.chi2);
  NANOSCOPY_FIT_UNROLL
  for (int j = 0; j < P; ++j) ok = ok && finite(e.grad[j]) && finite(e.h[tri_index(P, j, j)]);
  return ok;
}

// The start of α, β: lsq's closed form α̂, β̂ at the initial shape (when it was
// defined), kept where μ > 0 holds: α > 0 (else the ROI's range max − min) and
// β ≥ 0.01 photons.
template <class T>
NANOSCOPY_HD void pixel_start(bool have_closed_form, T alpha_hat, T beta_hat, T range, T& alpha, T& beta) {
  alpha = have_closed_form && alpha_hat > T(0) && finite(alpha_hat) ? alpha_hat : range;
  beta = have_closed_form && beta_hat > T(0.01) && finite(beta_hat) ? beta_hat : T(0.01);
}

// The Fisher information and log-likelihood sums at the estimate.
template <class T, int P>
struct FisherSums {
  T info[triangle(P)];
  T log_likelihood;
  bool ok;
};

template <class T, int P>
NANOSCOPY_HD void clear_fisher(FisherSums<T, P>& s) {
  NANOSCOPY_FIT_UNROLL
  for (int j = 0; j < triangle(P); ++j) s.info[j] = 0;
  s.log_likelihood = 0;
  s.ok = true;
}

template <class T, int P>
NANOSCOPY_HD void add_fisher(FisherSums<T, P>& s, T gs, T mu, const T d[P]) {
  if (!(mu > T(0))) {
    s.ok = false;
    return;
  }
  // Picasso's log-likelihood ratio to the saturated model (Stirling's ln Γ(g' + 1) ≈
  // g'·ln g' − g'): g'·ln μ − μ − g'·ln g' + g', and −μ where g' ≤ 0.
  s.log_likelihood += gs > T(0) ? gs * log(mu / gs) - mu + gs : -mu;
  T unused[P];
  add_outer<T, P>(s.info, unused, T(1) / mu, T(0), d);
}

// CRLB standard deviations from the Fisher information, into `out`: x̄ (θ_0),
// ȳ (θ_1), the widths σ or σx, σy (θ_2, θ_3) of the 2D models, z (θ_ZIndex) of
// a 3D model, β (θ_{P−1}) and the spot's photons (α, θ_{P−2}, itself for the
// integrated models; α·2πσ² for the sampled one, PeakAmplitude, whose bound
// takes the covariance of α and σ: ∇ᵀI⁻¹∇ with ∇ = (0, 0, 4πσα, 2πσ², 0)).
// Each is one LDLᵀ solve of lm.hpp (λ = 0) with the quantity's gradient as the
// right-hand side; NaN where I is not positive definite. And the log-likelihood.
// `magnitude`: θ's sizes (parameter_magnitudes), so that the solve judges
// negligible information per relative change as the fit does: I_αα/I_xx is
// ~1e-7 for a bright spot, and a plain float test would hold α fixed and
// report a CRLB of x̄ up to 12 % too small (measured against double).
template <class T, int P, int ZIndex = -1, bool PeakAmplitude = false>
NANOSCOPY_HD void fisher_to_result(const FisherSums<T, P>& s, const T theta[P], const T magnitude[P], FitResult& out) {
  constexpr int N = P - 2;
  constexpr int widths = ZIndex >= 0 ? 0 : N - 2;  // σ (round), σx and σy (elliptical), none (3D)
  // Quantities: x, y, β, photons, then z or the widths.
  constexpr int count = 4 + (ZIndex >= 0 ? 1 : widths);
  float sd[6];
  for (int k = 0; k < count; ++k) {
    sd[k] = nan_float();
    if (!s.ok) continue;
    T grad[P], col[P];
    NANOSCOPY_FIT_UNROLL
    for (int j = 0; j < P; ++j) grad[j] = T(0);
    if (k == 0) grad[0] = T(1);
    if (k == 1) grad[1] = T(1);
    if (k == 2) grad[N + 1] = T(1);
    if (k == 3) {
      if constexpr (PeakAmplitude) {
        constexpr T two_pi = T(6.283185307179586);
        grad[2] = T(2) * two_pi * theta[2] * theta[N];
        grad[N] = two_pi * theta[2] * theta[2];
      } else {
        grad[N] = T(1);
      }
    }
    if (k >= 4) grad[ZIndex >= 0 ? ZIndex : k - 2] = T(1);
    if (!solve_damped<P, T>(s.info, grad, T(0), col, magnitude)) continue;
    T variance = 0;
    NANOSCOPY_FIT_UNROLL
    for (int j = 0; j < P; ++j) variance += grad[j] * col[j];
    if (variance > T(0)) sd[k] = static_cast<float>(sqrt(variance));
  }
  out.crlb_x = sd[0];
  out.crlb_y = sd[1];
  out.crlb_background = sd[2];
  out.crlb_photons = sd[3];
  if constexpr (ZIndex >= 0) {
    out.crlb_z = sd[4];
  } else {
    out.crlb_sigma = sd[4];
    out.crlb_sigma_y = widths == 2 ? sd[5] : sd[4];
  }
  out.log_likelihood = s.ok && finite_float(s.log_likelihood) ? static_cast<float>(s.log_likelihood) : nan_float();
}


// A 3D model's CRLB after an lsq fit (lsq has no likelihood of its own, but the
// bound is the data's, not the estimator's, and the z column needs it), shared
// by the CPU engine and the kernel: θ = (x, y, z, α, β) in photons at the
// result (photons = (value − offset)·scale); false when the result has none.
template <class M, class T>
NANOSCOPY_HD bool lsq_result_theta(const FitResult& r, T offset, T scale, T theta[kPixelParams<M::n_params>]) {
  constexpr int N = M::n_params;
  static_assert(N == 3, "θ is rebuilt from (x, y, z)");
  if (!(r.status != FitStatus::invalid_roi && finite_float(r.amplitude) && finite_float(r.background))) return false;
  theta[0] = r.x;
  theta[1] = r.y;
  theta[M::z_param] = r.z;
  theta[N] = static_cast<T>(r.amplitude) * scale;
  theta[N + 1] = (static_cast<T>(r.background) - offset) * scale;
  return true;
}

// The bounds of `bound` (a per-pixel evaluator's finish at that θ) into the lsq
// result `r`, the photons' and β's back in the pixel units of `scale`; the log-likelihood stays NaN.
template <class T>
NANOSCOPY_HD void take_lsq_crlb(const FitResult& bound, T scale, FitResult& r) {
  r.crlb_x = bound.crlb_x;
  r.crlb_y = bound.crlb_y;
  r.crlb_z = bound.crlb_z;
  r.crlb_photons = static_cast<float>(static_cast<T>(bound.crlb_photons) / scale);
  r.crlb_background = static_cast<float>(static_cast<T>(bound.crlb_background) / scale);
}

}  // namespace nanoscopy::fit_detail
