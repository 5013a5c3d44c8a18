// Re-centring on the GPU (nanoscopy/loc/recenter.hpp): which fits get a second
// box, and that box's pixels, cut from the chunk's frames still on the device.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "nanoscopy/fit/fit_types.hpp"
#include "nanoscopy/loc/detect/detect_types.hpp"

namespace nanoscopy::cuda {

// For each of `count` fits whose box moves (recentred_origin), its index k and
// the new box's origin at the next free slot j of moved / moved_origins, and
// *moved_count += 1 (the caller zeroes it). The slots' order is arbitrary; every
// second fit stands alone and goes back to its k, so the results are not.
void launch_recenter_select(const FitResult* fits, const RoiOrigin* origins, std::int64_t count, int box, int width,
                            int height, float distance, std::int32_t* moved, RoiOrigin* moved_origins,
                            unsigned long long* moved_count, cudaStream_t stream);

// The box × box ROIs (`rois`, of the frames' type: uint16 when u16, else float32)
// at moved_origins[j] in the frame of candidates[moved[j]]; `frames` are the
// chunk's, frame `first_frame` first.
void launch_recenter_cut(const void* frames, bool u16, std::int64_t first_frame, int width, int height,
                         const Candidate* candidates, const std::int32_t* moved, const RoiOrigin* moved_origins,
                         std::int64_t count, int box, void* rois, cudaStream_t stream);

}  // namespace nanoscopy::cuda
