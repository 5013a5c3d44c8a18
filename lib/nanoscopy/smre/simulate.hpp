// Test data as the SMRE paper makes it: I = A x* + N(0, sigma^2), with the very
// operator smre inverts (reflection padding, zero-boundary Gaussian blur, crop).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace nanoscopy {

// Blurs `frame` (width x height) in place with a Gaussian PSF of psf_sigma px and,
// when noise_sigma > 0, adds Gaussian noise from a generator seeded with `seed`.
void blur_and_add_noise(std::span<float> frame, std::int64_t width, std::int64_t height, double psf_sigma,
                        double noise_sigma, std::uint64_t seed);

// |a - b|_2
double l2_distance(std::span<const float> a, std::span<const float> b);

// `src` (sw x sh) extended by reflection to w x h (for test images of any size).
std::vector<float> reflect_to_size(std::span<const float> src, std::int64_t sw, std::int64_t sh, std::int64_t w,
                                   std::int64_t h);

}  // namespace nanoscopy
