#include <cfloat>
#include <climits>

#include "common/cuda_check.hpp"
#include "undrift/rcc_kernels.hpp"

namespace nanoscopy::cuda {
namespace {

constexpr int threads = 256;

__global__ void rcc_deposit_kernel(const rcc_math::GridPoint* points, std::int64_t count, std::int64_t width,
                                   std::int64_t height, float* image) {
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    rcc_math::BilinearDeposit d;
    if (!rcc_math::bilinear_deposit(points[k], width, height, d)) continue;
    float* p = image + d.j * width + d.i;
    atomicAdd(p, d.w[0]);
    atomicAdd(p + 1, d.w[1]);
    atomicAdd(p + width, d.w[2]);
    atomicAdd(p + width + 1, d.w[3]);
  }
}

__global__ void rcc_products_kernel(const float2* const* a, const float2* const* b, const float* gx, const float* gy,
                                    std::int64_t height, std::int64_t columns, float2* products) {
  const int k = static_cast<int>(blockIdx.y);
  const float2* fa = a[k];
  const float2* fb = b[k];
  float2* out = products + static_cast<std::int64_t>(k) * height * columns;
  const std::int64_t n = height * columns;
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t y = e / columns, c = e - y * columns;
    const float g = gy[y] * gx[c];
    const float2 p = fa[e], q = fb[e];
    // conj(p) · q, as the CPU engine (engine_cpu.cpp) forms it
    out[e] = make_float2(g * (p.x * q.x + p.y * q.y), g * (p.x * q.y - p.y * q.x));
  }
}

__global__ void rcc_peaks_kernel(const float* maps, std::int64_t width, std::int64_t height, std::int64_t row_stride,
                                 std::int64_t max_shift, DevicePeak* peaks) {
  __shared__ float best_value[threads];
  __shared__ std::int64_t best_index[threads];
  const int k = static_cast<int>(blockIdx.x);
  const float* map = maps + static_cast<std::int64_t>(k) * height * row_stride;
  const std::int64_t side = 2 * max_shift + 1, n = side * side;
  // Scan index t = (s_y + m) side + (s_x + m): the CPU's order. A thread keeps its first maximum (strictly
  // greater replaces); the reduction keeps the smaller index among equal values.
  float value = 0.0f;
  std::int64_t index = LLONG_MAX;
  for (std::int64_t t = threadIdx.x; t < n; t += blockDim.x) {
    const std::int64_t sy = t / side - max_shift, sx = t % side - max_shift;
    const float v = map[rcc_math::wrap(sy, height) * row_stride + rcc_math::wrap(sx, width)];
    if (v > value) {
      value = v;
      index = t;
    }
  }
  best_value[threadIdx.x] = value;
  best_index[threadIdx.x] = index;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) {
      const float v = best_value[threadIdx.x + stride];
      const std::int64_t i = best_index[threadIdx.x + stride];
      if (v > best_value[threadIdx.x] || (v == best_value[threadIdx.x] && i < best_index[threadIdx.x])) {
        best_value[threadIdx.x] = v;
        best_index[threadIdx.x] = i;
      }
    }
    __syncthreads();
  }
  const std::int64_t best = best_index[0];
  const bool found = best != LLONG_MAX;
  // Not found: the window around shift 0, as the CPU engine leaves it.
  const std::int64_t sy = found ? best / side - max_shift : 0, sx = found ? best % side - max_shift : 0;
  DevicePeak& out = peaks[k];
  constexpr int r = CorrelationPeak::radius, s = CorrelationPeak::side;
  if (threadIdx.x < s * s) {
    const int u = static_cast<int>(threadIdx.x) % s - r, v = static_cast<int>(threadIdx.x) / s - r;
    out.window[threadIdx.x] = map[rcc_math::wrap(sy + v, height) * row_stride + rcc_math::wrap(sx + u, width)];
  }
  if (threadIdx.x == 0) {
    out.shift_x = static_cast<std::int32_t>(sx);
    out.shift_y = static_cast<std::int32_t>(sy);
    out.found = found ? 1 : 0;
    out.pad = 0;
  }
}

}  // namespace

void launch_rcc_deposit(const rcc_math::GridPoint* points, std::int64_t count, std::int64_t width,
                        std::int64_t height, float* image, int blocks, cudaStream_t stream) {
  if (count <= 0) return;
  rcc_deposit_kernel<<<blocks, threads, 0, stream>>>(points, count, width, height, image);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_rcc_products(const float2* const* a, const float2* const* b, const float* gx, const float* gy,
                         std::int64_t height, std::int64_t columns, float2* products, int count, int blocks,
                         cudaStream_t stream) {
  if (count <= 0) return;
  rcc_products_kernel<<<dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(count)), threads, 0, stream>>>(
      a, b, gx, gy, height, columns, products);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_rcc_peaks(const float* maps, std::int64_t width, std::int64_t height, std::int64_t row_stride,
                      std::int64_t max_shift, DevicePeak* peaks, int count, cudaStream_t stream) {
  if (count <= 0) return;
  static_assert(CorrelationPeak::side * CorrelationPeak::side <= threads);
  rcc_peaks_kernel<<<count, threads, 0, stream>>>(maps, width, height, row_stride, max_shift, peaks);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

}  // namespace nanoscopy::cuda
