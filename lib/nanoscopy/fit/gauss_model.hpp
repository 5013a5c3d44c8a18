// The fit math, written once for the CPU loop and the CUDA kernel (NANOSCOPY_HD):
// the separable shape model and its derivatives, the per-pixel sums, the closed
// form of α, β and of the reduced-χ² Jacobian (paper eqs. 5–9, 13), the damped
// 3×3 step (eqs. 12, 14), the paper's initial estimate and the LM driver.
//
// Both shape models are separable, f(x, y) = X(x − x̄)·Y(y − ȳ), with
//   ∂f/∂x̄ = X'·Y,  ∂f/∂ȳ = X·Y',  ∂f/∂σ = X_σ·Y + X·Y_σ,
// so an evaluation takes width + height exp/erf calls and a few products per pixel.
// All arithmetic is double precision, on the GPU too: the χ² comparisons that
// drive the stop criteria (1e-6 relative) then agree between backends.
#pragma once

#include <math.h>

#include <cstdint>

#include "nanoscopy/core/hd.hpp"
#include "nanoscopy/fit/fit_types.hpp"

namespace nanoscopy::fit_detail {

NANOSCOPY_HD bool finite(double v) {
  return fabs(v) <= 1.7976931348623157e308;
}

// ---------------------------------------------------------------- shape model

struct AxisTerm {
  double v;   // X(u)
  double dc;  // ∂X/∂(centre)
  double ds;  // ∂X/∂σ
};

// Per-evaluation constants of one σ.
struct AxisModel {
  ShapeModel model;
  double inv_s2;    // 1/σ²
  double inv_s3;    // 1/σ³
  double inv_r2s;   // 1/(√2 σ)
  double k_centre;  // 1/(√π·√2 σ)
  double k_sigma;   // 1/(√π σ)
};

NANOSCOPY_HD AxisModel make_axis_model(ShapeModel model, double sigma) {
  const double inv_s = 1.0 / sigma;
  const double inv_sqrt_pi = 0.56418958354775628695;
  const double inv_sqrt2 = 0.70710678118654752440;
  AxisModel m;
  m.model = model;
  m.inv_s2 = inv_s * inv_s;
  m.inv_s3 = m.inv_s2 * inv_s;
  m.inv_r2s = inv_sqrt2 * inv_s;
  m.k_centre = inv_sqrt_pi * m.inv_r2s;
  m.k_sigma = inv_sqrt_pi * inv_s;
  return m;
}

// u = pixel coordinate − centre.
NANOSCOPY_HD AxisTerm axis_term(const AxisModel& m, double u) {
  AxisTerm t;
  if (m.model == ShapeModel::sampled) {
    // exp(−u²/(2σ²)); derivatives of paper eq. 11, split per axis.
    t.v = exp(-0.5 * u * u * m.inv_s2);
    t.dc = u * m.inv_s2 * t.v;
    t.ds = u * u * m.inv_s3 * t.v;
  } else {
    // ½[erf(a₊) − erf(a₋)], a± = (u ± ½)/(√2σ); erfc in the tails keeps relative precision.
    const double ap = (u + 0.5) * m.inv_r2s;
    const double am = (u - 0.5) * m.inv_r2s;
    if (am > 0.0)
      t.v = 0.5 * (erfc(am) - erfc(ap));
    else if (ap < 0.0)
      t.v = 0.5 * (erfc(-ap) - erfc(-am));
    else
      t.v = 0.5 * (erf(ap) - erf(am));
    const double ep = exp(-ap * ap);
    const double em = exp(-am * am);
    t.dc = (em - ep) * m.k_centre;
    t.ds = (am * em - ap * ep) * m.k_sigma;
  }
  return t;
}

// The sampled model's terms at coordinates 0 … n−1 of one axis (centre in the
// same coordinates), by a recurrence outward from the pixel nearest the centre:
// three exp calls instead of n, equal to axis_term to a few ulps. Moving away
// from the centre the ratios only shrink, so underflow is benign.
NANOSCOPY_HD void sampled_axis_terms(const AxisModel& m, double centre, int n, double* v, double* dc, double* ds) {
  const double a = 0.5 * m.inv_s2;  // 1/(2σ²)
  double c0f = floor(centre + 0.5);
  c0f = c0f < 0.0 ? 0.0 : (c0f > n - 1.0 ? n - 1.0 : c0f);
  const int c0 = static_cast<int>(c0f);
  const double u0 = c0 - centre;
  const double v0 = exp(-a * u0 * u0);
  const double q = exp(-2.0 * a);
  v[c0] = v0;
  double value = v0, ratio = exp(-a * (2.0 * u0 + 1.0));
  for (int c = c0 + 1; c < n; ++c) {
    value *= ratio;
    ratio *= q;
    v[c] = value;
  }
  value = v0;
  ratio = exp(a * (2.0 * u0 - 1.0));
  for (int c = c0 - 1; c >= 0; --c) {
    value *= ratio;
    ratio *= q;
    v[c] = value;
  }
  for (int c = 0; c < n; ++c) {
    const double u = c - centre;
    dc[c] = u * m.inv_s2 * v[c];
    ds[c] = u * u * m.inv_s3 * v[c];
  }
}

// ------------------------------------------------------------- pixel sums

// Σ over the ROI of the products the closed forms need (paper eqs. 5 and 7):
// f, f², f·g, ∂_j f, f·∂_j f, g·∂_j f and ∂_j f·∂_k f (j ≤ k).
struct Sums {
  double f, ff, fg;
  double d[3], fd[3], gd[3];
  double dd[6];  // 00 01 02 11 12 22
};

// Sums of one axis' terms over its pixels (columns or rows). Every data-free
// entry of Sums is a product of a column sum and a row sum.
struct AxisSums {
  double v, dc, ds;         // Σ X, Σ X', Σ X_σ
  double vv, vdc, vds;      // Σ X², Σ X·X', Σ X·X_σ
  double dcdc, dcds, dsds;  // Σ X'², Σ X'·X_σ, Σ X_σ²
};

// The data sums Σ g·f, Σ g·∂_j f: the only ones that need a pass over the pixels.
struct DataSums {
  double fg;
  double gd[3];
};

NANOSCOPY_HD void clear(AxisSums& a) {
  a.v = a.dc = a.ds = a.vv = a.vdc = a.vds = a.dcdc = a.dcds = a.dsds = 0;
}
NANOSCOPY_HD void clear(DataSums& d) {
  d.fg = d.gd[0] = d.gd[1] = d.gd[2] = 0;
}

NANOSCOPY_HD void accumulate(AxisSums& a, const AxisTerm& t) {
  a.v += t.v;
  a.dc += t.dc;
  a.ds += t.ds;
  a.vv += t.v * t.v;
  a.vdc += t.v * t.dc;
  a.vds += t.v * t.ds;
  a.dcdc += t.dc * t.dc;
  a.dcds += t.dc * t.ds;
  a.dsds += t.ds * t.ds;
}

// One pixel of value g with column term X and row term Y.
NANOSCOPY_HD void accumulate(DataSums& d, double g, const AxisTerm& X, const AxisTerm& Y) {
  d.fg += g * X.v * Y.v;
  d.gd[0] += g * X.dc * Y.v;
  d.gd[1] += g * X.v * Y.dc;
  d.gd[2] += g * (X.ds * Y.v + X.v * Y.ds);
}

// One row r of the ROI given its column-weighted data sums gx = Σ_c g·X, gxd = Σ_c g·X', gxs = Σ_c g·X_σ.
NANOSCOPY_HD void accumulate_row(DataSums& d, double gx, double gxd, double gxs, const AxisTerm& Y) {
  d.fg += gx * Y.v;
  d.gd[0] += gxd * Y.v;
  d.gd[1] += gx * Y.dc;
  d.gd[2] += gxs * Y.v + gx * Y.ds;
}

// f = X·Y, ∂₀f = X'·Y, ∂₁f = X·Y', ∂₂f = X_σ·Y + X·Y_σ, summed over columns × rows.
NANOSCOPY_HD Sums combine(const AxisSums& X, const AxisSums& Y, const DataSums& D) {
  Sums s;
  s.f = X.v * Y.v;
  s.ff = X.vv * Y.vv;
  s.fg = D.fg;
  s.d[0] = X.dc * Y.v;
  s.d[1] = X.v * Y.dc;
  s.d[2] = X.ds * Y.v + X.v * Y.ds;
  s.fd[0] = X.vdc * Y.vv;
  s.fd[1] = X.vv * Y.vdc;
  s.fd[2] = X.vds * Y.vv + X.vv * Y.vds;
  for (int j = 0; j < 3; ++j) s.gd[j] = D.gd[j];
  s.dd[0] = X.dcdc * Y.vv;
  s.dd[1] = X.vdc * Y.vdc;
  s.dd[2] = X.dcds * Y.vv + X.vdc * Y.vds;
  s.dd[3] = X.vv * Y.dcdc;
  s.dd[4] = X.vds * Y.vdc + X.vv * Y.dcds;
  s.dd[5] = X.dsds * Y.vv + 2.0 * X.vds * Y.vds + X.vv * Y.dsds;
  return s;
}

// Per-ROI constants: N pixels, G = Σg, GG = Σg².
struct RoiConstants {
  double n, g, gg;
};

// The model at one parameter point: α̂, β̂ (eq. 6), the raw χ², JᵀJ (upper
// triangle, 00 01 02 11 12 22) and Jᵀ(g − h), with J the Jacobian of the
// model h_i = α̂(p)·f_i(p) + β̂(p) including the dependence of α̂, β̂ on p (eq. 8).
struct Evaluation {
  double chi2, alpha, beta;
  double h[6];
  double grad[3];
};

// Closed forms from the sums. False when they are undefined (f ≡ const, e.g.
// all f underflowed) or not finite.
NANOSCOPY_HD bool assemble(const Sums& s, const RoiConstants& k, Evaluation& e) {
  const double N = k.n, G = k.g;
  const double D = N * s.ff - s.f * s.f;
  if (!(D > 1e-300) || !finite(D)) return false;
  const double inv_d = 1.0 / D;
  const double alpha = (N * s.fg - s.f * G) * inv_d;
  const double beta = (G * s.ff - s.f * s.fg) * inv_d;
  double a[3], b[3];
  for (int j = 0; j < 3; ++j) {
    const double dF = s.d[j];
    const double dFF = 2.0 * s.fd[j];
    const double dFG = s.gd[j];
    const double gamma = N * dFF - 2.0 * s.f * dF;
    a[j] = (N * dFG - G * dF - alpha * gamma) * inv_d;
    b[j] = (G * dFF - s.fg * dF - s.f * dFG - beta * gamma) * inv_d;
  }
  // Residual r = g − h: Σ f·r and Σ r vanish at α̂, β̂ up to rounding; kept for exactness.
  const double sum_fr = s.fg - alpha * s.ff - beta * s.f;
  const double sum_r = G - alpha * s.f - beta * N;
  for (int j = 0; j < 3; ++j) {
    const double sum_dr = s.gd[j] - alpha * s.fd[j] - beta * s.d[j];
    e.grad[j] = a[j] * sum_fr + alpha * sum_dr + b[j] * sum_r;
  }
  // J_ij = a_j f_i + α ∂_j f_i + b_j, so (JᵀJ)_jk expands into the sums.
  int idx = 0;
  for (int j = 0; j < 3; ++j) {
    for (int m = j; m < 3; ++m, ++idx) {
      e.h[idx] = a[j] * a[m] * s.ff + alpha * (a[j] * s.fd[m] + a[m] * s.fd[j]) + (a[j] * b[m] + a[m] * b[j]) * s.f +
                 alpha * alpha * s.dd[idx] + alpha * (b[m] * s.d[j] + b[j] * s.d[m]) + b[j] * b[m] * N;
    }
  }
  // χ² = Σ(g − αf − β)² = Σg² − α·Σfg − β·Σg at the optimal α, β.
  double chi2 = k.gg - alpha * s.fg - beta * G;
  if (chi2 < 0.0) chi2 = 0.0;
  e.chi2 = chi2;
  e.alpha = alpha;
  e.beta = beta;
  return finite(alpha) && finite(beta) && finite(chi2) && finite(e.grad[0]) && finite(e.grad[1]) && finite(e.grad[2]) &&
         finite(e.h[0]) && finite(e.h[3]) && finite(e.h[5]);
}

// --------------------------------------------------------------- LM step

// Solves (JᵀJ + λ·diag(JᵀJ))·δ = Jᵀ(g − h) (eq. 14). Parameters whose diagonal
// is negligible (e.g. x̄ of a one-pixel-wide ROI, which α̂ absorbs) are held
// fixed. False when the system is not positive definite.
NANOSCOPY_HD bool solve_damped(const double h[6], const double grad[3], double lambda, double delta[3]) {
  const int di[3] = {0, 3, 5};
  double maxd = 0.0;
  for (int j = 0; j < 3; ++j) maxd = fmax(maxd, h[di[j]]);
  delta[0] = delta[1] = delta[2] = 0.0;
  if (!(maxd > 0.0)) return true;  // flat in every direction: no step
  bool active[3];
  double scale[3];  // 1/√(diagonal): Jacobi scaling for a well conditioned solve
  for (int j = 0; j < 3; ++j) {
    active[j] = h[di[j]] > 1e-12 * maxd;
    scale[j] = active[j] ? 1.0 / sqrt(h[di[j]] * (1.0 + lambda)) : 0.0;
  }
  // Scaled matrix B = S·A·S with unit diagonal; inactive rows/columns → identity.
  const double b01 = h[1] * scale[0] * scale[1];
  const double b02 = h[2] * scale[0] * scale[2];
  const double b12 = h[4] * scale[1] * scale[2];
  const double c0 = grad[0] * scale[0], c1 = grad[1] * scale[1], c2 = grad[2] * scale[2];
  // Inverse of the symmetric [[1, b01, b02], [b01, 1, b12], [b02, b12, 1]] by cofactors.
  const double m00 = 1.0 - b12 * b12;
  const double m01 = b02 * b12 - b01;
  const double m02 = b01 * b12 - b02;
  const double m11 = 1.0 - b02 * b02;
  const double m12 = b01 * b02 - b12;
  const double m22 = 1.0 - b01 * b01;
  const double det = m00 + b01 * m01 + b02 * m02;
  if (!(det > 1e-300) || !finite(det)) return false;
  const double inv_det = 1.0 / det;
  delta[0] = (m00 * c0 + m01 * c1 + m02 * c2) * inv_det * scale[0];
  delta[1] = (m01 * c0 + m11 * c1 + m12 * c2) * inv_det * scale[1];
  delta[2] = (m02 * c0 + m12 * c1 + m22 * c2) * inv_det * scale[2];
  return finite(delta[0]) && finite(delta[1]) && finite(delta[2]);
}

// ------------------------------------------------------- initial estimate

// Partial state of the paper's initial estimate over a subset of pixels; the
// GPU combines the lanes' partials, the CPU scans all pixels into one.
struct InitScan {
  double best_avg;   // highest 3×3 moving average (window clipped to the ROI)
  int best_index;    // its pixel index (ties: the lowest index)
  double min, max;   // raw pixel extremes
  double sum, sum2;  // Σg, Σg²
  int nonfinite;     // count of NaN/inf pixels
};

NANOSCOPY_HD InitScan init_scan_identity() {
  InitScan s;
  s.best_avg = -1.7976931348623157e308;
  s.best_index = 0x7fffffff;
  s.min = 1.7976931348623157e308;
  s.max = -1.7976931348623157e308;
  s.sum = s.sum2 = 0.0;
  s.nonfinite = 0;
  return s;
}

// Adds pixel (c, r) of the ROI `g` (row-major, width w, height hgt).
template <typename T>
NANOSCOPY_HD void init_scan_pixel(InitScan& s, const T* g, int w, int hgt, int c, int r) {
  const double v = static_cast<double>(g[r * w + c]);
  if (!finite(v)) {
    ++s.nonfinite;
    return;
  }
  s.min = fmin(s.min, v);
  s.max = fmax(s.max, v);
  s.sum += v;
  s.sum2 += v * v;
  const int r0 = r > 0 ? r - 1 : 0, r1 = r + 1 < hgt ? r + 1 : hgt - 1;
  const int c0 = c > 0 ? c - 1 : 0, c1 = c + 1 < w ? c + 1 : w - 1;
  double box = 0.0;
  for (int rr = r0; rr <= r1; ++rr)
    for (int cc = c0; cc <= c1; ++cc) box += static_cast<double>(g[rr * w + cc]);
  const double avg = box / ((r1 - r0 + 1) * (c1 - c0 + 1));
  const int index = r * w + c;
  const bool better = avg > s.best_avg || (avg == s.best_avg && index < s.best_index);
  s.best_avg = better ? avg : s.best_avg;
  s.best_index = better ? index : s.best_index;
}

NANOSCOPY_HD InitScan init_scan_combine(const InitScan& a, const InitScan& b) {
  InitScan s;
  const bool take_b = b.best_avg > a.best_avg || (b.best_avg == a.best_avg && b.best_index < a.best_index);
  s.best_avg = take_b ? b.best_avg : a.best_avg;
  s.best_index = take_b ? b.best_index : a.best_index;
  s.min = fmin(a.min, b.min);
  s.max = fmax(a.max, b.max);
  s.sum = a.sum + b.sum;
  s.sum2 = a.sum2 + b.sum2;
  s.nonfinite = a.nonfinite + b.nonfinite;
  return s;
}

// Threshold α·e^(−½) + β of the σ estimate, with β = min and α = max − β.
NANOSCOPY_HD double init_threshold(const InitScan& s) {
  return s.min + (s.max - s.min) * 0.60653065971263342360;
}

// σ₀ = √(M/π) from the number M of raw pixels above the threshold.
NANOSCOPY_HD double init_sigma(int above) {
  return sqrt(static_cast<double>(above) * 0.31830988618379067154);
}

// ------------------------------------------------------------- LM driver

NANOSCOPY_HD bool outside_roi(const double p[3], int w, int hgt, double min_sigma) {
  return !(p[0] >= -0.5 && p[0] <= w - 0.5 && p[1] >= -0.5 && p[1] <= hgt - 0.5 && p[2] > min_sigma &&
           p[2] <= (w > hgt ? w : hgt));
}

NANOSCOPY_HD bool finite_float(double v) {
  return fabs(v) <= 3.4028234663852886e38;
}

NANOSCOPY_HD float nan_float() {
  return nanf("");
}

NANOSCOPY_HD FitResult invalid_result() {
  FitResult r;
  r.x = r.y = r.sigma = r.amplitude = r.background = r.chi2 = nan_float();
  r.iterations = 0;
  r.status = FitStatus::invalid_roi;
  return r;
}

// Levenberg–Marquardt on p = (x̄, ȳ, σ) from `start`. `eval(p, e)` fills the
// Evaluation at p and returns false when it is undefined. `n` = pixels.
//
// Each iteration solves the damped system; a step that lowers χ² is taken and
// λ ÷ 10, otherwise λ × 10 and the step is solved again. Stops: χ² < max_error;
// after a taken step, centre or σ out of the ROI (left_roi), all |Δp_j| <
// min_step·max(|p_j|, 1) (converged_min_step), χ² decrease < min_delta·χ²
// (converged_min_delta); a tiny step that does not lower χ² means the minimum
// is reached (converged_min_step); λ > lambda_max (not_converged); σ ≤ 0 steps
// count as failed steps. A result that does not fit in float is reported as nan.
template <class Eval>
NANOSCOPY_HD FitResult lm_fit(Eval& eval, const double start[3], int w, int hgt, int n, const FitSettings& st) {
  FitResult out;
  double p[3] = {start[0], start[1], start[2]};
  const double dof = n > 5 ? n - 5.0 : 1.0;
  if (!finite(p[0]) || !finite(p[1]) || !finite(p[2])) {
    out = invalid_result();
    out.status = FitStatus::nan;
    return out;
  }
  Evaluation cur;
  FitStatus status = FitStatus::max_iterations;
  int it = 0;
  bool have = false;
  if (outside_roi(p, w, hgt, st.min_sigma)) {
    status = FitStatus::left_roi;
  } else if (!eval(p, cur)) {
    status = FitStatus::nan;
  } else {
    have = true;
    double lambda = st.lambda0;
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
      Evaluation trial;
      double q[3];
      bool accepted = false, small = false, stop = false;
      for (;;) {
        double d[3];
        const bool solved = solve_damped(cur.h, cur.grad, lambda, d);
        small = solved;
        for (int j = 0; j < 3; ++j) small = small && fabs(d[j]) < st.min_step * fmax(fabs(p[j]), 1.0);
        if (solved) {
          for (int j = 0; j < 3; ++j) q[j] = p[j] + d[j];
          if (q[2] > 0.0 && finite(q[0]) && finite(q[1]) && finite(q[2]))
            accepted = eval(q, trial) && trial.chi2 < cur.chi2;
        }
        if (accepted) break;
        if (small) {
          status = FitStatus::converged_min_step;
          stop = true;
          break;
        }
        lambda *= 10.0;
        if (lambda > st.lambda_max) {
          status = FitStatus::not_converged;
          stop = true;
          break;
        }
      }
      if (stop) break;
      const double decrease = cur.chi2 - trial.chi2;
      const double before = cur.chi2;
      for (int j = 0; j < 3; ++j) p[j] = q[j];
      cur = trial;
      lambda *= 0.1;
      if (outside_roi(p, w, hgt, st.min_sigma)) {
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
  out.x = static_cast<float>(p[0]);
  out.y = static_cast<float>(p[1]);
  out.sigma = static_cast<float>(p[2]);
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
