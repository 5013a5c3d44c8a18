// The CUDA backend's entry in the registry: one table of every engine factory
// (backend/accelerator.hpp), the only thing the registry reaches in kernels/.
#pragma once

#include "nanoscopy/core/accelerator.hpp"

namespace nanoscopy::cuda {

const Accelerator& accelerator();

}  // namespace nanoscopy::cuda
