// Launchers of the SOFI kernels (sofi_kernels.cu), for engine_cuda.cpp.
// Every launcher is asynchronous on `stream` and checks the launch.
//
// Accumulation (engine.hpp's accumulate(): the CPU reference is
// engine_cpu.cpp's accumulate_rows). A chunk holds `count` frames (frame j is
// sequence frame first + j); tuples t in [first, tuple_end) add
// prod_i G(clamp(p + offset_i), t + lag_i) to every term whose window allows
// them (t + window < block_end: each order's own window, problem.hpp), frames
// [first, sum_end) add G to frame_sum, G = F - K in double (exact: F and K are floats or
// integers, the difference of two floats is exact in double for camera data).
// The chunk's time range [first, max(tuple_end, sum_end)) is split into
// `segments` equal pieces (blockIdx.y); a segment covers its tuples and sums
// and reads max_lag frames past its end. With one segment the sums are updated
// by plain read-modify-write (one thread owns each value), with more by double
// atomicAdd (their order, hence the last bits, can vary from run to run).
//
//  auto path  (every variable at offset (0, 0), lags a permutation of
//    0..nv-1, every term a distinct (subset, window); nv = 2..6): the tuples
//    every window takes (t < block_end - max_lag) in the auto kernel, blocks of 256
//    threads, one thread per PX pixels (PX = 2 when the frame has an even
//    number of pixels and nv <= 4: one 32-bit uint16 pair / one float2 load per
//    frame), grid (ceil(pixels / (256 PX)), segments). Each thread reads every
//    frame of its segment once, in batches of 4-8 loads in flight, keeps the
//    last nv values of G in registers and the 2^nv - 1 subset sums and the frame
//    sum in registers; it writes them once at the end, each subset's sum to
//    its term of every window. The few tuples near the block's end that only
//    the smaller windows take (t >= block_end - max_lag) then go through the
//    generic kernel on the chunk's tail (one more launch, no frame sums).
//  generic path (neighbour offsets, other lags, repeated variables): blocks of
//    256 threads, one thread per pixel, grid (ceil(pixels / 256), segments,
//    ceil(terms / 8)); each thread keeps 8 term sums in registers and reads
//    every factor of every term per tuple its window takes (L1/L2-cached
//    loads; the frame sums in the first term group).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "nanoscopy/sofi/problem.hpp"

namespace nanoscopy::cuda {

// How a chunk's pixels are read: uint16 with every K integral (G = (2^52 + F)
// - (2^52 + K), one double add), uint16 with any K, float32.
enum class SofiSource { u16_integral_shift, u16, f32 };

// The plan on the device (arrays copied once by the engine).
struct SofiDevicePlan {
  std::int64_t width = 0, height = 0;
  int max_lag = 0;
  bool moments = false;
  int nvars = 0, nterms = 0;
  const SofiVariable* variables = nullptr;
  const SofiTerm* terms = nullptr;
  const SofiCombo* combos = nullptr;
  const SofiPlane* planes = nullptr;  // byte copies: the kernels read only upsample and combo_begin
  // The auto path: nv > 0 and term_of[L][m] (m = subset of lag slots, bit k =
  // lag k; L = window) is the term of that subset and window, or -1; nv = 0:
  // the generic path.
  int auto_nv = 0;
  int term_of[kSofiMaxOrder][kSofiMaxSubsets] = {};
  std::int64_t pixels() const { return width * height; }
};

// One chunk on the device.
struct SofiChunkArgs {
  const void* frames = nullptr;  // device: count frames (uint16 or float32 by source)
  SofiSource source = SofiSource::u16;
  std::int64_t first = 0, count = 0, tuple_end = 0, sum_end = 0;
  std::int64_t block_end = 0;  // the block's end b1: a term of window L takes tuples t < b1 - L
  const float* shift = nullptr;  // K, pixels floats
  double* frame_sum = nullptr;   // pixels doubles, added to
  double* terms = nullptr;       // nterms * pixels doubles (term-major), added to
};

// What a launch did (bench's bytes-moved count).
struct SofiLaunchInfo {
  bool auto_path = false;
  int pixels_per_thread = 1;
  int segments = 0;  // 0: nothing to do, no kernel launched
};

// Launches the accumulation of one chunk (path, pixels per thread and segments
// chosen here; `multiprocessors` sizes the segments so that the grid fills
// the GPU about twice).
SofiLaunchInfo launch_sofi_accumulate(const SofiDevicePlan& plan, const SofiChunkArgs& chunk, int multiprocessors,
                                      cudaStream_t stream);

// out[Y * pw + X] += sofi_math::plane_value(plane, ...) for every pixel of plane
// `plane` (pw x ph) of a block of `frames` frames; one thread per plane pixel,
// blocks of 256.
void launch_sofi_finish_plane(const SofiDevicePlan& plan, int plane, std::int64_t plane_width,
                              std::int64_t plane_height, const double* terms, const double* frame_sum,
                              std::int64_t frames, double* out, cudaStream_t stream);

// mean[p] += K[p] * frames + frame_sum[p]; one thread per pixel, blocks of 256.
void launch_sofi_mean_frame(const float* shift, const double* frame_sum, std::int64_t frames, std::int64_t pixels,
                            double* mean, cudaStream_t stream);

// Fills `count` uint16 values with hashed pseudo-random numbers in [100, 2100)
// (bench timings); blocks of 256 threads, 4 values per thread.
void launch_sofi_fill_random(std::uint16_t* values, std::int64_t count, std::uint64_t seed, cudaStream_t stream);

}  // namespace nanoscopy::cuda
