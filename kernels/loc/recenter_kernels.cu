#include "loc/recenter_kernels.hpp"

#include "common/cuda_check.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/loc/recenter.hpp"

namespace nanoscopy::cuda {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::int64_t items) {
  const std::int64_t b = (items + kThreads - 1) / kThreads;
  if (b > 0x7fffffff) throw UsageError("fit", "too many ROIs for one launch");
  return static_cast<unsigned>(b);
}

__global__ void select_kernel(const FitResult* fits, const RoiOrigin* origins, std::int64_t count, int box, int width,
                              int height, float distance, std::int32_t* moved, RoiOrigin* moved_origins,
                              unsigned long long* moved_count) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= count) return;
  RoiOrigin o;
  if (!recentred_origin(fits[k], origins[k], box, width, height, distance, o)) return;
  const unsigned long long j = atomicAdd(moved_count, 1ull);
  moved[j] = static_cast<std::int32_t>(k);
  moved_origins[j] = o;
}

// One thread per ROI pixel.
template <typename Pixel>
__global__ void cut_kernel(const Pixel* frames, std::int64_t first_frame, int width, int height,
                           const Candidate* candidates, const std::int32_t* moved, const RoiOrigin* moved_origins,
                           std::int64_t count, int box, Pixel* rois) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t roi = static_cast<std::int64_t>(box) * box;
  if (i >= count * roi) return;
  const std::int64_t j = i / roi;
  const int q = static_cast<int>(i - j * roi);
  const int r = q / box, c = q - r * box;
  const std::int64_t f = candidates[moved[j]].frame - first_frame;
  const RoiOrigin o = moved_origins[j];
  rois[i] = frames[(f * height + o.y0 + r) * width + o.x0 + c];
}

}  // namespace

void launch_recenter_select(const FitResult* fits, const RoiOrigin* origins, std::int64_t count, int box, int width,
                            int height, float distance, std::int32_t* moved, RoiOrigin* moved_origins,
                            unsigned long long* moved_count, cudaStream_t stream) {
  if (count <= 0) return;
  if (count > 0x7fffffff) throw UsageError("fit", "too many fits in one chunk to re-centre");
  select_kernel<<<blocks_for(count), kThreads, 0, stream>>>(fits, origins, count, box, width, height, distance, moved,
                                                            moved_origins, moved_count);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_recenter_cut(const void* frames, bool u16, std::int64_t first_frame, int width, int height,
                         const Candidate* candidates, const std::int32_t* moved, const RoiOrigin* moved_origins,
                         std::int64_t count, int box, void* rois, cudaStream_t stream) {
  if (count <= 0) return;
  const unsigned blocks = blocks_for(count * box * box);
  if (u16)
    cut_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const std::uint16_t*>(frames), first_frame, width, height,
                                                candidates, moved, moved_origins, count, box,
                                                static_cast<std::uint16_t*>(rois));
  else
    cut_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const float*>(frames), first_frame, width, height,
                                                candidates, moved, moved_origins, count, box,
                                                static_cast<float*>(rois));
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

}  // namespace nanoscopy::cuda
