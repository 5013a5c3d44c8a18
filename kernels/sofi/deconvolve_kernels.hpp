// Launchers of the separable convolutions of Richardson-Lucy on one image
// (deconvolve_kernels.cu); the sums run in the CPU reference's order (rows:
// taps left to right; columns: taps top to bottom), zero outside the image.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace nanoscopy::cuda {

// What the column pass does with each output value s.
enum class ColumnStep {
  ratio,     // out = s > floor ? y / s : 0      (the ratio y / A x)
  multiply,  // out *= s                          (x <- x * A^T ratio)
};

struct RlImage {
  std::int64_t width = 0, height = 0;
  const float* taps = nullptr;  // 2 radius + 1, device memory
  int radius = 0;
};

// out[y, x] = sum_j taps[j - x + r] in[y, j] (flip: the taps reversed, the adjoint).
void launch_rl_rows(const RlImage& im, bool flip, const float* in, float* out, cudaStream_t stream);
// s[y, x] = sum_j taps[j - y + r] in[j, x], then the step: ratio with y and floor, or multiply into out.
void launch_rl_columns(const RlImage& im, bool flip, ColumnStep step, const float* in, const float* y, float floor,
                       float* out, cudaStream_t stream);

}  // namespace nanoscopy::cuda
