// Plain value types of the spot fitter, shared by the CPU library and the CUDA
// kernels (no std library containers, no CUDA headers: nvcc and g++ both read it;
// FitSettings' shared pointer to the spline PSF is host-side only).
#pragma once

#include <cstdint>
#include <memory>

#include "nanoscopy/core/defocus_curve.hpp"

namespace nanoscopy {

struct SplinePsf;  // core/spline_psf.hpp

// The normalized spot shape f(x, y; x̄, ȳ, σ) of the model h = α·f + β.
enum class ShapeModel : std::uint8_t {
  sampled,     // f = exp(−((x−x̄)² + (y−ȳ)²)/(2σ²)) at pixel centres (paper eq. 10); α = peak height
  integrated,  // f = pixel integral of a unit-mass Gaussian (erf differences); α = integrated counts
  elliptical,  // integrated, with σx ≠ σy: p = (x̄, ȳ, σx, σy); α = integrated counts
  astigmatic,  // integrated 3D: p = (x̄, ȳ, z), σx(z), σy(z) from FitSettings::astigmatism; α = integrated counts
  spline,      // the measured 3D PSF as a tricubic spline (FitSettings::spline): p = (x̄, ȳ, z); α = photons of
               // an in-focus emitter (fit/models/spline3d.hpp); not in model_list.hpp (not separable)
};

// The scalar of the fit math. automatic: the backend's default, double on the
// CPU (the reference), float on CUDA for every estimator and model (GeForce and
// Quadro cards run FP64 at 1/32–1/64 speed; bench fit2d's accuracy tables show
// no loss; kernels/fit/engine_cuda.cpp).
enum class FitPrecision : std::uint8_t {
  automatic,
  fp32,
  fp64,
};

// What the fit minimizes (fit/estimators/). lsq: Σ(g − h)² with α, β in closed
// form (LM on the shape parameters only). wlsq: Σ w(g' − μ)², w = 1/max(g', 1).
// mle: the Poisson deviance 2Σ[μ − g' − g'·ln(μ/g')]. wlsq and mle fit α and β as
// free parameters, on data in photons (see FitSettings::photon_offset) and with
// the sCMOS variance shift s = var/gain² added to data and model (g' = g + s,
// μ = α·f + β + s; RoiBatch::variance_shift).
enum class Estimator : std::uint8_t {
  lsq,
  wlsq,
  mle,
};

struct FitSettings {
  int max_iterations = 20;
  double max_error = 0.0;   // stop when the raw χ² (sum of squared residuals) < max_error; 0 = off
  double min_delta = 1e-6;  // stop when a step lowers χ² by less than min_delta·χ²
  double min_step = 1e-4;   // stop when every |Δp_j| < min_step·max(|p_j|, 1 px)
  double lambda0 = 0.01;    // initial Levenberg–Marquardt damping
  double lambda_max = 1e4;  // damping beyond this ends the fit as not_converged
  double min_sigma = 0.2;   // px; a fit whose σ shrinks to this collapsed onto a pixel: left_roi
  ShapeModel model = ShapeModel::sampled;
  FitPrecision precision = FitPrecision::automatic;
  Estimator estimator = Estimator::lsq;
  // wlsq and mle see photons = (pixel value − photon_offset)·photons_per_value
  // (fit2d: the camera's baseline and sensitivity/gain); their amplitude and
  // background are reported back in pixel units, as lsq's. lsq ignores both.
  double photon_offset = 0.0;
  double photons_per_value = 1.0;
  // The astigmatic model's width curves: σ in pixels, z in nm
  // (AstigmaticCalibration::in_pixels); z stays inside [z_min, z_max] (a fit
  // whose z leaves the calibrated range: left_roi). Other models ignore it.
  AstigmaticPsf<double> astigmatism = typical_astigmatic_psf();
  // The spline model's PSF (core/spline_psf.hpp; shared, never changed once set), and the factor
  // reported z (and its CRLB) = z_factor · the calibration's z: the refractive-index mismatch
  // between the bead calibration and the sample (Picasso's 0.79 for an oil objective imaging in
  // water; 1 = none). Other models ignore both.
  std::shared_ptr<const SplinePsf> spline;
  double z_factor = 1.0;
};

enum class FitStatus : std::uint8_t {
  converged_max_error,  // χ² < max_error
  converged_min_delta,  // χ² decrease < min_delta·χ²
  converged_min_step,   // every parameter change < min_step (also when no smaller step lowers χ²)
  max_iterations,       // max_iterations reached without a stop criterion
  not_converged,        // damping grew beyond lambda_max without lowering χ²
  nan,                  // the model could not be evaluated (non-finite guess, f ≡ 0, α or β beyond float)
  left_roi,             // centre outside the ROI, or σ outside (min_sigma, max(width, height)]
  invalid_roi,          // non-finite pixels or a constant ROI: nothing fitted, parameters NaN
};

// True for the three converged_* states.
constexpr bool converged(FitStatus s) noexcept {
  return s == FitStatus::converged_max_error || s == FitStatus::converged_min_delta ||
         s == FitStatus::converged_min_step;
}

// One fit. Coordinates in ROI pixels: the centre of pixel (column c, row r) is
// (x, y) = (c, r), so a ROI of width W spans x ∈ [−0.5, W − 0.5]. amplitude = α
// (peak height for the sampled model, integrated counts for the integrated
// model), background = β per pixel, both in the units of the pixel values.
// sigma is σx and sigma_y σy (both σ for the round models). chi2 = Σ(h − g)² /
// max(N − n_params − 2, 1) (N = pixels) for lsq; the weighted χ² (wlsq) or the
// Poisson deviance (mle) over the same degrees of freedom otherwise.
// crlb_x, crlb_y, crlb_sigma, crlb_sigma_y (px), crlb_background and crlb_photons
// (pixel units: of β per pixel, and of the spot's integrated counts, α or α·2πσ²
// for the sampled model): the square roots of
// the Cramér–Rao bound from the Poisson Fisher information at the estimate
// (wlsq and mle; NaN for lsq, which reports none; crlb_sigma, crlb_sigma_y NaN
// for the 3D model, whose widths follow z). log_likelihood: Picasso's
// log-likelihood ratio to the saturated model Σ[g'·ln μ − μ − g'·ln g' + g']
// over the ROI in photons at the estimate (mle; NaN otherwise). z (nm) and crlb_z (nm): the astigmatic model's depth and its
// CRLB (all estimators: the Poisson Fisher information at the estimate); 0 and
// NaN for the 2D models. With status invalid_roi all
// floating fields are NaN; with left_roi, nan or not_converged they hold the
// last accepted (finite) parameters and must not be used as a localization.
struct FitResult {
  float x = 0, y = 0, sigma = 0, amplitude = 0, background = 0, chi2 = 0;
  float sigma_y = 0;
  // 72 bytes: every field is copied back per fit (the host-to-host rate counts them).
  float crlb_x = 0, crlb_y = 0, log_likelihood = 0;
  float crlb_background = 0, crlb_photons = 0, crlb_sigma = 0, crlb_sigma_y = 0;
  float z = 0, crlb_z = 0;
  std::int32_t iterations = 0;
  FitStatus status = FitStatus::invalid_roi;
};

static_assert(sizeof(FitResult) == 72, "FitResult is copied back per fit: keep it small (see its fields' comment)");

// An initial guess of the shape parameters (α and β need none: they follow from them).
struct SpotGuess {
  float x = 0, y = 0, sigma = 0;
};

// Largest ROI the fitter accepts (pixels per ROI, any width × height).
inline constexpr int kMaxRoiPixels = 1024;

}  // namespace nanoscopy
