// The CUDA decorrelation engine (plain C++ header, for the backend registry):
// the image goes up as float, is apodized and transformed by one cuFFT R2C
// plan in float; each pass (radii x filters, decorr.hpp) is one histogram
// kernel over the half spectrum plus one reduction, and only its
// nf * nr + nr + nf sums come back. Buffers and the plan are made once per
// image size and reused for every frame.
#pragma once

#include <memory>

#include "nanoscopy/frc/decorr.hpp"

namespace nanoscopy::cuda {

// The engine on CUDA device `gpu`. DeviceError when its buffers and the cuFFT
// plan do not fit in the device's free memory.
std::unique_ptr<DecorrEngine> make_cuda_decorr_engine(int gpu, const DecorrGeometry& geometry);

}  // namespace nanoscopy::cuda
