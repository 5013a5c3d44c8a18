// The CUDA SOFI engine (plain C++ header: no CUDA headers, so the backend
// registry can include it). The block's term and frame sums and the plane sums
// stay on one GPU; chunks are uploaded from pinned buffers on a stream while the
// host reads the next chunk.
#pragma once

#include <cstdint>
#include <memory>

#include "nanoscopy/sofi/engine.hpp"

namespace nanoscopy::cuda {

// The engine on CUDA device `gpu` with chunks of up to `chunk_frames` frames.
// DeviceError when the sums do not fit in the device's free memory.
std::unique_ptr<SofiEngine> make_cuda_sofi_engine(int gpu, const SofiPlan& plan, std::int64_t chunk_frames);

}  // namespace nanoscopy::cuda
