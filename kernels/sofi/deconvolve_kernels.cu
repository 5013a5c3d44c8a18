// Richardson-Lucy's separable passes (deconvolve_kernels.hpp). A balanced
// SOFI image is small (512^2: 1 MB) and its kernels have 9-13 taps, so one
// thread per output pixel reading its neighbours through L1 is enough: the
// whole 20-iteration deconvolution of three orders is a few milliseconds.
#include <cuda_runtime.h>

#include <cstdint>

#include "common/cuda_check.hpp"
#include "sofi/deconvolve_kernels.hpp"

namespace nanoscopy::cuda {
namespace {

constexpr int tile_x = 32, tile_y = 8;
constexpr int max_taps = 129;

__device__ __forceinline__ void load_taps(float* dst, const float* taps, int count, bool flip) {
  const int tid = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  for (int i = tid; i < count; i += static_cast<int>(blockDim.x * blockDim.y)) dst[i] = taps[flip ? count - 1 - i : i];
  __syncthreads();
}

__global__ void __launch_bounds__(tile_x* tile_y) rows_kernel(RlImage im, bool flip, const float* in, float* out) {
  __shared__ float taps[max_taps];
  load_taps(taps, im.taps, 2 * im.radius + 1, flip);
  const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * tile_x + threadIdx.x;
  const std::int64_t y = static_cast<std::int64_t>(blockIdx.y) * tile_y + threadIdx.y;
  if (x >= im.width || y >= im.height) return;
  const int r = im.radius;
  const std::int64_t lo = x - r < 0 ? 0 : x - r, hi = x + r > im.width - 1 ? im.width - 1 : x + r;
  const float* row = in + y * im.width;
  float s = 0.0f;
  for (std::int64_t j = lo; j <= hi; ++j) s = __fadd_rn(s, __fmul_rn(taps[j - x + r], row[j]));
  out[y * im.width + x] = s;
}

__global__ void __launch_bounds__(tile_x* tile_y)
    columns_kernel(RlImage im, bool flip, ColumnStep step, const float* in, const float* yimg, float floor, float* out) {
  __shared__ float taps[max_taps];
  load_taps(taps, im.taps, 2 * im.radius + 1, flip);
  const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * tile_x + threadIdx.x;
  const std::int64_t y = static_cast<std::int64_t>(blockIdx.y) * tile_y + threadIdx.y;
  if (x >= im.width || y >= im.height) return;
  const int r = im.radius;
  const std::int64_t lo = y - r < 0 ? 0 : y - r, hi = y + r > im.height - 1 ? im.height - 1 : y + r;
  float s = 0.0f;
  for (std::int64_t j = lo; j <= hi; ++j) s = __fadd_rn(s, __fmul_rn(taps[j - y + r], in[j * im.width + x]));
  const std::int64_t k = y * im.width + x;
  if (step == ColumnStep::ratio)
    out[k] = s > floor ? __fdiv_rn(yimg[k], s) : 0.0f;
  else
    out[k] = __fmul_rn(out[k], s);
}

dim3 grid_of(const RlImage& im) {
  return dim3(static_cast<unsigned>((im.width + tile_x - 1) / tile_x),
              static_cast<unsigned>((im.height + tile_y - 1) / tile_y));
}

}  // namespace

void launch_rl_rows(const RlImage& im, bool flip, const float* in, float* out, cudaStream_t stream) {
  rows_kernel<<<grid_of(im), dim3(tile_x, tile_y), 0, stream>>>(im, flip, in, out);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_rl_columns(const RlImage& im, bool flip, ColumnStep step, const float* in, const float* y, float floor,
                       float* out, cudaStream_t stream) {
  columns_kernel<<<grid_of(im), dim3(tile_x, tile_y), 0, stream>>>(im, flip, step, in, y, floor, out);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

}  // namespace nanoscopy::cuda
