// The CUDA engine of Richardson-Lucy (nanoscopy/sofi/deconvolve_engine.hpp;
// plain C++ header for the registry).
#pragma once

#include <memory>

#include "nanoscopy/sofi/deconvolve_engine.hpp"

namespace nanoscopy::cuda {

// Buffers on CUDA device `gpu`, grown to the largest image seen.
std::unique_ptr<DeconvolveEngine> make_cuda_deconvolve_engine(int gpu);

}  // namespace nanoscopy::cuda
