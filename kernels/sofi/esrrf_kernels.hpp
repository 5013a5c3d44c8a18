// Launchers of eSRRF's kernels (esrrf_kernels.cu): the per-pixel functions of
// nanoscopy/sofi/esrrf_math.hpp over a chunk of frames, in the CPU reference's
// order per pixel (frames in order, slots in order), all in float.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "nanoscopy/sofi/esrrf_math.hpp"

namespace nanoscopy::cuda {

constexpr int kEsrrfMaxSlots = 64;

// Time points of the chunk by value (a kernel parameter, < 4 KB).
struct EsrrfSlotArray {
  int count = 0;
  long long begin[kEsrrfMaxSlots];
  long long end[kEsrrfMaxSlots];
  long long step[kEsrrfMaxSlots];
};

struct EsrrfFrames {
  std::int64_t width = 0, height = 0, count = 0;  // input frames of the chunk
};

// raw (count frames of u16 when `u16`, else f32) -> float frames. Grid: 256 threads, one per pixel.
void launch_esrrf_convert(const void* raw, bool u16, const EsrrfFrames& f, float* out, cudaStream_t stream);
// Robert's cross of every frame. Grid: 256 threads, one per input pixel.
void launch_esrrf_gradients(const float* frames, const EsrrfFrames& f, float* gc, float* gr, cudaStream_t stream);
// The half-pixel lattices ((2h + 1) x (2w + 1) per frame). Grid: 256 threads, one per lattice point.
void launch_esrrf_lattices(const float* gc, const float* gr, const EsrrfFrames& f, int magnification, float* g2c,
                           float* g2r, cudaStream_t stream);
// RGC of every output pixel of every frame (stack frames first + j), added to the
// temporal sums of the slots holding the frame: state is slots x 5 planes of
// out_pixels floats (k, s1, s2, p, last). Grid: 32 x 8 threads, one per output pixel.
void launch_esrrf_rgc(const esrrf_math::RgcTableView& table, const float* frames, const float* g2c, const float* g2r,
                      const EsrrfFrames& f, std::int64_t first, const EsrrfSlotArray& slots, float* state,
                      cudaStream_t stream);

}  // namespace nanoscopy::cuda
