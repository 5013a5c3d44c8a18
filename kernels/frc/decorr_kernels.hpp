// Launchers of the decorrelation kernels (decorr_kernels.cu), for
// decorr_engine_cuda.cpp. All are asynchronous on `stream` and check the launch.
//
// Layout: one image of width x height floats (row-major); its real-to-complex
// transform (cuFFT R2C) is height rows of columns = width/2 + 1 float2.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace nanoscopy::cuda {

inline constexpr int kDecorrMaxFilters = 32;  // decorr.hpp: kMaxDecorrFilters

// One pass's parameters (decorr_math.hpp): the grid, the radius bins and the filters.
struct DecorrPassParams {
  std::int64_t width = 0, height = 0;
  float inv_hx = 0, inv_hy = 0;  // 1 / floor(W/2), 1 / floor(H/2)
  float r_min = 0, inv_step = 0;
  int nr = 0, nf = 0;
  float two_g2[kDecorrMaxFilters] = {};  // 2 g^2 per filter; < 0: no filter
};

// Floats per block (and in the result) of a pass: nf * nr amplitudes, nr counts, nf powers.
constexpr int decorr_sums_stride(int nr, int nf) {
  return nf * nr + nr + nf;
}

// partial[b] = the sum of block b's share of image[0 .. n). Grid: `blocks` x 256, grid-stride.
void launch_decorr_partial_sums(const float* image, std::int64_t n, float* partial, int blocks, cudaStream_t stream);

// out[i] = (image[i] - mean) wx[x] wy[y], mean = sum(partial[0 .. parts)) / (w h), the same
// sum in every block. Grid: `blocks` x 256, grid-stride over the pixels.
void launch_decorr_apodize(const float* image, const float* wx, const float* wy, std::int64_t width,
                           std::int64_t height, const float* partial, int parts, float* out, int blocks,
                           cudaStream_t stream);

// The pass's radius-bin histograms over the half spectrum, one set per block:
// partials[b * stride + ...] (decorr_sums_stride), then summed over the blocks
// in block order by launch_decorr_reduce into sums[stride]. Grid: `blocks` x 256,
// grid-stride over runs of 8 neighbouring coefficients of a row, which mostly
// share one radius bin: a thread adds a run's terms in registers and flushes
// them to the block's shared-memory histogram once per bin change; the powers
// are reduced per warp.
void launch_decorr_histogram(const float2* spectrum, const DecorrPassParams& params, float* partials, int blocks,
                             cudaStream_t stream);
void launch_decorr_reduce(const float* partials, int blocks, int stride, float* sums, cudaStream_t stream);

}  // namespace nanoscopy::cuda
