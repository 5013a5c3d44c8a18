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
// Capacity: chunk_frames, fewer where two device frame buffers of that many
// float32 frames do not fit next to the sums in 85 % of the free memory.
std::unique_ptr<SofiEngine> make_cuda_sofi_engine(int gpu, const SofiProblem& plan, std::int64_t chunk_frames);

// bench: the accumulation kernels alone on `frames` random uint16 frames
// (values 100..2099, K = 0) already on GPU `gpu`, as one chunk (tuples
// [0, frames - min_window), each term's to its window; sums [0, frames)); one
// warm-up run, then `repeats`
// timed with CUDA events. Returns seconds per run. `bytes_moved` (if given)
// receives the device-memory traffic of one run, the minimum the kernels need:
//   frames * W * H * 2            every frame read once (auto path; the generic
//                                 path re-reads neighbours/lags from L1/L2)
// + W * H * 4                     the shift frame K
// + S * (terms + 1) * W * H * 16  each of S time segments reads and writes
//                                 every term sum and the frame sum once
// (S, chosen per launch to fill the GPU, is 1..a few); bandwidth = bytes / seconds.
double time_device_resident_sofi(int gpu, const SofiProblem& plan, std::int64_t frames, int repeats,
                                 std::int64_t* bytes_moved = nullptr);

}  // namespace nanoscopy::cuda
