// The CUDA SMRE engine (plain C++ header: no CUDA headers, so the backend
// registry can include it). It runs engine.hpp's ADMM iteration on a batch of
// frames whose every array (image, x, z, eps, A x, u1, u2, scratch, the TV
// dual, and for exact Dykstra every tiling's q) stays on one GPU for the whole
// batch; per iteration only the active flags go up and the per-frame
// statistics come back.
#pragma once

#include <cstdint>
#include <memory>

#include "nanoscopy/smre/engine.hpp"

namespace nanoscopy::cuda {

// The engine on CUDA device `gpu`. Its capacity is min(max_batch, the frames
// whose arrays fit in 85% of the device's free memory); DeviceError when not
// even one frame fits (the message says how much one frame needs).
std::unique_ptr<SmreEngine> make_cuda_smre_engine(int gpu, const SmreProblem& problem, std::int64_t max_batch);

}  // namespace nanoscopy::cuda
