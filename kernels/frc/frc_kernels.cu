#include "common/cuda_check.hpp"
#include "frc/frc_kernels.hpp"
#include "nanoscopy/frc/frc_math.hpp"

namespace nanoscopy::cuda {
namespace {

constexpr int threads = 256;

__global__ void frc_window_kernel(const float* a, const float* b, const double* wx, const double* wy,
                                  std::int64_t width, std::int64_t height, double* out) {
  const std::int64_t n = width * height;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t y = i / width, x = i - y * width;
    const double w = frc_math::window_weight(wx, wy, x, y);
    out[i] = static_cast<double>(a[i]) * w;
    out[n + i] = static_cast<double>(b[i]) * w;
  }
}

template <bool use_shared>
__global__ void frc_ring_sums_kernel(const double2* spectra, std::int64_t width, std::int64_t height,
                                     std::int64_t rings, double* sums) {
  extern __shared__ double local[];  // 3 rings (use_shared only)
  double* target = use_shared ? local : sums;
  if (use_shared) {
    for (std::int64_t i = threadIdx.x; i < 3 * rings; i += blockDim.x) local[i] = 0.0;
    __syncthreads();
  }
  const std::int64_t columns = width / 2 + 1, n = height * columns, last = rings - 1;
  const double2* f2 = spectra + n;
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t y = e / columns, c = e - y * columns;
    const std::int64_t r = frc_math::ring_index(c, frc_math::signed_frequency(y, height), width, height);
    if (r > last) continue;
    const double weight = frc_math::half_spectrum_weight(c, width);
    const double2 p = spectra[e], q = f2[e];
    const frc_math::RingTerms t = frc_math::ring_terms(p.x, p.y, q.x, q.y, weight);
    atomicAdd(&target[r], t.cross);
    atomicAdd(&target[rings + r], t.power1);
    atomicAdd(&target[2 * rings + r], t.power2);
  }
  if (use_shared) {
    __syncthreads();
    for (std::int64_t i = threadIdx.x; i < 3 * rings; i += blockDim.x)
      if (local[i] != 0.0) atomicAdd(&sums[i], local[i]);
  }
}

}  // namespace

void launch_frc_window(const float* a, const float* b, const double* wx, const double* wy, std::int64_t width,
                       std::int64_t height, double* out, int blocks, cudaStream_t stream) {
  frc_window_kernel<<<blocks, threads, 0, stream>>>(a, b, wx, wy, width, height, out);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_frc_ring_sums(const double2* spectra, std::int64_t width, std::int64_t height, std::int64_t rings,
                          double* sums, int blocks, std::size_t shared_limit, cudaStream_t stream) {
  const std::size_t bytes = 3 * static_cast<std::size_t>(rings) * sizeof(double);
  if (bytes <= shared_limit) {
    if (bytes > 48 * 1024)
      NANOSCOPY_CUDA_CHECK(cudaFuncSetAttribute(frc_ring_sums_kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(bytes)));
    frc_ring_sums_kernel<true><<<blocks, threads, bytes, stream>>>(spectra, width, height, rings, sums);
  } else {
    frc_ring_sums_kernel<false><<<blocks, threads, 0, stream>>>(spectra, width, height, rings, sums);
  }
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

}  // namespace nanoscopy::cuda
