// Launchers of the RCC kernels (rcc_kernels.cu), for engine_cuda.cpp. All are
// asynchronous on `stream` and check the launch.
//
// Layout: a grid of width x height floats (row-major); its single-precision
// half spectrum is height rows of columns = width / 2 + 1 complex values. A
// batch of pair products is `batch` half spectra back to back (height * columns
// apart), transformed in place by cuFFT C2R, after which pair k's correlation
// map is height rows of row_stride = 2 * columns floats from k * height *
// row_stride (the first width of each row are the values).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "nanoscopy/loc/undrift/engine.hpp"
#include "nanoscopy/loc/undrift/rcc_math.hpp"

namespace nanoscopy::cuda {

// A pair's correlation maximum as the kernel writes it (CorrelationPeak's
// fields, in float as the map holds them).
struct DevicePeak {
  std::int32_t shift_x = 0, shift_y = 0;
  std::int32_t found = 0;
  std::int32_t pad = 0;
  float window[CorrelationPeak::side * CorrelationPeak::side];
};

// The bilinear histogram of `count` points added into `image` (zeroed by the
// caller): one thread per point, four atomic adds (rcc_math::bilinear_deposit).
void launch_rcc_deposit(const rcc_math::GridPoint* points, std::int64_t count, std::int64_t width,
                        std::int64_t height, float* image, int blocks, cudaStream_t stream);

// products[k] = g · conj(F_a[k]) · F_b[k] for k < count, with g = gx[c] gy[y]
// (the blur's transfer function); a[k], b[k] point to kept half spectra.
// Grid: (blocks, count) x 256 threads, grid-stride over height * columns.
void launch_rcc_products(const float2* const* a, const float2* const* b, const float* gx, const float* gy,
                         std::int64_t height, std::int64_t columns, float2* products, int count, int blocks,
                         cudaStream_t stream);

// The maximum of each of `count` maps over the shifts |s_x|, |s_y| ≤ max_shift
// (circular), first in the CPU engine's scan order among equal values (s_y
// outer, s_x inner, both from −max_shift), only values > 0; and the window of
// radius CorrelationPeak::radius around it. One block of 256 threads per map.
void launch_rcc_peaks(const float* maps, std::int64_t width, std::int64_t height, std::int64_t row_stride,
                      std::int64_t max_shift, DevicePeak* peaks, int count, cudaStream_t stream);

}  // namespace nanoscopy::cuda
