// The spline 3D model (ShapeModel::spline): the microscope's own PSF as a
// tricubic spline (core/spline_psf.hpp; Li et al., Nat. Methods 15:367, 2018;
// SMAP's fit3Dcspline, Gpufit's SPLINE_3D), fitted in θ = (x̄, ȳ, z, α, β):
//
//   μ(c, r) = α·f(centre_x + (c − x̄)/v, centre_y + (r − ȳ)/v, focus + z/Δz) + β (+ s, sCMOS),
//
// f the spline in voxel coordinates (core/spline_psf_eval.hpp), v = voxel_xy_px,
// Δz = z_step_nm, z in nm on the calibration's scale; α = photons of an
// in-focus emitter (the in-focus slice sums to 1), β photons per pixel. The
// pixel value is f at the pixel centre, as SMAP and Gpufit evaluate it.
//
// The spline is not separable, so this model is not in model_list.hpp (whose
// kernels share per-axis terms); it has its own per-fit driver below, written
// once for the CPU engine (engine_cpu.cpp) and the CUDA kernel
// (kernels/fit/fit_kernels_spline.cu), with the shared LM driver (lm.hpp) and
// the per-pixel estimators (estimators/mle.hpp: mle, wlsq; SplineLsq here:
// plain least squares, Σ(g − μ)², on photons).
//
// Per fit: the paper's start of x̄, ȳ (the brightest 3×3 average), z from a
// coarse search over kSplineZCandidates depths spread over the calibrated range
// (on the central ≤ 7×7 pixels, the spline taken at its grid node nearest to
// each: one coefficient read instead of 64, so the search costs a fraction of
// one LM iteration's reads; α and β in closed form by weighted least squares,
// w = 1/max(g, 1): Neyman's χ², the Gaussian approximation of the Poisson
// likelihood, one pass per depth; the best χ² wins), then LM on all five.
// The CRLB (√ of the Poisson Fisher inverse's diagonal) at the estimate for
// x̄, ȳ, z, α, β, whatever the estimator; z and its CRLB are reported times
// z_factor. sigma, sigma_y: the model's second-moment widths over the ROI at the
// estimate (px), for the columns that expect a width.
#pragma once

#include <math.h>

#include <type_traits>

#include "nanoscopy/core/hd.hpp"
#include "nanoscopy/core/spline_psf.hpp"
#include "nanoscopy/core/spline_psf_eval.hpp"
#include "nanoscopy/fit/estimators/lsq.hpp"
#include "nanoscopy/fit/estimators/mle.hpp"
#include "nanoscopy/fit/fit_types.hpp"
#include "nanoscopy/fit/lm.hpp"
#include "nanoscopy/fit/real.hpp"

// The evaluator's operator() out of line on the device (called at two sites of lm_fit, see GroupEvaluator).
#if defined(__CUDACC__)
#define NANOSCOPY_SPLINE_EVAL __host__ __device__ __noinline__
#else
#define NANOSCOPY_SPLINE_EVAL inline
#endif

namespace nanoscopy::fit_detail {

// Depths tried for the initial z.
inline constexpr int kSplineZCandidates = 16;

template <class T>
struct SplineConstants {
  T centre_x = 0, centre_y = 0, focus = 0;  // voxel coordinates of the PSF's centre and of z = 0 nm
  T inv_voxel = 1;                           // voxels per camera pixel (1/voxel_xy_px)
  T inv_z_step = T(0.1);                     // voxels per nm (1/z_step_nm)
  T z_min = 0, z_max = 0;                    // the fitted z range, nm on the calibration's scale
  T z_unit = 100;                            // z's natural size for the solve (lm.hpp, param_unit), nm
  T z_factor = 1;                            // reported z = z_factor · z
};

struct Spline3d {
  static constexpr ShapeModel shape = ShapeModel::spline;
  static constexpr const char* name = "spline";
  static constexpr int n_params = 3;
  static constexpr int z_param = 2;
  static constexpr const char* param_names[n_params] = {"x", "y", "z"};

  SplineView view;  // host memory on the CPU, device memory in the kernel
  // Both scalars' copies, so a float kernel reads float constants (no FP64).
  SplineConstants<float> kf{};
  SplineConstants<double> kd{};

  template <class T>
  NANOSCOPY_HD const SplineConstants<T>& k() const {
    if constexpr (std::is_same_v<T, float>)
      return kf;
    else
      return kd;
  }

  template <class T>
  NANOSCOPY_HD T unit(int j) const {
    return j == z_param ? k<T>().z_unit : T(1);
  }

  // f and ∂f/∂(x̄, ȳ, z) at pixel (c, r) for p = (x̄, ȳ, z).
  template <class T>
  NANOSCOPY_HD void pixel(const T p[3], T c, T r, T& f, T df[3]) const {
    const SplineConstants<T>& q = k<T>();
    T fx, fy, fz;
    spline_psf_evaluate<T>(view, q.centre_x + (c - p[0]) * q.inv_voxel, q.centre_y + (r - p[1]) * q.inv_voxel,
                           q.focus + p[2] * q.inv_z_step, f, fx, fy, fz);
    df[0] = -fx * q.inv_voxel;
    df[1] = -fy * q.inv_voxel;
    df[2] = fz * q.inv_z_step;
  }
  template <class T>
  NANOSCOPY_HD T value(T x, T y, T z, T c, T r) const {
    const SplineConstants<T>& q = k<T>();
    return spline_psf_value<T>(view, q.centre_x + (c - x) * q.inv_voxel, q.centre_y + (r - y) * q.inv_voxel,
                               q.focus + z * q.inv_z_step);
  }
  // f at the spline's grid node nearest to pixel (c, r) of a spot at (x, y, z): the coarse z search's value.
  template <class T>
  NANOSCOPY_HD T node_value(T x, T y, T z, T c, T r) const {
    const SplineConstants<T>& q = k<T>();
    return spline_psf_node_value<T>(view, q.centre_x + (c - x) * q.inv_voxel, q.centre_y + (r - y) * q.inv_voxel,
                                    q.focus + z * q.inv_z_step);
  }

  // Centre outside the ROI or z outside the calibrated range: left_roi.
  template <class T>
  NANOSCOPY_HD bool outside_roi(const T p[3], int w, int h, T) const {
    return !(p[0] >= T(-0.5) && p[0] <= T(w) - T(0.5) && p[1] >= T(-0.5) && p[1] <= T(h) - T(0.5) &&
             p[2] >= k<T>().z_min && p[2] <= k<T>().z_max);
  }
  template <class T>
  NANOSCOPY_HD static bool admissible(const T*) {
    return true;
  }
  template <class T>
  NANOSCOPY_HD void to_result(const T p[3], FitResult& r) const {
    r.x = static_cast<float>(p[0]);
    r.y = static_cast<float>(p[1]);
    r.z = static_cast<float>(p[2] * k<T>().z_factor);
  }
};

// Plain least squares per pixel, Σ(g' − μ)² (the spline's lsq: no closed form for α, β).
struct SplineLsq {
  template <class T, int P>
  NANOSCOPY_HD static bool add(Evaluation<T, P>& e, T gs, T mu, const T d[P]) {
    const T res = gs - mu;
    e.chi2 += res * res;
    add_outer<T, P>(e.h, e.grad, T(1), res, d);
    return true;
  }
};

// The ROI as the CPU engine holds it: photons (and variance shifts) of type T in scratch arrays.
template <class T>
struct ArrayRoi {
  const T* photons;
  const T* shifts;  // or null: 0
  NANOSCOPY_HD T g(int i) const { return photons[i]; }
  NANOSCOPY_HD T s(int i) const { return shifts ? shifts[i] : T(0); }
};

// The per-pixel estimator E of the spline model at θ = (x̄, ȳ, z, α, β) over the whole ROI;
// Roi gives g(i) (photons) and s(i) (the variance shift) of pixel i.
template <class E, class T, class Roi>
struct SplineEvaluator {
  static constexpr int P = kPixelParams<3>;
  Spline3d model;
  Roi roi;
  int w, h;

  // visit(g', μ, ∂μ/∂θ, f, c, r) for every pixel, in row order.
  template <class Visit>
  NANOSCOPY_HD void each_pixel(const T q[P], Visit&& visit) const {
    const T alpha = q[3], beta = q[4];
    for (int r = 0; r < h; ++r)
      for (int c = 0; c < w; ++c) {
        const int i = r * w + c;
        T f, df[3], d[P];
        model.pixel(q, T(c), T(r), f, df);
        mu_derivatives<T, 3>(f, df, alpha, d);
        const T s = roi.s(i);
        visit(roi.g(i) + s, alpha * f + beta + s, static_cast<const T*>(d), f, c, r);
      }
  }

  NANOSCOPY_SPLINE_EVAL bool operator()(const T theta[P], Evaluation<T, P>& out) const {
    T q[P];
    NANOSCOPY_FIT_UNROLL
    for (int j = 0; j < P; ++j) q[j] = theta[j];
    Evaluation<T, P> e;
    clear_evaluation(e);
    int bad = 0;
    each_pixel(q, [&](T gs, T mu, const T* d, T, int, int) { bad += E::add(e, gs, mu, d) ? 0 : 1; });
    const bool ok = bad == 0 && pixel_finish(e, q);
    out = e;
    return ok;
  }

  // The CRLB, the log-likelihood and the second-moment widths at the estimate (lm_fit calls it once).
  NANOSCOPY_SPLINE_EVAL void finish(const T q[P], FitResult& out) const {
    FisherSums<T, P> fs;
    clear_fisher(fs);
    T sf = 0, sxx = 0, syy = 0;
    each_pixel(q, [&](T gs, T mu, const T* d, T f, int c, int r) {
      add_fisher(fs, gs, mu, d);
      const T dx = T(c) - q[0], dy = T(r) - q[1];
      sf += f;
      sxx += f * dx * dx;
      syy += f * dy * dy;
    });
    T magnitude[P];
    parameter_magnitudes<T, P>(model, q, magnitude);
    fisher_to_result<T, P, Spline3d::z_param, false>(fs, q, magnitude, out);
    out.crlb_z = static_cast<float>(static_cast<T>(out.crlb_z) * model.k<T>().z_factor);
    const bool widths = sf > T(0) && sxx >= T(0) && syy >= T(0);
    out.sigma = widths ? static_cast<float>(sqrt(sxx / sf)) : nan_float();
    out.sigma_y = widths ? static_cast<float>(sqrt(syy / sf)) : nan_float();
  }
};

// One spline fit of estimator E (Mle, Wlsq, SplineLsq) on the ROI `roi` (w × h
// pixels in photons), from `guess` (x̄, ȳ; null: the brightest 3×3 average);
// α, β are reported in pixel units: photons/photons_per_value (+ photon_offset for β).
template <class E, class T, class Roi>
NANOSCOPY_HD FitResult spline_fit_one(const Spline3d& model, const Roi& roi, int w, int h, const SpotGuess* guess,
                                      const FitLimits<T>& st, T photon_offset, T photons_per_value) {
  const int n = w * h;
  // The paper's scan: extremes, non-finite pixels, the brightest 3×3 average (clipped to the ROI).
  T lo = Limits<T>::max, hi = -Limits<T>::max, best_avg = -Limits<T>::max;
  int best = 0, nonfinite = 0;
  for (int r = 0; r < h; ++r)
    for (int c = 0; c < w; ++c) {
      const T v = roi.g(r * w + c);
      if (!finite(v)) {
        ++nonfinite;
        continue;
      }
      lo = fmin(lo, v);
      hi = fmax(hi, v);
      const int r0 = r > 0 ? r - 1 : 0, r1 = r + 1 < h ? r + 1 : h - 1;
      const int c0 = c > 0 ? c - 1 : 0, c1 = c + 1 < w ? c + 1 : w - 1;
      T box = 0;
      for (int rr = r0; rr <= r1; ++rr)
        for (int cc = c0; cc <= c1; ++cc) box += roi.g(rr * w + cc);
      const T avg = box / static_cast<T>((r1 - r0 + 1) * (c1 - c0 + 1));
      if (avg > best_avg) {
        best_avg = avg;
        best = r * w + c;
      }
    }
  if (nonfinite > 0 || !(hi > lo)) return invalid_result();
  const T x0 = guess ? static_cast<T>(guess->x) : static_cast<T>(best % w);
  const T y0 = guess ? static_cast<T>(guess->y) : static_cast<T>(best / w);

  // Coarse z search on the central ≤ 7×7 window.
  const SplineConstants<T>& k = model.k<T>();
  const int wc = static_cast<int>(floor(x0 + T(0.5))), wr = static_cast<int>(floor(y0 + T(0.5)));
  const int span_c = w < 7 ? w : 7, span_r = h < 7 ? h : 7;
  int c_first = wc - span_c / 2, r_first = wr - span_r / 2;
  c_first = c_first < 0 ? 0 : (c_first > w - span_c ? w - span_c : c_first);
  r_first = r_first < 0 ? 0 : (r_first > h - span_r ? h - span_r : r_first);
  T best_chi = Limits<T>::max;
  T z_start = k.z_min > T(0) ? k.z_min : (k.z_max < T(0) ? k.z_max : T(0));
  T alpha = hi - lo, beta = lo > T(0.01) ? lo : T(0.01);
  const T z_step = (k.z_max - k.z_min) / T(kSplineZCandidates);
  for (int cand = 0; cand < kSplineZCandidates; ++cand) {
    const T z = k.z_min + (T(cand) + T(0.5)) * z_step;
    T sw = 0, swf = 0, swff = 0, swg = 0, swfg = 0, swgg = 0;
    for (int r = r_first; r < r_first + span_r; ++r)
      for (int c = c_first; c < c_first + span_c; ++c) {
        const T g = roi.g(r * w + c);
        const T wgt = T(1) / (g > T(1) ? g : T(1));
        const T f = model.node_value(x0, y0, z, T(c), T(r));
        sw += wgt;
        swf += wgt * f;
        swff += wgt * f * f;
        swg += wgt * g;
        swfg += wgt * f * g;
        swgg += wgt * g * g;
      }
    const T det = sw * swff - swf * swf;
    if (!(det > Limits<T>::tiny) || !finite(det)) continue;
    const T a = (sw * swfg - swf * swg) / det;
    const T b = (swff * swg - swf * swfg) / det;
    if (!(a > T(0))) continue;
    const T chi = swgg - T(2) * a * swfg - T(2) * b * swg + a * a * swff + T(2) * a * b * swf + b * b * sw;
    if (chi < best_chi && finite(chi)) {
      best_chi = chi;
      z_start = z;
      alpha = a;
      beta = b;
    }
  }
  T theta[5] = {x0, y0, z_start, alpha > T(0) && finite(alpha) ? alpha : hi - lo,
                beta > T(0.01) && finite(beta) ? beta : T(0.01)};
  SplineEvaluator<E, T, Roi> eval{model, roi, w, h};
  FitResult r = lm_fit<Spline3d, 5>(model, eval, theta, w, h, n, st);
  const T inv = T(1) / photons_per_value;
  r.amplitude = static_cast<float>(static_cast<T>(r.amplitude) * inv);
  r.background = static_cast<float>(static_cast<T>(r.background) * inv + photon_offset);
  r.crlb_background = static_cast<float>(static_cast<T>(r.crlb_background) * inv);
  r.crlb_photons = static_cast<float>(static_cast<T>(r.crlb_photons) * inv);
  return r;
}

// The model of `psf` (host only) with the coefficient table at `coefficients`
// (psf.coefficients' data on the CPU, its copy in device memory for the kernel).
// The fitted z range is the spline's calibrated range.
inline Spline3d make_spline_model(const SplinePsf& psf, double z_factor, const float* coefficients) {
  Spline3d m;
  m.view = SplineView{coefficients, psf.size_x, psf.size_y, psf.size_z};
  SplineConstants<double> k;
  k.centre_x = psf.centre_x;
  k.centre_y = psf.centre_y;
  k.focus = psf.focus_index;
  k.inv_voxel = 1.0 / psf.voxel_xy_px;
  k.inv_z_step = 1.0 / psf.z_step_nm;
  k.z_min = psf.z_min_nm();
  k.z_max = psf.z_max_nm();
  k.z_unit = (k.z_max - k.z_min) / 10 > psf.z_step_nm ? (k.z_max - k.z_min) / 10 : psf.z_step_nm;
  k.z_factor = z_factor;
  m.kd = k;
  m.kf = SplineConstants<float>{static_cast<float>(k.centre_x), static_cast<float>(k.centre_y),
                                static_cast<float>(k.focus),    static_cast<float>(k.inv_voxel),
                                static_cast<float>(k.inv_z_step), static_cast<float>(k.z_min),
                                static_cast<float>(k.z_max),    static_cast<float>(k.z_unit),
                                static_cast<float>(k.z_factor)};
  return m;
}

}  // namespace nanoscopy::fit_detail
