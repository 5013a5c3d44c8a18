// The per-frame corrections of sofi --undrift and --bleach-correction
// exponential on the GPU (frame_correction.hpp's math, as the CPU engine's
// correct_frames applies it): `count` frames of uint16 or float32 in, float32
// out (a separate buffer: a bilinear sample reads its neighbours), one thread
// per output pixel, blocks of 256, grid (ceil(pixels / 256), count).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "nanoscopy/sofi/frame_correction.hpp"

namespace nanoscopy::cuda {

void launch_sofi_correct_frames(const void* frames, bool u16, std::int64_t width, std::int64_t height,
                                std::int64_t count, const SofiFrameCorrection* corrections, float* out,
                                cudaStream_t stream);

}  // namespace nanoscopy::cuda
