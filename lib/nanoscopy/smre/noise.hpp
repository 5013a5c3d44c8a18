// Noise level and variance stabilisation for SMRE inputs.
#pragma once

#include <cstdint>
#include <span>

namespace nanoscopy {

// Robust Gaussian noise std of one frame: the MAD of the frame filtered with
// Immerkaer's Laplacian-difference mask [1 -2 1; -2 4 -2; 1 -2 1] (which cancels
// planes and is nearly blind to smooth, blurred structure), scaled by
// 1.4826 / sqrt(36). Returns 0 for frames smaller than 3x3.
double estimate_noise_sigma(std::span<const float> frame, std::int64_t width, std::int64_t height);

// 2 sqrt(x + 3/8) in place (Poisson -> approximately N(., 1)).
void anscombe_forward(std::span<float> values);
// The Makitalo-Foi closed-form unbiased inverse in place.
void anscombe_inverse(std::span<float> values);

}  // namespace nanoscopy
