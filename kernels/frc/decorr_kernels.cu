#include "common/cuda_check.hpp"
#include "frc/decorr_kernels.hpp"
#include "nanoscopy/frc/decorr_math.hpp"
#include "nanoscopy/frc/frc_math.hpp"

namespace nanoscopy::cuda {
namespace {

constexpr int threads = 256;
constexpr int run = 8;  // neighbouring coefficients per work item

__device__ float block_sum(float v, float* scratch) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float s = 0;
  if (threadIdx.x == 0)
    for (int i = 0; i < (blockDim.x + 31) / 32; ++i) s += scratch[i];
  __syncthreads();
  return s;  // valid in thread 0
}

__global__ void partial_sums_kernel(const float* image, std::int64_t n, float* partial) {
  __shared__ float scratch[32];
  float s = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    s += image[i];
  s = block_sum(s, scratch);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

__global__ void apodize_kernel(const float* image, const float* wx, const float* wy, std::int64_t width,
                               std::int64_t height, const float* partial, int parts, float* out) {
  __shared__ float mean;
  if (threadIdx.x == 0) {
    float s = 0, c = 0;  // Kahan, in block order: every block gets the same mean
    for (int i = 0; i < parts; ++i) {
      const float y = partial[i] - c, t = s + y;
      c = (t - s) - y;
      s = t;
    }
    mean = s / static_cast<float>(width * height);
  }
  __syncthreads();
  const std::int64_t n = width * height;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t y = i / width, x = i - y * width;
    out[i] = (image[i] - mean) * wy[y] * wx[x];
  }
}

__global__ void __launch_bounds__(threads)
    histogram_kernel(const float2* spectrum, DecorrPassParams p, float* partials) {
  extern __shared__ float shared[];
  const int nr = p.nr, nf = p.nf, stride = decorr_sums_stride(nr, nf);
  float* amp = shared;           // nf x nr
  float* count = amp + nf * nr;  // nr
  float* power = count + nr;     // nf
  for (int i = threadIdx.x; i < stride; i += blockDim.x) shared[i] = 0.0f;
  __syncthreads();

  const std::int64_t columns = p.width / 2 + 1, per_row = (columns + run - 1) / run, items = p.height * per_row;
  float pacc[kDecorrMaxFilters];
  float aacc[kDecorrMaxFilters];
#pragma unroll
  for (int k = 0; k < kDecorrMaxFilters; ++k) pacc[k] = 0.0f;
  for (std::int64_t item = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; item < items;
       item += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t y = item / per_row, c0 = (item - y * per_row) * run;
    const std::int64_t ky = frc_math::signed_frequency(y, p.height);
    const std::int64_t c1 = c0 + run < columns ? c0 + run : columns;
    int bin = -1;
    float cacc = 0.0f;
#pragma unroll
    for (int k = 0; k < kDecorrMaxFilters; ++k) aacc[k] = 0.0f;
    for (std::int64_t c = c0; c < c1; ++c) {
      if (c == 0 && ky == 0) continue;  // the mean
      const float r2 = decorr_math::radius2<float>(c, ky, p.inv_hx, p.inv_hy);
      if (!(r2 < 1.0f)) continue;
      const float2 v = spectrum[y * columns + c];
      const float pp = v.x * v.x + v.y * v.y;
      if (!(pp > 0.0f)) continue;
      const float a = sqrtf(pp), weight = static_cast<float>(decorr_math::half_weight(c, p.width));
      const int b = decorr_math::radius_bin<float>(sqrtf(r2), p.r_min, p.inv_step, nr);
      if (b != bin) {
        if (bin >= 0 && bin < nr) {
          atomicAdd(&count[bin], cacc);
#pragma unroll
          for (int k = 0; k < kDecorrMaxFilters; ++k)
            if (k < nf) atomicAdd(&amp[k * nr + bin], aacc[k]);
        }
        bin = b;
        cacc = 0.0f;
#pragma unroll
        for (int k = 0; k < kDecorrMaxFilters; ++k) aacc[k] = 0.0f;
      }
      if (b < nr) cacc += weight;
#pragma unroll
      for (int k = 0; k < kDecorrMaxFilters; ++k) {
        if (k < nf) {
          const float q = decorr_math::highpass_weight<float>(p.two_g2[k], r2);
          pacc[k] += weight * pp * q * q;
          aacc[k] += weight * a * q;
        }
      }
    }
    if (bin >= 0 && bin < nr) {
      atomicAdd(&count[bin], cacc);
#pragma unroll
      for (int k = 0; k < kDecorrMaxFilters; ++k)
        if (k < nf) atomicAdd(&amp[k * nr + bin], aacc[k]);
    }
  }
#pragma unroll
  for (int k = 0; k < kDecorrMaxFilters; ++k) {
    if (k < nf) {
      float v = pacc[k];
      for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
      if ((threadIdx.x & 31) == 0) atomicAdd(&power[k], v);
    }
  }
  __syncthreads();
  float* mine = partials + static_cast<std::int64_t>(blockIdx.x) * stride;
  for (int i = threadIdx.x; i < stride; i += blockDim.x) mine[i] = shared[i];
}

__global__ void reduce_kernel(const float* partials, int blocks, int stride, float* sums) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= stride) return;
  float s = 0, c = 0;  // Kahan, in block order
  for (int b = 0; b < blocks; ++b) {
    const float y = partials[static_cast<std::int64_t>(b) * stride + i] - c, t = s + y;
    c = (t - s) - y;
    s = t;
  }
  sums[i] = s;
}

}  // namespace

void launch_decorr_partial_sums(const float* image, std::int64_t n, float* partial, int blocks, cudaStream_t stream) {
  partial_sums_kernel<<<blocks, threads, 0, stream>>>(image, n, partial);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_decorr_apodize(const float* image, const float* wx, const float* wy, std::int64_t width,
                           std::int64_t height, const float* partial, int parts, float* out, int blocks,
                           cudaStream_t stream) {
  apodize_kernel<<<blocks, threads, 0, stream>>>(image, wx, wy, width, height, partial, parts, out);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_decorr_histogram(const float2* spectrum, const DecorrPassParams& params, float* partials, int blocks,
                             cudaStream_t stream) {
  const std::size_t bytes = static_cast<std::size_t>(decorr_sums_stride(params.nr, params.nf)) * sizeof(float);
  histogram_kernel<<<blocks, threads, bytes, stream>>>(spectrum, params, partials);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_decorr_reduce(const float* partials, int blocks, int stride, float* sums, cudaStream_t stream) {
  reduce_kernel<<<(stride + threads - 1) / threads, threads, 0, stream>>>(partials, blocks, stride, sums);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

}  // namespace nanoscopy::cuda
