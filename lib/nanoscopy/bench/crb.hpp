// Cramér–Rao bound of the spot parameters for the fitting paper's data model:
// pixel values ~ N(μ, μ + 1/12) with μ = α·f(x, y, σ) + β (sampled Gaussian),
// variance equal to the value (plus the 1/12 of rounding to integers, which
// keeps the bound finite where μ → 0). Parameters θ = (x, y, σ, α, β).
#pragma once

#include <array>

#include "nanoscopy/fit/simulate_spots.hpp"

namespace nanoscopy {

struct SpotCrb {
  double x, y, sigma;  // standard deviations (square roots of the bound), pixels
  double z = 0;        // nm (the astigmatic model), else 0
};

// Bound for one ROI of width × height with truth (x, y, σ in px, α peak height, β per pixel).
SpotCrb spot_crb(int width, int height, double x, double y, double sigma, double alpha, double beta);

// The Poisson bound (pixel values ~ Poisson(μ), the MLE's data model) of one
// spot of `recipe` with truth `t`, for the recipe's model: θ = (x, y, the
// model's width parameters or z, α, β); ∂μ/∂θ by central differences of the
// simulator's own image formation (independent of the fit's analytic
// derivatives). `sigma` is the bound of σ (σx for two widths; NaN in 3D).
SpotCrb poisson_spot_crb(const SpotRecipe& recipe, const SpotTruth& t);

}  // namespace nanoscopy
