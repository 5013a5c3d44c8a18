#include "sofi/correction_kernels.hpp"

#include "common/cuda_check.hpp"

namespace nanoscopy::cuda {
namespace {

template <typename T>
__global__ void correct_frames_kernel(const T* __restrict__ frames, std::int64_t w, std::int64_t h,
                                      const SofiFrameCorrection* __restrict__ corrections, float* __restrict__ out) {
  const std::int64_t pixels = w * h;
  const std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= pixels) return;
  const std::int64_t j = blockIdx.y;
  const SofiFrameCorrection c = corrections[j];
  out[j * pixels + p] = sofi_math::corrected_pixel(frames + j * pixels, w, h, p % w, p / w, c);
}

}  // namespace

void launch_sofi_correct_frames(const void* frames, bool u16, std::int64_t width, std::int64_t height,
                                std::int64_t count, const SofiFrameCorrection* corrections, float* out,
                                cudaStream_t stream) {
  const std::int64_t pixels = width * height;
  if (pixels <= 0 || count <= 0) return;
  // gridDim.y is at most 65535: longer chunks in slices.
  for (std::int64_t first = 0; first < count; first += 65535) {
    const std::int64_t n = count - first < 65535 ? count - first : 65535;
    const dim3 grid(static_cast<unsigned>((pixels + 255) / 256), static_cast<unsigned>(n));
    float* dst = out + first * pixels;
    if (u16)
      correct_frames_kernel<<<grid, 256, 0, stream>>>(static_cast<const std::uint16_t*>(frames) + first * pixels,
                                                      width, height, corrections + first, dst);
    else
      correct_frames_kernel<<<grid, 256, 0, stream>>>(static_cast<const float*>(frames) + first * pixels, width,
                                                      height, corrections + first, dst);
    NANOSCOPY_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace nanoscopy::cuda
