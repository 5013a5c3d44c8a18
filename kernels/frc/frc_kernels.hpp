// Launchers of the FRC kernels (frc_kernels.cu), for engine_cuda.cpp. Both are
// asynchronous on `stream` and check the launch.
//
// Layout: two images of width x height (row-major) back to back; their
// real-to-complex transforms (cuFFT D2Z, batch 2) are height rows of
// columns = width/2 + 1 complex values each, image 2 at height * columns.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace nanoscopy::cuda {

// out[i] = a[i] wx[x] wy[y], out[w h + i] = b[i] wx[x] wy[y], in double.
// Grid: 1-D, 256 threads, grid-stride over the w h pixels.
void launch_frc_window(const float* a, const float* b, const double* wx, const double* wy, std::int64_t width,
                       std::int64_t height, double* out, int blocks, cudaStream_t stream);

// Adds each coefficient of the half spectra to its ring (frc_math.hpp:
// ring_index, half_spectrum_weight): sums[r] += Re F1 F2*,
// sums[rings + r] += |F1|^2, sums[2 rings + r] += |F2|^2 (sums zeroed first,
// rings = N/2 + 1). Grid: `blocks` x 256 threads, grid-stride over the
// height x columns coefficients; each block accumulates in a shared-memory
// histogram of 3 rings doubles when that fits in `shared_limit` bytes (then
// one atomic add per ring and block to global memory), else adds to global
// memory directly.
void launch_frc_ring_sums(const double2* spectra, std::int64_t width, std::int64_t height, std::int64_t rings,
                          double* sums, int blocks, std::size_t shared_limit, cudaStream_t stream);

}  // namespace nanoscopy::cuda
