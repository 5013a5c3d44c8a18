// The CUDA engine of eSRRF (nanoscopy/sofi/esrrf_engine.hpp; plain C++ header
// for the registry).
#pragma once

#include <cstdint>
#include <memory>

#include "nanoscopy/sofi/esrrf_engine.hpp"

namespace nanoscopy::cuda {

// The temporal sums on GPU `gpu`; chunks of at most `chunk_frames` frames, fewer
// where the chunk's buffers would take more than a quarter of the free memory.
std::unique_ptr<EsrrfEngine> make_cuda_esrrf_engine(int gpu, const EsrrfGeometry& geometry,
                                                    const EsrrfSettings& settings, std::int64_t chunk_frames);

}  // namespace nanoscopy::cuda
