// The per-pixel ADMM kernels of the SMRE engine outside the PSF passes: the TV
// z-step, the dual update with its statistics, and the per-frame reduction of
// the statistics (geometry: smre_kernels.hpp).
#include <cuda_runtime.h>

#include <cstdint>

#include "common/cuda_check.hpp"
#include "nanoscopy/smre/smre_math.hpp"
#include "smre/block_reduce.cuh"
#include "smre/smre_kernels.hpp"

namespace nanoscopy::cuda {
namespace {

namespace m = smre_math;
using smre_detail::block_sum_to_first;

constexpr int tv_block_x = 32, tv_block_y = 8;
constexpr int dual_threads = 256;
constexpr int dual_pixels = 4 * dual_threads;  // per block; every frame has a multiple of 1024 pixels
constexpr int stats_threads = 256;

struct TvArgs {
  std::int64_t width, height, pixels;
  const std::uint8_t* active;
  SmreArrays a;
  float rho2, theta;
};

struct TvPixel {
  std::int64_t x, y, i;  // i: index of the frame's first pixel
  bool inside;
};

__device__ __forceinline__ TvPixel tv_pixel(const TvArgs& p) {
  TvPixel q;
  q.x = static_cast<std::int64_t>(blockIdx.x) * tv_block_x + threadIdx.x;
  q.y = static_cast<std::int64_t>(blockIdx.y) * tv_block_y + threadIdx.y;
  q.i = static_cast<std::int64_t>(blockIdx.z) * p.pixels;
  q.inside = q.x < p.width && q.y < p.height;
  return q;
}

// v = x + u2/rho2, as the CPU engine forms it.
__device__ __forceinline__ float tv_v(const TvArgs& p, std::int64_t k) {
  return m::prox_argument(p.a.x[k], p.a.u2[k], p.rho2);
}

// d = div p - v/theta, into z.
__global__ void tv_d_kernel(TvArgs p) {
  if (!p.active[blockIdx.z]) return;
  const TvPixel q = tv_pixel(p);
  if (!q.inside) return;
  const std::int64_t k = q.i + q.y * p.width + q.x;
  p.a.z[k] = m::tv_dual_argument(p.a.px + q.i, p.a.py + q.i, p.width, p.height, q.x, q.y, tv_v(p, k), p.theta);
}

// p <- (p + tau grad d) / (1 + tau |grad d|).
__global__ void tv_p_kernel(TvArgs p) {
  if (!p.active[blockIdx.z]) return;
  const TvPixel q = tv_pixel(p);
  if (!q.inside) return;
  const std::int64_t k = q.i + q.y * p.width + q.x;
  m::tv_dual_update(p.a.px[k], p.a.py[k], m::tv_gradient(p.a.z + q.i, p.width, p.height, q.x, q.y));
}

// z = v - theta div p (z = v when theta <= 0).
__global__ void tv_z_kernel(TvArgs p) {
  if (!p.active[blockIdx.z]) return;
  const TvPixel q = tv_pixel(p);
  if (!q.inside) return;
  const std::int64_t k = q.i + q.y * p.width + q.x;
  const float v = tv_v(p, k);
  p.a.z[k] = p.theta > 0.0f ? m::tv_primal(p.a.px + q.i, p.a.py + q.i, p.width, p.height, q.x, q.y, v, p.theta) : v;
}

struct DualArgs {
  std::int64_t pixels;
  const std::uint8_t* active;
  SmreArrays a;
  float alpha1, alpha2;
  StatPartials partials;
};

// grid (pixels / 1024, frames), block 256.
__global__ void __launch_bounds__(dual_threads) dual_kernel(DualArgs p) {
  const std::int64_t f = blockIdx.y;
  if (!p.active[f]) return;
  const std::int64_t k = f * p.pixels + static_cast<std::int64_t>(blockIdx.x) * dual_pixels + 4 * threadIdx.x;
  const float4 image = *reinterpret_cast<const float4*>(p.a.image + k);
  const float4 eps = *reinterpret_cast<const float4*>(p.a.eps + k);
  const float4 ax = *reinterpret_cast<const float4*>(p.a.ax + k);
  const float4 x = *reinterpret_cast<const float4*>(p.a.x + k);
  const float4 z = *reinterpret_cast<const float4*>(p.a.z + k);
  float4 u1 = *reinterpret_cast<const float4*>(p.a.u1 + k);
  float4 u2 = *reinterpret_cast<const float4*>(p.a.u2 + k);
  double c1 = 0.0, c2 = 0.0;
  auto one = [&](float i, float e, float a, float xv, float zv, float& v1, float& v2) {
    const m::DualResiduals r = m::dual_update(i, e, a, xv, zv, p.alpha1, p.alpha2, v1, v2);
    c1 += m::squared(r.r1);
    c2 += m::squared(r.r2);
  };
  one(image.x, eps.x, ax.x, x.x, z.x, u1.x, u2.x);
  one(image.y, eps.y, ax.y, x.y, z.y, u1.y, u2.y);
  one(image.z, eps.z, ax.z, x.z, z.z, u1.z, u2.z);
  one(image.w, eps.w, ax.w, x.w, z.w, u1.w, u2.w);
  *reinterpret_cast<float4*>(p.a.u1 + k) = u1;
  *reinterpret_cast<float4*>(p.a.u2 + k) = u2;
  __shared__ double scratch[32];
  const double s1 = block_sum_to_first(c1, scratch);
  __syncthreads();  // scratch is reused
  const double s2 = block_sum_to_first(c2, scratch);
  if (threadIdx.x == 0) {
    const std::int64_t slot = f * gridDim.x + blockIdx.x;
    p.partials.c1[slot] = s1;
    p.partials.c2[slot] = s2;
  }
}

struct FinishArgs {
  std::int64_t pixels, step_blocks, dual_blocks;
  const std::uint8_t* active;
  StatPartials partials;
  const int* sweeps;
  DeviceFrameStats* out;
};

__device__ double sum_partials(const double* v, std::int64_t count, double* scratch) {
  double s = 0.0;
  for (std::int64_t i = threadIdx.x; i < count; i += blockDim.x) s += v[i];
  const double total = block_sum_to_first(s, scratch);
  __syncthreads();  // scratch is reused by the next call
  return total;
}

// grid frames, block 256.
__global__ void __launch_bounds__(stats_threads) finish_kernel(FinishArgs p) {
  const std::int64_t f = blockIdx.x;
  if (!p.active[f]) return;
  __shared__ double scratch[32];
  const double step = sum_partials(p.partials.step + f * p.step_blocks, p.step_blocks, scratch);
  const double c1 = sum_partials(p.partials.c1 + f * p.dual_blocks, p.dual_blocks, scratch);
  const double c2 = sum_partials(p.partials.c2 + f * p.dual_blocks, p.dual_blocks, scratch);
  if (threadIdx.x == 0) {
    const double n = static_cast<double>(p.pixels);
    DeviceFrameStats s{};
    s.c1 = c1 / n;
    s.c2 = c2 / n;
    s.step = sqrt(step / n);
    s.sweeps = p.sweeps[f];
    p.out[f] = s;
  }
}

}  // namespace

std::int64_t dual_blocks(std::int64_t width, std::int64_t height) { return width * height / dual_pixels; }

void launch_tv_step(const SmreBatch& b, const SmreArrays& a, const SmreScalars& s, int iterations,
                    cudaStream_t stream) {
  if (b.frames <= 0) return;
  TvArgs p{};
  p.width = b.width;
  p.height = b.height;
  p.pixels = b.pixels();
  p.active = b.active;
  p.a = a;
  p.rho2 = s.rho2;
  p.theta = s.lambda / s.rho2;
  const dim3 grid(static_cast<unsigned>((b.width + tv_block_x - 1) / tv_block_x),
                  static_cast<unsigned>((b.height + tv_block_y - 1) / tv_block_y), static_cast<unsigned>(b.frames));
  const dim3 block(tv_block_x, tv_block_y);
  if (p.theta > 0.0f) {
    for (int it = 0; it < iterations; ++it) {
      tv_d_kernel<<<grid, block, 0, stream>>>(p);
      NANOSCOPY_CUDA_CHECK_LAUNCH();
      tv_p_kernel<<<grid, block, 0, stream>>>(p);
      NANOSCOPY_CUDA_CHECK_LAUNCH();
    }
  }
  tv_z_kernel<<<grid, block, 0, stream>>>(p);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_dual_update(const SmreBatch& b, const SmreArrays& a, const SmreScalars& s, const StatPartials& partials,
                        cudaStream_t stream) {
  if (b.frames <= 0) return;
  DualArgs p{};
  p.pixels = b.pixels();
  p.active = b.active;
  p.a = a;
  p.alpha1 = s.alpha1;
  p.alpha2 = s.alpha2;
  p.partials = partials;
  const dim3 grid(static_cast<unsigned>(dual_blocks(b.width, b.height)), static_cast<unsigned>(b.frames));
  dual_kernel<<<grid, dual_threads, 0, stream>>>(p);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_finish_stats(const SmreBatch& b, const StatPartials& partials, const int* sweeps, DeviceFrameStats* out,
                         cudaStream_t stream) {
  if (b.frames <= 0) return;
  FinishArgs p{};
  p.pixels = b.pixels();
  p.step_blocks = psf_col_blocks(b.width, b.height);
  p.dual_blocks = dual_blocks(b.width, b.height);
  p.active = b.active;
  p.partials = partials;
  p.sweeps = sweeps;
  p.out = out;
  finish_kernel<<<static_cast<unsigned>(b.frames), stats_threads, 0, stream>>>(p);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

}  // namespace nanoscopy::cuda
