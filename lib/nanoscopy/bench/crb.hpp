// Cramér–Rao bound of the spot parameters for the fitting paper's data model:
// pixel values ~ N(μ, μ + 1/12) with μ = α·f(x, y, σ) + β (sampled Gaussian),
// variance equal to the value (plus the 1/12 of rounding to integers, which
// keeps the bound finite where μ → 0). Parameters θ = (x, y, σ, α, β).
#pragma once

#include <array>

namespace nanoscopy {

struct SpotCrb {
  double x, y, sigma;  // standard deviations (square roots of the bound), pixels
};

// Bound for one ROI of width × height with truth (x, y, σ in px, α peak height, β per pixel).
SpotCrb spot_crb(int width, int height, double x, double y, double sigma, double alpha, double beta);

}  // namespace nanoscopy
