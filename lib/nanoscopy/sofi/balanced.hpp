// Balanced SOFI (bSOFI; Geissbuehler et al. 2012, Biomed. Opt. Express 3:1171,
// and the authors' MATLAB toolbox: sofiLinearize, sofiParameters, sofiBalance):
// the auto-cumulants of orders 2..n deconvolved, the emitters' on-time ratio,
// brightness and density from the ratios of the deconvolved orders, and an image
// whose brightness is linear in the emitters' brightness instead of its n-th power.
//
// Model (two-state emitters, stationary, long on/off times against the lags;
// notes/reference.md 5): an emitter k of brightness eps_k (photons per frame while
// on) and on-time ratio rho_k adds to the order-n auto-cumulant
//   kappa_n(r) = sum_k U^n(r - r_k) eps_k^n w_n(rho_k),
//   w2 = rho(1-rho), w3 = rho(1-rho)(1-2rho), w4 = rho(1-rho)(1-6rho+6rho^2).
// (w_n is the n-th cumulant of a Bernoulli(rho) variable: the on/off state of one
// frame.) Deconvolving kappa_n with U^n (deconvolve.hpp) leaves at each emitter a
// spot of mass eps^n w_n; we call that image, divided by its PSF's mass, K_n.
//
// Molecular parameters (sofiParameters' formulas, here on K_n): with
//   k1 = K3 / K2 = eps (1 - 2rho),   k2 = K4 / K2 = eps^2 (1 - 6rho + 6rho^2),
//   3 k1^2 - 2 k2 = eps^2 (3 - 12rho + 12rho^2 - 2 + 12rho - 12rho^2) = eps^2, so
//   eps = sqrt(3 k1^2 - 2 k2),   rho = (1 - k1 / eps) / 2,   N = K2 / (eps^2 rho (1 - rho)).
// Unlike eps = k1 / (1 - 2rho) this has no pole at rho = 1/2; rho < 1/2 and
// rho > 1/2 are told apart by the sign of K3 (why K_n keeps the cumulant's sign).
// The ratios are taken pixel by pixel after the K_n are reconvolved with one common
// Gaussian (sigma / sqrt 2, the order-2 resolution), so that every order of one
// emitter has the same spot shape and the pixel ratios are ratios of spot masses.
// N is then emitters per pixel at that resolution: it sums to the number of
// emitters over a spot.
//
// Mask (NaN in rho, eps, N): K2 (reconvolved) below `mask_fraction` of its largest
// value (the ratios of noise), or 3 k1^2 - 2 k2 <= 0 (no real brightness: noise,
// or two orders of different emitters), and for N alone rho (1 - rho) < 0.01
// (N's denominator vanishes for emitters always on or always off).
//
// Negative cumulants: Richardson-Lucy needs non-negative data. bSOFI's
// sofiLinearize deconvolves |kappa_n|; so do we, and K_n gets the sign of kappa_n
// at each pixel back for the parameters (sofiParameters used the signed cumulants).
//
// Balanced image (sofiLinearize + sofiBalance): L_n = |K_n|^(1/n) (brightness to
// the first power: eps |w_n|^(1/n) at an emitter), each scaled to its maximum;
// with n = 4, order 4 is used except where w4 vanishes (rho near 0.211 or 0.789:
// rho in [0.128, 0.278] or [0.722, 0.872], bSOFI's bands), where order 3 is used,
// the choice smoothed by a Gaussian of sigma / sqrt(n) (masked rho: order 4). With
// n = 3, L3 alone (no rho, eps, N: they need order 4).
// L_n is not reconvolved: the maintained bSOFI toolbox's sofiLinearize keeps the
// n-th root as it is (its reconvolution with the PSF is commented out), and so
// do we, measured: a reconvolution with sigma / sqrt(n) on top of what
// Richardson-Lucy leaves blurs the image beyond the order-n resolution; against
// the simulated sample (bench sofi, quantum dots, 2,000 frames, seeds 1-4) the
// error was 0.34-0.36 with it (and 20 iterations), 0.28-0.31 without (and 10); at
// 5,000 frames 0.34 and 0.27, at 20,000 frames 0.32 and 0.24 (docs/benchmarks.md,
// "Issue 19: balanced SOFI against the sample").
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "nanoscopy/sofi/deconvolve_engine.hpp"
#include "nanoscopy/sofi/problem.hpp"
#include "nanoscopy/sofi/runner.hpp"

namespace nanoscopy {

struct MolecularParameters {
  static constexpr double masked = std::numeric_limits<double>::quiet_NaN();
  double rho = masked, epsilon = masked, density = masked;
};

// The formulas above on one pixel's (reconvolved) K2, K3, K4; `k2_floor`: K2 at or below it is masked.
inline MolecularParameters molecular_parameters(double k2, double k3, double k4, double k2_floor) {
  MolecularParameters m;
  if (!(k2 > k2_floor) || !(k2 > 0)) return m;
  const double k1 = k3 / k2, kk = k4 / k2;
  const double eps2 = 3 * k1 * k1 - 2 * kk;
  if (!(eps2 > 0) || !std::isfinite(eps2)) return m;
  m.epsilon = std::sqrt(eps2);
  m.rho = std::clamp(0.5 * (1 - k1 / m.epsilon), 0.0, 1.0);
  const double w2 = m.rho * (1 - m.rho);
  if (w2 >= 0.01) m.density = k2 / (eps2 * w2);
  return m;
}

// Deconvolves one non-negative order-n image in place (w x h): Richardson-Lucy or SMRE.
using CumulantDeconvolver = std::function<void(std::span<float> image, std::int64_t width, std::int64_t height, int order)>;

// Richardson-Lucy with the order's kernel (deconvolve.hpp), iterating on `engine` (null: the CPU's).
CumulantDeconvolver richardson_lucy_deconvolver(double psf_sigma, int iterations,
                                                std::shared_ptr<DeconvolveEngine> engine = nullptr);

// Richardson-Lucy iterations by default: the bSOFI toolbox's documented default (sofiLinearize's
// "maximum deconvolution iterations {10}"); more sharpen the noise of orders 3 and 4 into speckles
// (bench sofi's quantum dots at 2,000 frames: error against the sample 0.30 at 10, 0.32 at 20, 0.38 at 40).
constexpr int kBalancedRlIterations = 10;

struct BalancedSettings {
  double psf_sigma = 0;        // camera PSF sigma, px
  double mask_fraction = 0.05; // of the largest reconvolved K2
};

struct BalancedImages {
  int order = 4;  // n: the largest order balanced
  std::vector<float> balanced, rho, epsilon, density;  // width * height; the last three empty when n = 3
  std::vector<std::vector<float>> linear;             // K_n per order 2..n (signed, deconvolved, per PSF mass)
};

// `images`: a problem of auto-cumulants of orders 2..n (n = 3 or 4) on the camera grid.
BalancedImages balance_sofi(const SofiProblem& problem, const SofiImages& images, const BalancedSettings& settings,
                            const CumulantDeconvolver& deconvolve);

}  // namespace nanoscopy
