// Richardson-Lucy deconvolution of SOFI cumulant images (balanced SOFI).
//
// The PSF model is the one the simulator and the integrated fit use: a Gaussian
// of standard deviation sigma integrated over each pixel, U(x, y) = u(x) u(y)
// with u(i) = (erf((i + 1/2) / (sqrt(2) sigma)) - erf((i - 1/2) / (sqrt(2) sigma))) / 2,
// which sums to 1. An auto-cumulant of order n images each emitter with U^n
// (notes/reference.md 5): U^n = u(x)^n u(y)^n is separable again, with a width
// of about sigma / sqrt(n), so order n is deconvolved with the 1-D taps u^n,
// normalized to sum 1, along rows and then columns.
//
// Why a direct separable convolution and not FFTs: for SOFI's PSFs (sigma of
// 1-3 px, narrower still for order n) the order-n kernel has 9-25 taps, and
// two 1-D passes of that cost less than a forward and an inverse 2-D FFT of
// the frame (docs/benchmarks.md, "balanced SOFI", measures both on 512^2).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nanoscopy/smre/psf.hpp"
#include "nanoscopy/sofi/deconvolve_engine.hpp"

namespace nanoscopy {

// The pixel-integrated PSF's 1-D profile u(i), i = -radius..radius, radius = ceil(4 sigma) + 1.
std::vector<double> integrated_psf_profile(double sigma);

// The order-n kernel: taps u^n / sum(u^n) within 4 sigma / sqrt(n) (+1 px); sigma / sqrt(n) as its sigma.
PsfKernel order_psf_kernel(double sigma, int order);

// sum over the plane of U^n = (sum_i u(i)^n)^2: an emitter's share of an order-n
// cumulant image, summed over its spot, is eps^n w_n times this.
double order_psf_mass(double sigma, int order);

// Richardson-Lucy in place on a non-negative w x h image:
//   x <- x * A^T (y / A x), starting from x = y,
// with A the separable kernel; the image is padded by reflection (3 kernel radii)
// so that the edges are not taken for dark surroundings. A x keeps the flux of x,
// so the result keeps the image's sum (up to the padding). InputError for a
// negative or non-finite pixel.
void richardson_lucy(std::span<float> image, std::int64_t width, std::int64_t height, const PsfKernel& kernel,
                     int iterations);
// The same with the iterations on `engine` (the CUDA one: deconvolve_engine.hpp).
void richardson_lucy(std::span<float> image, std::int64_t width, std::int64_t height, const PsfKernel& kernel,
                     int iterations, DeconvolveEngine& engine);

// Convolution with a separable kernel on a reflection-padded copy (the reconvolution of balanced SOFI).
void convolve_reflect(std::span<float> image, std::int64_t width, std::int64_t height, const PsfKernel& kernel);

}  // namespace nanoscopy
