// The measurement operator A of I = A*x + eps: convolution with a sampled,
// normalized Gaussian PSF truncated at 4 sigma, with zero boundary on the
// (padded) frame. The kernel is symmetric, so A is a symmetric matrix and the
// adjoint A^T applies the same taps; apply_psf_adjoint exists to say which one a
// caller means (and a test checks <Ax, y> = <x, A^T y>).
//
// Boundary handling (decision 8): a frame is padded by reflection with a margin
// of 3 kernel radii on every side and then to a multiple of 32 (the ICD tile
// grid); A acts on the padded frame with zero boundary; the result is cropped.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace nanoscopy {

// FWHM = 2 sqrt(2 ln 2) sigma.
double fwhm_to_sigma(double fwhm);

struct PsfKernel {
  double sigma = 0.0;
  int radius = 0;           // taps = 2 radius + 1
  std::vector<float> taps;  // sums to 1
};
PsfKernel make_psf_kernel(double sigma);

// Padding plan for a width x height frame.
struct Padding {
  std::int64_t width = 0, height = 0;                // original
  std::int64_t left = 0, top = 0;                    // offset of the original in the padded frame
  std::int64_t padded_width = 0, padded_height = 0;  // multiples of `multiple`
  bool padded() const { return padded_width != width || padded_height != height; }
};
Padding plan_padding(std::int64_t width, std::int64_t height, int margin, int multiple = 32);

// Reflects (whole-sample symmetric: ... 2 1 | 0 1 2 ... | n-2 n-3 ...) a frame into the padded one.
void pad_reflect(std::span<const float> frame, const Padding& p, std::span<float> padded);
void crop(std::span<const float> padded, const Padding& p, std::span<float> frame);

// out = A in on one w x h frame (separable; `scratch` grows to w*h). OpenMP inside.
void apply_psf(const PsfKernel& k, std::span<const float> in, std::span<float> out, std::int64_t w, std::int64_t h,
               std::vector<float>& scratch);
void apply_psf_adjoint(const PsfKernel& k, std::span<const float> in, std::span<float> out, std::int64_t w,
                       std::int64_t h, std::vector<float>& scratch);

}  // namespace nanoscopy
