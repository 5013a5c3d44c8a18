// The CUDA FRC engine (plain C++ header, for the backend registry): both
// images go up as float, are windowed into double, transformed by one cuFFT
// D2Z plan (batch 2) and summed per ring in double on the GPU; only the ring
// sums (3 (N/2 + 1) doubles) come back. Buffers and the cuFFT plan are made
// once per geometry and reused for every pair.
#pragma once

#include <memory>

#include "nanoscopy/frc/engine.hpp"

namespace nanoscopy::cuda {

// The engine on CUDA device `gpu`. DeviceError when the buffers and the
// cuFFT plan do not fit in the device's free memory, or an image has 2^31
// pixels or more (cuFFT's 32-bit plan sizes).
std::unique_ptr<FrcEngine> make_cuda_frc_engine(int gpu, const FrcGeometry& geometry);

}  // namespace nanoscopy::cuda
