// Settings of one SMRE restoration (the SMRE paper, Algorithm 1, eqs. 10-13,
// with the decisions of notes/reference.md section 4). Lengths are in pixels,
// intensities in the image's units (after the Anscombe transform, if any).
#pragma once

#include <string>

namespace nanoscopy {

// R(z) of eq. (10): lambda |z|^2 / 2 (the paper's choice for SOFI), lambda TV(z)
// (isotropic), or lambda |z|_1.
enum class Regularizer { l2, tv, l1 };
// P_G of eq. (12): exact Dykstra over every square of edge 1..MRdepth at every
// shift, or the incomplete Dykstra (ICD) on 32x32 tiles of dyadic squares.
enum class Projection { exact, icd };
// c_s(alpha): the alpha-quantile of the maximum statistic by seeded Monte Carlo
// over the set family, or the closed-form per-scale (Sidak) bound.
enum class WeightMethod { monte_carlo, closed_form };

struct SmreSettings {
  double psf_sigma = 3.0;     // Gaussian PSF standard deviation (px)
  double noise_sigma = 0.0;   // Gaussian noise std; 0 = estimate from each frame
  Regularizer regularizer = Regularizer::l2;
  double lambda = 1.0;        // regularization weight
  double alpha1 = 1.2, alpha2 = 0.12;  // dual step sizes
  double rho1 = 6.192, rho2 = 1.8;     // penalty weights
  double gamma = 0.1;                  // step of the linearized x-update
  int tv_iterations = 10;              // Chambolle dual iterations per z-step (warm-started)

  Projection projection = Projection::exact;
  int mr_depth = 15;                   // exact: largest square edge
  int icd_sweeps = 0;                  // ICD sweeps per tile and pass; 0 = to tolerance
  double dykstra_tolerance = 1e-3;     // stop a projection when mean |change| of eps per sweep < this * sigma
  int dykstra_max_sweeps = 200;        // cap on sweeps per projection
  bool dykstra_warm_start = true;      // start each projection from the previous one's q (dykstra.hpp)

  double coverage = 0.9;               // alpha: probability that pure noise meets every constraint
  WeightMethod weights = WeightMethod::monte_carlo;
  int weight_samples = 500;            // Monte Carlo noise images

  long long max_iterations = 10000;
  double tolerance = 1e-3;             // stop when |x_r - x_{r-1}| / sqrt(N) < tolerance * sigma (0: never)
  long long report_interval = 1;
};

const char* to_string(Regularizer r);
const char* to_string(Projection p);
const char* to_string(WeightMethod m);
Regularizer parse_regularizer(const std::string& text);  // UsageError naming the choices
WeightMethod parse_weight_method(const std::string& text);

}  // namespace nanoscopy
