// Richardson-Lucy's separable passes (deconvolve_kernels.hpp). A balanced
// SOFI image is small (512^2: 1 MB) and its kernels have 9-13 taps, so one
// thread per output pixel reading its neighbours through L1 is enough: the
// whole deconvolution of three orders (10 iterations each) is a few milliseconds.
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

enum class Pass { rows, columns_ratio, columns_multiply };

// One separable pass: the sum along the row (stride 1) or the column (stride width) through each pixel,
// then what the pass does with it.
__global__ void __launch_bounds__(tile_x* tile_y)
    rl_pass_kernel(RlImage im, bool flip, Pass pass, const float* in, const float* yimg, float floor, float* out) {
  __shared__ float taps[max_taps];
  load_taps(taps, im.taps, 2 * im.radius + 1, flip);
  const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * tile_x + threadIdx.x;
  const std::int64_t y = static_cast<std::int64_t>(blockIdx.y) * tile_y + threadIdx.y;
  if (x >= im.width || y >= im.height) return;
  const bool rows = pass == Pass::rows;
  const std::int64_t i = rows ? x : y, last = (rows ? im.width : im.height) - 1, stride = rows ? 1 : im.width;
  const std::int64_t k = y * im.width + x;
  const int r = im.radius;
  const std::int64_t lo = i - r < 0 ? 0 : i - r, hi = i + r > last ? last : i + r;
  float s = 0.0f;
  for (std::int64_t j = lo; j <= hi; ++j) s = __fadd_rn(s, __fmul_rn(taps[j - i + r], in[k + (j - i) * stride]));
  if (pass == Pass::rows)
    out[k] = s;
  else if (pass == Pass::columns_ratio)
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
  rl_pass_kernel<<<grid_of(im), dim3(tile_x, tile_y), 0, stream>>>(im, flip, Pass::rows, in, nullptr, 0.0f, out);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_rl_columns(const RlImage& im, bool flip, ColumnStep step, const float* in, const float* y, float floor,
                       float* out, cudaStream_t stream) {
  const Pass pass = step == ColumnStep::ratio ? Pass::columns_ratio : Pass::columns_multiply;
  rl_pass_kernel<<<grid_of(im), dim3(tile_x, tile_y), 0, stream>>>(im, flip, pass, in, y, floor, out);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

}  // namespace nanoscopy::cuda
