// Launchers of the spot-detection kernels (detect_kernels.cu), for detect_engine_cuda.cpp.
// Every launcher is asynchronous on `stream` and checks the launch. Frames are
// `frames` (T, Y, X) of uint16 or float32 (`raw_u16`), n = width·height pixels each.
// The per-pixel math is detect_math.hpp's, shared with the CPU reference.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "nanoscopy/loc/detect/detect_math.hpp"
#include "nanoscopy/loc/detect/detect_types.hpp"

namespace nanoscopy::cuda {

struct DetectWeights {
  float w1[2 * kMaxDogRadius + 1];
  float w2[2 * kMaxDogRadius + 1];
  int r1 = 0, r2 = 0;  // taps = 2r + 1
  // The halo both Gaussians need: the larger radius.
  __host__ __device__ int reach() const { return r1 > r2 ? r1 : r2; }
};

struct FrameView {
  const void* raw = nullptr;  // device, frames · n values
  bool raw_u16 = false;
  std::int64_t frames = 0;
  int width = 0, height = 0;
};

// One block of 256 threads per frame: the smallest finite pixel (+inf if none) → mins[frame].
void launch_frame_min(const FrameView& v, float* mins, cudaStream_t stream);

// Steps 1–2 of detect.hpp: filtered = (column sums 1 − 2)·norm (norm: width·height values of
// dog_noise_normalization, shared by every frame). The default DoG (radii 3 and 8) in one pass: blocks of
// 256 threads over (32 × 32-pixel tiles, frames), the tile and its reflected halo in shared memory,
// rows1 and rows2 unused (may be null). Other radii in two: a row pass (blocks of 128 threads over
// 128-pixel row segments, rows, frames) writes both Gaussians' row sums to rows1 and rows2 (each
// frames·width·height), and a column pass (32 × 8 threads over 32 columns × 64 rows) sums those.
bool dog_needs_row_buffers(const DetectWeights& weights);
void launch_dog(const FrameView& v, const float* mins, const DetectWeights& weights, const float* norm, float* rows1,
                float* rows2, float* filtered, cudaStream_t stream);

// One block of 1024 threads per frame: exact lower medians by 3 passes of 11-, 11- and
// 10-bit radix selection (shared histograms, one per quarter of the warps) over the finite filtered values,
// then of their absolute deviations: noise_sd[f] = 1.4826·MAD and
// level[f] = threshold·sd (NaN for a frame without finite values). The third pass of each reads the keys
// that the second copied to shared memory (list_capacity of them, from noise_list_capacity) when they fit.
// noise_list_capacity: keys that fit beside the kernel's histograms on `device` (the current one) without
// costing occupancy, the kernel's shared-memory limit raised to match (0: no room, three global passes).
unsigned noise_list_capacity(int device);
void launch_noise(const float* filtered, std::int64_t frames, std::int64_t n, double threshold,
                  unsigned list_capacity, float* noise_sd, float* level, cudaStream_t stream);

// One thread per pixel: candidates (detect_detail::is_candidate) are appended
// as linear pixel indices (frame·n + y·width + x) to keys[atomicAdd(count)];
// a slot beyond `capacity` is counted but not written. With `inside` (width·height
// values, 0 outside the regions; null: everywhere), a candidate at a pixel
// outside is not appended but counted in *outside. With settings.min_net_gradient > 0 a
// maximum whose net gradient (`units`) is below it is no candidate.
void launch_maxima(const FrameView& v, const float* filtered, const float* level, const DetectSettings& settings,
                   const unsigned char* inside, unsigned long long* keys, unsigned long long* count,
                   unsigned long long* outside, std::int64_t capacity, const detect_detail::NetGradientUnits& units,
                   cudaStream_t stream);

// Temporary bytes of sort_keys for `capacity` keys.
std::size_t sort_keys_temp_bytes(std::int64_t capacity);
// Ascending sort of `count` keys (bits [0, end_bit)) from keys_in to keys_out.
void sort_keys(void* temp, std::size_t temp_bytes, const unsigned long long* keys_in, unsigned long long* keys_out,
               std::int64_t count, int end_bit, cudaStream_t stream);

// One thread per candidate: candidates[k] and origins[k] from sorted keys
// (frame = first_frame + key / n), then one thread per ROI pixel: rois
// (count·box·box values of the frames' type, ROI-major, row-major).
void launch_finalize(const FrameView& v, const unsigned long long* keys, std::int64_t count, const float* filtered,
                     const float* noise_sd, std::int64_t first_frame, int box,
                     const detect_detail::NetGradientUnits& units, Candidate* candidates, RoiOrigin* origins,
                     void* rois, cudaStream_t stream);

}  // namespace nanoscopy::cuda
