#include "loc/camera_maps_kernels.hpp"

#include "common/cuda_check.hpp"
#include "nanoscopy/core/camera_maps.hpp"
#include "nanoscopy/core/error.hpp"

namespace nanoscopy::cuda {
namespace {

// One thread per ROI pixel; the detection keeps every ROI inside the frame, so
// inside the (frame-sized) maps.
template <typename Pixel>
__global__ void rois_to_photons_kernel(const Pixel* rois, const RoiOrigin* origins, std::int64_t count, int box,
                                       DeviceMaps maps, float* photons, float* shifts) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t roi = static_cast<std::int64_t>(box) * box;
  if (i >= count * roi) return;
  const std::int64_t k = i / roi;
  const int q = static_cast<int>(i - k * roi);
  const int j = q / box, c = q - j * box;
  const RoiOrigin o = origins[k];
  const std::int64_t at = static_cast<std::int64_t>(o.y0 + j) * maps.width + o.x0 + c;
  const float gain = maps.gain[at];
  photons[i] = scmos_photons(static_cast<float>(rois[i]), maps.offset[at], gain);
  shifts[i] = scmos_variance_shift(maps.variance[at], gain);
}

}  // namespace

void launch_rois_to_photons(const void* rois, bool rois_u16, const RoiOrigin* origins, std::int64_t count, int box,
                            const DeviceMaps& maps, float* photons, float* shifts, cudaStream_t stream) {
  if (count <= 0) return;
  constexpr int threads = 256;
  const std::int64_t items = count * box * box;
  const std::int64_t blocks = (items + threads - 1) / threads;
  if (blocks > 0x7fffffff) throw UsageError("fit", "too many ROI pixels for one launch");
  if (rois_u16)
    rois_to_photons_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
        static_cast<const std::uint16_t*>(rois), origins, count, box, maps, photons, shifts);
  else
    rois_to_photons_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
        static_cast<const float*>(rois), origins, count, box, maps, photons, shifts);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

}  // namespace nanoscopy::cuda
