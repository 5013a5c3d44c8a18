// The Levenberg–Marquardt driver and its damped solve (paper eqs. 12, 14),
// written once for the CPU loop and the CUDA kernel and sized by the model's
// parameter count N at compile time (everything on the stack, loops unrolled).
#pragma once

#include <math.h>

#include "nanoscopy/core/hd.hpp"
#include "nanoscopy/fit/estimators/lsq.hpp"
#include "nanoscopy/fit/fit_types.hpp"
#include "nanoscopy/fit/real.hpp"

// Loops over N in device code must unroll, or the small arrays spill to local memory.
#if defined(__CUDA_ARCH__)
#define NANOSCOPY_FIT_UNROLL _Pragma("unroll")
#else
#define NANOSCOPY_FIT_UNROLL
#endif

namespace nanoscopy::fit_detail {

// Solves (JᵀJ + λ·diag(JᵀJ))·δ = Jᵀ(g − h) (eq. 14), JᵀJ given as its upper
// triangle. Jacobi scaling S = diag(JᵀJ + λ·diag)^(−½) gives B = S·A·S a unit
// diagonal and a well conditioned LDLᵀ solve. Parameters whose diagonal is
// negligible (e.g. x̄ of a one-pixel-wide ROI, which α̂ absorbs) are held
// fixed: their scale is 0, so their row and column of B become the identity
// and their δ is 0. False when B is not positive definite (a pivot ≤ 0, or a
// determinant ≤ 1e-300) or δ is not finite.
//
// `magnitude` (optional): each parameter's typical size m_j. "Negligible" is
// then judged on h_jj·m_j², the information per relative change, so that
// parameters of very different units (the per-pixel estimators' α in photons
// beside x̄ in px: h_αα/h_xx ~ 1e-7 for a 1500-photon spot) are not mistaken
// for ones α̂ absorbs. Without it (lsq) the diagonal is compared as it is.
template <int N, class T>
NANOSCOPY_HD bool solve_damped(const T h[triangle(N)], const T grad[N], T lambda, T delta[N],
                               const T* magnitude = nullptr) {
  using real = T;
  real info[N];  // h_jj, or h_jj·m_j²
  NANOSCOPY_FIT_UNROLL
  for (int j = 0; j < N; ++j)
    info[j] = magnitude ? h[tri_index(N, j, j)] * magnitude[j] * magnitude[j] : h[tri_index(N, j, j)];
  real maxd = 0;
  NANOSCOPY_FIT_UNROLL
  for (int j = 0; j < N; ++j) maxd = fmax(maxd, info[j]);
  NANOSCOPY_FIT_UNROLL
  for (int j = 0; j < N; ++j) delta[j] = 0;
  if (!(maxd > real(0))) return true;  // flat in every direction: no step
  real scale[N];
  NANOSCOPY_FIT_UNROLL
  for (int j = 0; j < N; ++j) {
    const real hjj = h[tri_index(N, j, j)];
    scale[j] = info[j] > Limits<T>::negligible * maxd ? real(1) / sqrt(hjj * (real(1) + lambda)) : real(0);
  }
  // B = L·D·Lᵀ, L unit lower triangular (row i, column k < i), D the pivots.
  real L[N][N], piv[N];
  real det = 1;
  NANOSCOPY_FIT_UNROLL
  for (int i = 0; i < N; ++i) {
    real d = 1;  // B_ii
    NANOSCOPY_FIT_UNROLL
    for (int k = 0; k < i; ++k) {
      real b = h[tri_index(N, k, i)] * scale[k] * scale[i];  // B_ik
      NANOSCOPY_FIT_UNROLL
      for (int m = 0; m < k; ++m) b -= L[i][m] * L[k][m] * piv[m];
      L[i][k] = b / piv[k];
      d -= L[i][k] * b;
    }
    if (!(d > real(0))) return false;
    piv[i] = d;
    det *= d;
  }
  if (!(det > Limits<T>::tiny) || !finite(det)) return false;
  // Forward (L·y = S·grad), pivots, backward (Lᵀ·x = D⁻¹·y); δ = S·x.
  real x[N];
  NANOSCOPY_FIT_UNROLL
  for (int i = 0; i < N; ++i) {
    real y = grad[i] * scale[i];
    NANOSCOPY_FIT_UNROLL
    for (int k = 0; k < i; ++k) y -= L[i][k] * x[k];
    x[i] = y;
  }
  NANOSCOPY_FIT_UNROLL
  for (int i = 0; i < N; ++i) x[i] /= piv[i];
  bool ok = true;
  NANOSCOPY_FIT_UNROLL
  for (int i = N - 1; i >= 0; --i) {
    NANOSCOPY_FIT_UNROLL
    for (int k = i + 1; k < N; ++k) x[i] -= L[k][i] * x[k];
    delta[i] = x[i] * scale[i];
    ok = ok && finite(delta[i]);
  }
  return ok;
}

// Whether a model's α is the peak height (the sampled Gaussian) rather than the spot's integrated counts.
template <class M>
constexpr bool peak_amplitude() {
  if constexpr (requires { M::peak_amplitude; })
    return M::peak_amplitude;
  else
    return false;
}

// The index of z in a model's parameters, −1 for a 2D model.
template <class M>
constexpr int z_index() {
  if constexpr (requires { M::z_param; })
    return M::z_param;
  else
    return -1;
}

// A parameter's natural unit, for solve_damped's magnitudes: 1 (px, photons),
// or what the model says (the astigmatic model's z: the depth of focus in nm).
template <class T, class M>
NANOSCOPY_HD T param_unit(const M& model, int j) {
  if constexpr (requires { model.template unit<T>(j); })
    return model.template unit<T>(j);
  else
    return T(1);
}

// Each parameter's size for solve_damped's per-relative-change test: max(|θ_j|, its unit).
template <class T, int N, class M>
NANOSCOPY_HD void parameter_magnitudes(const M& model, const T theta[N], T magnitude[N]) {
  NANOSCOPY_FIT_UNROLL
  for (int j = 0; j < N; ++j) magnitude[j] = fmax(fabs(theta[j]), param_unit<T>(model, j));
}

NANOSCOPY_HD float nan_float() {
  return nanf("");
}

NANOSCOPY_HD FitResult invalid_result() {
  FitResult r;
  r.x = r.y = r.sigma = r.sigma_y = r.amplitude = r.background = r.chi2 = nan_float();
  r.crlb_x = r.crlb_y = r.log_likelihood = nan_float();
  r.crlb_background = r.crlb_photons = r.crlb_sigma = r.crlb_sigma_y = nan_float();
  r.z = r.crlb_z = nan_float();
  r.iterations = 0;
  r.status = FitStatus::invalid_roi;
  return r;
}

// Levenberg–Marquardt on the P parameters of an estimator for model M from
// `start`: P = M::n_params for lsq (α, β in closed form), M::n_params + 2 for
// the per-pixel estimators (estimators/mle.hpp: θ = (p, α, β)). The model's
// checks (outside_roi, admissible, to_result) read the first M::n_params; they
// are called on `model`, which carries a model's per-batch constants (the
// astigmatic curves) and is empty for the others.
// `eval(p, e)` fills the Evaluation<P> at p (an estimator's output) and
// returns false when it is undefined. An evaluator with finish(p, out) fills
// the CRLB and log-likelihood fields at the estimate; otherwise they are NaN.
// `n` = pixels.
//
// Each iteration solves the damped system; a step that lowers χ² is taken and
// λ ÷ 10, otherwise λ × 10 and the step is solved again. Stops: χ² < max_error;
// after a taken step, the parameters out of the ROI (M::outside_roi: left_roi),
// all |Δp_j| < min_step·max(|p_j|, 1) (converged_min_step), χ² decrease <
// min_delta·χ² (converged_min_delta); a tiny step that does not lower χ² means
// the minimum is reached (converged_min_step); λ > lambda_max (not_converged);
// steps M::admissible rejects (σ ≤ 0) count as failed steps. A result that
// does not fit in float is reported as nan. χ² per degree of freedom divides
// by n − (N + 2): the shape parameters, α and β.
template <class M, int N = M::n_params, class T, class Eval>
NANOSCOPY_HD FitResult lm_fit(const M& model, Eval& eval, const T start[N], int w, int hgt, int n,
                              const FitLimits<T>& st) {
  using real = T;
  constexpr int fitted = M::n_params + 2;
  FitResult out;
  out.crlb_x = out.crlb_y = out.log_likelihood = nan_float();
  out.crlb_background = out.crlb_photons = out.crlb_sigma = out.crlb_sigma_y = nan_float();
  out.crlb_z = nan_float();
  real p[N];
  bool start_finite = true;
  NANOSCOPY_FIT_UNROLL
  for (int j = 0; j < N; ++j) {
    p[j] = start[j];
    start_finite = start_finite && finite(p[j]);
  }
  const real dof = n > fitted ? real(n - fitted) : real(1);
  if (!start_finite) {
    out = invalid_result();
    out.status = FitStatus::nan;
    return out;
  }
  Evaluation<T, N> cur;
  FitStatus status = FitStatus::max_iterations;
  int it = 0;
  bool have = false;
  if (model.outside_roi(p, w, hgt, st.min_sigma)) {
    status = FitStatus::left_roi;
  } else if (!eval(p, cur)) {
    status = FitStatus::nan;
  } else {
    have = true;
    real lambda = st.lambda0;
    for (;;) {
      if (cur.chi2 < st.max_error) {
        status = FitStatus::converged_max_error;
        break;
      }
      if (it >= st.max_iterations) {
        status = FitStatus::max_iterations;
        break;
      }
      ++it;
      Evaluation<T, N> trial;
      real q[N];
      bool accepted = false, small = false, stop = false;
      // θ of the per-pixel estimators and of a 3D model mixes units (px, nm,
      // photons): their negligible-information test runs per relative change
      // (solve_damped), each parameter's size max(|θ_j|, its unit). The 2D
      // models under lsq keep the plain test (their results are unchanged).
      constexpr bool mixed_units = N != M::n_params || z_index<M>() >= 0;
      real magnitude[N];
      parameter_magnitudes<T, N>(model, p, magnitude);
      for (;;) {
        real d[N];
        const bool solved = solve_damped<N, T>(cur.h, cur.grad, lambda, d, mixed_units ? magnitude : nullptr);
        small = solved;
        NANOSCOPY_FIT_UNROLL
        for (int j = 0; j < N; ++j) small = small && fabs(d[j]) < st.min_step * fmax(fabs(p[j]), real(1));
        if (solved) {
          bool q_finite = true;
          NANOSCOPY_FIT_UNROLL
          for (int j = 0; j < N; ++j) {
            q[j] = p[j] + d[j];
            q_finite = q_finite && finite(q[j]);
          }
          if (model.admissible(q) && q_finite) accepted = eval(q, trial) && trial.chi2 < cur.chi2;
        }
        if (accepted) break;
        if (small) {
          status = FitStatus::converged_min_step;
          stop = true;
          break;
        }
        lambda *= real(10);
        if (lambda > st.lambda_max) {
          status = FitStatus::not_converged;
          stop = true;
          break;
        }
      }
      if (stop) break;
      const real decrease = cur.chi2 - trial.chi2;
      const real before = cur.chi2;
      NANOSCOPY_FIT_UNROLL
      for (int j = 0; j < N; ++j) p[j] = q[j];
      cur = trial;
      lambda *= real(0.1);
      if (model.outside_roi(p, w, hgt, st.min_sigma)) {
        status = FitStatus::left_roi;
        break;
      }
      if (cur.chi2 < st.max_error) {
        status = FitStatus::converged_max_error;
        break;
      }
      if (small) {
        status = FitStatus::converged_min_step;
        break;
      }
      if (decrease < st.min_delta * before) {
        status = FitStatus::converged_min_delta;
        break;
      }
    }
  }
  model.to_result(p, out);
  if constexpr (requires(const real* q, FitResult& r) { eval.finish(q, r); }) {
    if (have) eval.finish(p, out);
  }
  if (have) {
    out.amplitude = static_cast<float>(cur.alpha);
    out.background = static_cast<float>(cur.beta);
    out.chi2 = static_cast<float>(cur.chi2 / dof);
  } else {
    out.amplitude = out.background = out.chi2 = nan_float();
  }
  out.iterations = it;
  if (have && !(finite_float(cur.alpha) && finite_float(cur.beta) && finite_float(cur.chi2 / dof)) &&
      (converged(status) || status == FitStatus::max_iterations))
    status = FitStatus::nan;
  out.status = status;
  return out;
}

}  // namespace nanoscopy::fit_detail
