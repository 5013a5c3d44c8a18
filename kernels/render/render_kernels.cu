#include "common/cuda_check.hpp"
#include "render/render_kernels.hpp"

namespace nanoscopy::cuda {
namespace {

constexpr int threads = 256;
constexpr int warps_per_block = threads / 32;

using render_math::RenderPoint;

__global__ void render_histogram_kernel(const RenderPoint* points, std::int64_t count, std::int64_t width,
                                        std::int64_t height, float* density, float* z_sum) {
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const RenderPoint p = points[k];
    if (!render_math::inside(p, width, height)) continue;
    const std::int64_t i = render_math::histogram_index(p, width, height);
    atomicAdd(density + i, 1.0f);
    if (z_sum) atomicAdd(z_sum + i, p.z);
  }
}

__global__ void render_gaussian_kernel(const RenderPoint* points, std::int64_t count, std::int64_t width,
                                       std::int64_t height, float* density, float* z_sum) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * warps_per_block;
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(warps_per_block) + threadIdx.x / 32; k < count;
       k += warps) {
    const RenderPoint p = points[k];  // the same address for the whole warp: one broadcast load
    if (!render_math::inside(p, width, height)) continue;
    const render_math::Footprint f = render_math::footprint(p, width, height);
    // 32-bit footprint indices (a footprint is at most the picture, ≤ 2^31 pixels): a 64-bit division
    // per pixel would cost more than its two shares.
    const auto fw = static_cast<unsigned>(f.x1 - f.x0 + 1);
    const unsigned n = fw * static_cast<unsigned>(f.y1 - f.y0 + 1);
    for (unsigned e = static_cast<unsigned>(lane); e < n; e += 32) {
      const unsigned dy = e / fw;
      const std::int64_t i = f.x0 + (e - dy * fw), j = f.y0 + dy;
      const float wx = render_math::pixel_share<float>(static_cast<float>(i), static_cast<float>(i + 1), p.u, p.sigma_u);
      const float wy = render_math::pixel_share<float>(static_cast<float>(j), static_cast<float>(j + 1), p.v, p.sigma_v);
      const float mass = wx * wy;
      atomicAdd(density + j * width + i, mass);
      if (z_sum) atomicAdd(z_sum + j * width + i, mass * p.z);
    }
  }
}

}  // namespace

void launch_render_histogram(const RenderPoint* points, std::int64_t count, std::int64_t width, std::int64_t height,
                             float* density, float* z_sum, int blocks, cudaStream_t stream) {
  if (count <= 0) return;
  render_histogram_kernel<<<blocks, threads, 0, stream>>>(points, count, width, height, density, z_sum);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_render_gaussian(const RenderPoint* points, std::int64_t count, std::int64_t width, std::int64_t height,
                            float* density, float* z_sum, int blocks, cudaStream_t stream) {
  if (count <= 0) return;
  render_gaussian_kernel<<<blocks, threads, 0, stream>>>(points, count, width, height, density, z_sum);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

}  // namespace nanoscopy::cuda
