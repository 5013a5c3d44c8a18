#include <cuda_runtime.h>

#include <cstdint>
#include <cub/device/device_radix_sort.cuh>

#include "common/cuda_check.hpp"
#include "loc/detect_kernels.hpp"
#include "nanoscopy/loc/detect/detect_math.hpp"

namespace nanoscopy::cuda {
namespace {

using namespace detect_detail;

constexpr int row_tile = 128;
constexpr int col_tile_x = 32;
constexpr int col_tile_y = 64;
constexpr int col_threads_y = 8;
constexpr int noise_threads = 1024;
constexpr int noise_warps = noise_threads / 32;

// One block of frame_min_threads per frame: a full multiprocessor's worth of loads in flight for each frame.
constexpr int frame_min_threads = 1024;

template <typename Raw>
__global__ void __launch_bounds__(frame_min_threads) frame_min_kernel(const Raw* raw, std::int64_t n, float* mins) {
  const Raw* frame = raw + static_cast<std::int64_t>(blockIdx.x) * n;
  float m = INFINITY;
  // 16-byte loads where the frame starts on 16 bytes (every frame does in a cudaMalloc'ed chunk of whole
  // 16-byte frames): a block reads its frame in a quarter (float) or an eighth (uint16) of the load
  // instructions, enough in flight to stream it. 4x faster on an H100 for 256^2 uint16 frames.
  constexpr int per = static_cast<int>(16 / sizeof(Raw));
  if (n % per == 0 && reinterpret_cast<std::uintptr_t>(frame) % 16 == 0) {
    const uint4* q = reinterpret_cast<const uint4*>(frame);
#pragma unroll 4
    for (std::int64_t i = threadIdx.x; i < n / per; i += blockDim.x) {
      const uint4 packed = q[i];
      Raw v[per];
      memcpy(v, &packed, sizeof packed);
#pragma unroll
      for (int j = 0; j < per; ++j) {
        const float x = value(v, j);
        if (finite(x)) m = fminf(m, x);
      }
    }
  } else {
    for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const float v = value(frame, i);
      if (finite(v)) m = fminf(m, v);
    }
  }
  // The minimum is exact in any order: within each warp by shuffles, then over the warps.
  for (int d = 16; d > 0; d /= 2) m = fminf(m, __shfl_xor_sync(0xffffffffu, m, d));
  __shared__ float part[frame_min_threads / 32];
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x < 32) {
    m = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : INFINITY;
    for (int d = 16; d > 0; d /= 2) m = fminf(m, __shfl_xor_sync(0xffffffffu, m, d));
    if (threadIdx.x == 0) mins[blockIdx.x] = m;
  }
}

// A DoG other than the default (fused_dog_kernel) in two passes, with loops over its taps: along rows
// into rows1 and rows2, then down columns into `filtered`.
// grid (row segments, rows, frames), block row_tile.
template <typename Raw>
__global__ void row_kernel(const Raw* raw, int width, int height, const float* mins, DetectWeights w, float* rows1,
                           float* rows2) {
  extern __shared__ float seg[];  // row_tile + 2·r values
  const int r = w.reach();
  const int f = blockIdx.z, y = blockIdx.y;
  const int x0 = blockIdx.x * row_tile;
  const std::int64_t n = static_cast<std::int64_t>(width) * height;
  const Raw* row = raw + f * n + static_cast<std::int64_t>(y) * width;
  const float lowest = mins[f];
  for (int i = threadIdx.x; i < row_tile + 2 * r; i += blockDim.x)
    seg[i] = sub(value(row, reflect(x0 + i - r, width)), lowest);
  __syncthreads();
  const int x = x0 + threadIdx.x;
  if (x >= width) return;
  float a1 = 0.f, a2 = 0.f;
  const float* p1 = seg + threadIdx.x + r - w.r1;
  for (int k = 0; k <= 2 * w.r1; ++k) a1 = add(a1, mul(w.w1[k], p1[k]));
  const float* p2 = seg + threadIdx.x + r - w.r2;
  for (int k = 0; k <= 2 * w.r2; ++k) a2 = add(a2, mul(w.w2[k], p2[k]));
  const std::int64_t o = f * n + static_cast<std::int64_t>(y) * width + x;
  rows1[o] = a1;
  rows2[o] = a2;
}

// grid (column tiles, row tiles, frames), block (col_tile_x, col_threads_y).
__global__ void column_kernel(int width, int height, DetectWeights w, const float* rows1, const float* rows2,
                              const float* norm, float* filtered) {
  constexpr int span = col_tile_y + 2 * kMaxDogRadius;
  __shared__ float s1[span][col_tile_x];
  __shared__ float s2[span][col_tile_x];
  const int r = w.reach();
  const int f = blockIdx.z;
  const int x = blockIdx.x * col_tile_x + threadIdx.x;
  const int y0 = blockIdx.y * col_tile_y;
  const std::int64_t n = static_cast<std::int64_t>(width) * height;
  const std::int64_t base = f * n;
  if (x < width)
    for (int i = threadIdx.y; i < col_tile_y + 2 * r; i += blockDim.y) {
      const std::int64_t src = base + static_cast<std::int64_t>(reflect(y0 + i - r, height)) * width + x;
      s1[i][threadIdx.x] = rows1[src];
      s2[i][threadIdx.x] = rows2[src];
    }
  __syncthreads();
  if (x >= width) return;
  for (int o = threadIdx.y; o < col_tile_y; o += blockDim.y) {
    const int y = y0 + o;
    if (y >= height) break;
    float a1 = 0.f, a2 = 0.f;
    for (int k = 0; k <= 2 * w.r1; ++k) a1 = add(a1, mul(w.w1[k], s1[o + r - w.r1 + k][threadIdx.x]));
    for (int k = 0; k <= 2 * w.r2; ++k) a2 = add(a2, mul(w.w2[k], s2[o + r - w.r2 + k][threadIdx.x]));
    const std::int64_t p = static_cast<std::int64_t>(y) * width + x;
    filtered[base + p] = mul(sub(a1, a2), norm[p]);
  }
}

// The default DoG in one pass (R1, R2 > 0): a block reads its tile of the frame and the halo (reflected at the
// edges) once into shared memory, sums along rows there, then along columns, and writes `filtered`. The same
// sums in the same order as row_kernel + column_kernel (bit for bit), without their two intermediate
// images. Each thread sums a run of outputs from values it holds in registers (8 along a row, 4 down a
// column), so shared memory is read about 3 times per output instead of 60: the taps, not the loads, set the pace.
// grid (column tiles, row tiles, frames), block fused_threads.
constexpr int fused_tile = 32;
constexpr int fused_threads = 256;
constexpr int fused_row_run = 8;  // outputs per thread in the row pass
constexpr int fused_col_run = 4;  // and in the column pass

template <typename Raw, int R1, int R2>
__global__ void __launch_bounds__(fused_threads)
    fused_dog_kernel(const Raw* raw, int width, int height, const float* mins, DetectWeights w, const float* norm,
                     float* filtered) {
  static_assert(R1 > 0 && R2 > 0, "the fused DoG needs compile-time radii");
  constexpr int r = R1 > R2 ? R1 : R2;
  constexpr int span = fused_tile + 2 * r;
  constexpr int row_runs = fused_tile / fused_row_run, col_runs = fused_tile / fused_col_run;
  static_assert(span * row_runs <= fused_threads && fused_tile * col_runs == fused_threads, "one run per thread");
  // Odd row lengths: a warp's lanes on 32 different rows of one column hit 32 different banks.
  __shared__ float in[span][span + 1];
  __shared__ float h1[span][fused_tile + 1];
  __shared__ float h2[span][fused_tile + 1];
  const int f = blockIdx.z;
  const int x0 = blockIdx.x * fused_tile, y0 = blockIdx.y * fused_tile;
  const std::int64_t n = static_cast<std::int64_t>(width) * height;
  const Raw* frame = raw + f * n;
  const float lowest = mins[f];
  const int t = threadIdx.x;
  for (int i = t; i < span * span; i += fused_threads) {
    const int row = i / span, col = i % span;
    const int y = reflect(y0 + row - r, height), x = reflect(x0 + col - r, width);
    in[row][col] = sub(value(frame, static_cast<std::int64_t>(y) * width + x), lowest);
  }
  __syncthreads();
  if (t < span * row_runs) {  // lane → row: conflict-free reads down the odd-length rows
    const int row = t % span, c0 = (t / span) * fused_row_run;
    float v[fused_row_run + 2 * r];
#pragma unroll
    for (int i = 0; i < fused_row_run + 2 * r; ++i) v[i] = in[row][c0 + i];
#pragma unroll
    for (int j = 0; j < fused_row_run; ++j) {
      float a1 = 0.f, a2 = 0.f;
#pragma unroll
      for (int k = 0; k <= 2 * R1; ++k) a1 = add(a1, mul(w.w1[k], v[j + r - R1 + k]));
#pragma unroll
      for (int k = 0; k <= 2 * R2; ++k) a2 = add(a2, mul(w.w2[k], v[j + r - R2 + k]));
      h1[row][c0 + j] = a1;
      h2[row][c0 + j] = a2;
    }
  }
  __syncthreads();
  const int col = t % fused_tile, o0 = (t / fused_tile) * fused_col_run;
  const int x = x0 + col;
  if (x >= width) return;
  float v1[fused_col_run + 2 * r], v2[fused_col_run + 2 * r];
#pragma unroll
  for (int i = 0; i < fused_col_run + 2 * r; ++i) v1[i] = h1[o0 + i][col], v2[i] = h2[o0 + i][col];
#pragma unroll
  for (int j = 0; j < fused_col_run; ++j) {
    const int y = y0 + o0 + j;
    if (y >= height) break;
    float a1 = 0.f, a2 = 0.f;
#pragma unroll
    for (int k = 0; k <= 2 * R1; ++k) a1 = add(a1, mul(w.w1[k], v1[j + r - R1 + k]));
#pragma unroll
    for (int k = 0; k <= 2 * R2; ++k) a2 = add(a2, mul(w.w2[k], v2[j + r - R2 + k]));
    const std::int64_t p = static_cast<std::int64_t>(y) * width + x;
    filtered[f * n + p] = mul(sub(a1, a2), norm[p]);
  }
}

// Radix selection in three digits of 11, 11 and 10 bits (bins of the top digit: sign, exponent and two
// mantissa bits), so each of the two selections of a frame reads it at most 3 times, and the first pass of the
// median counts the finite values too. The second pass also copies the keys of the first digit's bin into
// shared memory when they fit (its count is known from the first pass: a few hundred to a few thousand of a
// 256² frame), and the third digit is counted from there: 4 passes over the frame in global memory instead of 6.
constexpr int select_bins = 2048;
constexpr int select_copies = 4;  // histograms, one per quarter of the warps: fewer atomics on one address
constexpr int select_list_max = 16384;  // keys kept in shared memory (64 KiB), where the device has room
__device__ constexpr int select_shift(int digit) { return digit == 0 ? 21 : digit == 1 ? 10 : 0; }
__device__ constexpr int select_bits(int digit) { return digit == 2 ? 10 : 11; }

struct SelectShared {
  unsigned hist[select_copies][select_bins];
  unsigned long long warp_total[noise_warps];
  std::uint32_t prefix;
  unsigned long long rank;
  unsigned long long bucket;  // values in the bin just chosen
  unsigned listed;            // keys in the list
};

// Adds one value per lane of the warp (all 32 lanes call it together) to the warp's histogram, bin
// select_bins for none. The lanes that share the first valid lane's bin add once, by their count: in the
// first pass nearly every value of a frame falls in a few bins, where lane-by-lane atomics on one shared
// address would serialise 32-fold.
__device__ void warp_count(unsigned* hist, unsigned bin) {
  const unsigned valid = __ballot_sync(0xffffffffu, bin < select_bins);
  if (valid == 0) return;
  const int leader = __ffs(valid) - 1;
  const unsigned lead_bin = __shfl_sync(0xffffffffu, bin, leader);
  const unsigned same = __ballot_sync(0xffffffffu, bin == lead_bin);
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (lane == leader)
    atomicAdd(&hist[lead_bin], static_cast<unsigned>(__popc(same)));
  else if (bin < select_bins && bin != lead_bin)
    atomicAdd(&hist[bin], 1u);
}

// Appends the keys of the lanes that `keep` one (all 32 lanes call it together) to `list`, one
// shared-memory atomic per warp. The order in the list does not matter: it is only counted.
__device__ void warp_append(std::uint32_t* list, unsigned* listed, bool keep, std::uint32_t key) {
  const unsigned kept = __ballot_sync(0xffffffffu, keep);
  if (kept == 0) return;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int leader = __ffs(kept) - 1;
  unsigned base = 0;
  if (lane == leader) base = atomicAdd(listed, static_cast<unsigned>(__popc(kept)));
  base = __shfl_sync(0xffffffffu, base, leader);
  if (keep) list[base + static_cast<unsigned>(__popc(kept & ((1u << lane) - 1u)))] = key;
}

// The value of rank `rank` among the finite keys of (deviation ? |v − centre| : v). With rank < 0 it is the
// lower median's, from the count of finite values that the first pass makes; the count comes back with the
// value (0: no finite value, the value is meaningless). Block of noise_threads (2 bins per thread in the scan);
// `list`: room for list_capacity keys in shared memory (0: none, every pass reads `values`).
struct Selected {
  float value;
  unsigned long long finite_count;
};

__device__ Selected block_select(const float* values, std::int64_t n, bool deviation, float centre, long long rank_in,
                                 SelectShared& s, std::uint32_t* list, unsigned list_capacity) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned* hist = s.hist[warp % select_copies];
  std::uint32_t prefix = 0, mask = 0;
  unsigned long long rank = rank_in < 0 ? 0 : static_cast<unsigned long long>(rank_in), finite_count = 0;
  bool listing = false, listed = false;  // this pass fills the list; the next reads it
  for (int digit = 0; digit < 3; ++digit) {
    const int shift = select_shift(digit);
    const std::uint32_t digit_mask = (1u << select_bits(digit)) - 1u;
    for (int i = threadIdx.x; i < select_copies * select_bins; i += blockDim.x) (&s.hist[0][0])[i] = 0;
    if (listing && threadIdx.x == 0) s.listed = 0;
    __syncthreads();
    // The bin of one key, select_bins for none (outside the prefix).
    const auto bin_of_key = [&](std::uint32_t key) {
      return (key & mask) == prefix ? (key >> shift) & digit_mask : static_cast<unsigned>(select_bins);
    };
    // One value of the frame: counted, and listed when this pass lists the prefix's keys.
    const auto visit = [&](float v) {
      std::uint32_t key = 0;
      unsigned bin = select_bins;
      if (finite(v)) {
        key = order_key(deviation ? fabsf(sub(v, centre)) : v);
        bin = bin_of_key(key);
      }
      warp_count(hist, bin);
      if (listing) warp_append(list, &s.listed, bin < select_bins, key);
    };
    if (listed) {
      const unsigned m = s.listed;
      for (unsigned base = 0; base < m; base += blockDim.x) {  // the same trip count for a whole warp
        const unsigned i = base + threadIdx.x;
        warp_count(hist, i < m ? bin_of_key(list[i]) : static_cast<unsigned>(select_bins));
      }
    } else if (n % 4 == 0 && reinterpret_cast<std::uintptr_t>(values) % 16 == 0) {  // 4 values per 16-byte load
      const float4* q = reinterpret_cast<const float4*>(values);
      const std::int64_t n4 = n / 4;
      for (std::int64_t base = 0; base < n4; base += blockDim.x) {  // the same trip count for a whole warp
        const std::int64_t i = base + threadIdx.x;
        const float4 v = i < n4 ? q[i] : make_float4(NAN, NAN, NAN, NAN);
        visit(v.x);
        visit(v.y);
        visit(v.z);
        visit(v.w);
      }
    } else {
      for (std::int64_t base = 0; base < n; base += blockDim.x) {
        const std::int64_t i = base + threadIdx.x;
        visit(i < n ? values[i] : NAN);
      }
    }
    __syncthreads();
    // Thread t owns bins 2t and 2t + 1: their counts, a block-wide exclusive scan, and the thread whose
    // range holds `rank` names the bin.
    const int b0 = 2 * static_cast<int>(threadIdx.x);
    unsigned long long c0 = 0, c1 = 0;
    for (int c = 0; c < select_copies; ++c) c0 += s.hist[c][b0], c1 += s.hist[c][b0 + 1];
    const unsigned long long mine = c0 + c1;
    unsigned long long inclusive = mine;
    for (int d = 1; d < 32; d <<= 1) {
      const unsigned long long below = __shfl_up_sync(0xffffffffu, inclusive, d);
      if (lane >= d) inclusive += below;
    }
    if (lane == 31) s.warp_total[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
      unsigned long long t = s.warp_total[lane];
      for (int d = 1; d < 32; d <<= 1) {
        const unsigned long long below = __shfl_up_sync(0xffffffffu, t, d);
        if (lane >= d) t += below;
      }
      s.warp_total[lane] = t;  // inclusive over warps
    }
    __syncthreads();
    if (digit == 0) {
      finite_count = s.warp_total[noise_warps - 1];
      if (finite_count == 0) return {NAN, 0};  // the whole block: the count is the same for every thread
      if (rank_in < 0) rank = static_cast<unsigned long long>(median_rank(static_cast<std::int64_t>(finite_count)));
    }
    const unsigned long long start = (warp > 0 ? s.warp_total[warp - 1] : 0) + inclusive - mine;
    if (rank >= start && rank < start + mine) {
      const bool first = rank < start + c0;
      s.rank = rank - (first ? start : start + c0);
      s.prefix = prefix | (static_cast<std::uint32_t>(first ? b0 : b0 + 1) << shift);
      s.bucket = first ? c0 : c1;
    }
    __syncthreads();
    rank = s.rank;
    prefix = s.prefix;
    mask |= digit_mask << shift;
    listed = listing;
    // The next pass lists the chosen bin's keys if they fit (the same answer in every thread).
    listing = digit == 0 && s.bucket <= list_capacity;
    __syncthreads();
  }
  return {from_order_key(prefix), finite_count};
}

__global__ void __launch_bounds__(noise_threads)
    noise_kernel(const float* filtered, std::int64_t n, double threshold, unsigned list_capacity, float* noise_sd,
                 float* level) {
  static_assert(noise_threads * 2 == select_bins && noise_warps == 32, "block_select's scan: 2 bins per thread");
  __shared__ SelectShared s;
  extern __shared__ std::uint32_t list[];  // list_capacity keys
  const float* values = filtered + static_cast<std::int64_t>(blockIdx.x) * n;
  const Selected median = block_select(values, n, false, 0.f, -1, s, list, list_capacity);
  const unsigned long long m = median.finite_count;
  if (m == 0) {
    if (threadIdx.x == 0) noise_sd[blockIdx.x] = level[blockIdx.x] = NAN;
    return;
  }
  const auto rank = static_cast<long long>(median_rank(static_cast<std::int64_t>(m)));
  const float mad = block_select(values, n, true, median.value, rank, s, list, list_capacity).value;
  if (threadIdx.x == 0) {
    const float sd = noise_sd_from_mad(mad);
    noise_sd[blockIdx.x] = sd;
    level[blockIdx.x] = detection_level(threshold, sd);
  }
}

// grid (pixel blocks of a frame, frames): the frame is the block's y index, so no thread divides a 64-bit index
// (a long software routine on the GPU, which every pixel paid before its level test); frames have < 2^32 pixels.
template <typename Raw>
__global__ void maxima_kernel(const Raw* raw, const float* filtered, const float* level, int width, int height,
                              int box, int border, const unsigned char* inside, unsigned long long* keys,
                              unsigned long long* count, unsigned long long* outside, std::int64_t capacity,
                              float net_gradient_below, NetGradientUnits units) {
  const std::int64_t n = static_cast<std::int64_t>(width) * height;
  const std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= n) return;
  const std::int64_t f = blockIdx.y;
  const std::int64_t i = f * n + p;
  const float lv = level[f];
  if (!(filtered[i] > lv)) return;
  const unsigned q = static_cast<unsigned>(p);
  const int y = static_cast<int>(q / static_cast<unsigned>(width)), x = static_cast<int>(q - static_cast<unsigned>(y) * width);
  if (!is_candidate(filtered + f * n, raw + f * n, width, height, x, y, box, border, lv)) return;
  // Below the minimum net gradient it is no candidate at all (detect.cpp drops it at the same point).
  if (net_gradient_below > 0.0f &&
      !passes_net_gradient(net_gradient(raw + f * n, width, height, x, y, box, units), net_gradient_below))
    return;
  if (inside && !inside[p]) {  // dropped before its ROI is cut and fitted, but counted
    atomicAdd(outside, 1ull);
    return;
  }
  const unsigned long long slot = atomicAdd(count, 1ull);
  if (slot < static_cast<unsigned long long>(capacity)) keys[slot] = static_cast<unsigned long long>(i);
}

template <typename Raw>
__global__ void candidate_kernel(const Raw* raw, const unsigned long long* keys, std::int64_t count,
                                 const float* filtered, const float* noise_sd, std::int64_t first_frame, int width,
                                 int height, int box, NetGradientUnits units, Candidate* candidates,
                                 RoiOrigin* origins) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const std::int64_t n = static_cast<std::int64_t>(width) * height;
  const auto key = static_cast<std::int64_t>(keys[k]);
  const std::int64_t f = key / n;
  const int p = static_cast<int>(key - f * n);
  const int y = p / width, x = p - y * width;
  Candidate c;
  c.frame = first_frame + f;
  c.x = x;
  c.y = y;
  c.score = detection_score(filtered[key], noise_sd[f]);
  c.net_gradient = net_gradient(raw + f * n, width, height, x, y, box, units);
  candidates[k] = c;
  origins[k] = roi_origin(x, y, box, width, height);
}

template <typename Raw>
__global__ void roi_kernel(const Raw* raw, const unsigned long long* keys, const RoiOrigin* origins, std::int64_t count,
                           int width, int height, int box, Raw* rois) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t roi = static_cast<std::int64_t>(box) * box;
  if (i >= count * roi) return;
  const std::int64_t k = i / roi;
  const int q = static_cast<int>(i - k * roi);
  const int j = q / box, c = q - j * box;
  const std::int64_t n = static_cast<std::int64_t>(width) * height;
  const std::int64_t f = static_cast<std::int64_t>(keys[k]) / n;
  const RoiOrigin o = origins[k];
  rois[i] = raw[f * n + static_cast<std::int64_t>(o.y0 + j) * width + o.x0 + c];
}

unsigned blocks_for(std::int64_t items, int threads) {
  const std::int64_t b = (items + threads - 1) / threads;
  if (b > 0x7fffffff) throw UsageError("detect", "too many pixels for one launch");
  return static_cast<unsigned>(b);
}

void check_grid_frames(std::int64_t frames) {
  if (frames > 65535) throw UsageError("detect", "more than 65535 frames in one launch");
}

void dog_passes(const FrameView& v, const float* mins, const DetectWeights& weights, const float* norm, float* rows1,
                float* rows2, float* filtered, cudaStream_t stream) {
  const int r = weights.reach();
  const dim3 row_grid((v.width + row_tile - 1) / row_tile, v.height, static_cast<unsigned>(v.frames));
  const std::size_t row_shared = sizeof(float) * (row_tile + 2 * r);
  if (v.raw_u16)
    row_kernel<std::uint16_t><<<row_grid, row_tile, row_shared, stream>>>(
        static_cast<const std::uint16_t*>(v.raw), v.width, v.height, mins, weights, rows1, rows2);
  else
    row_kernel<float><<<row_grid, row_tile, row_shared, stream>>>(static_cast<const float*>(v.raw), v.width, v.height,
                                                                  mins, weights, rows1, rows2);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
  const dim3 col_grid((v.width + col_tile_x - 1) / col_tile_x, (v.height + col_tile_y - 1) / col_tile_y,
                      static_cast<unsigned>(v.frames));
  column_kernel<<<col_grid, dim3(col_tile_x, col_threads_y), 0, stream>>>(v.width, v.height, weights, rows1, rows2,
                                                                          norm, filtered);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_frame_min(const FrameView& v, float* mins, cudaStream_t stream) {
  if (v.frames <= 0) return;
  const std::int64_t n = static_cast<std::int64_t>(v.width) * v.height;
  if (v.frames > 0x7fffffff) throw UsageError("detect", "too many frames for one launch");
  const unsigned grid = static_cast<unsigned>(v.frames);
  if (v.raw_u16)
    frame_min_kernel<<<grid, frame_min_threads, 0, stream>>>(static_cast<const std::uint16_t*>(v.raw), n, mins);
  else
    frame_min_kernel<<<grid, frame_min_threads, 0, stream>>>(static_cast<const float*>(v.raw), n, mins);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

bool dog_needs_row_buffers(const DetectWeights& weights) { return !(weights.r1 == 3 && weights.r2 == 8); }

void launch_dog(const FrameView& v, const float* mins, const DetectWeights& weights, const float* norm, float* rows1,
                float* rows2, float* filtered, cudaStream_t stream) {
  if (v.frames <= 0) return;
  check_grid_frames(v.frames);
  // The default DoG (sigma 1 and 2.5 px: radii 3 and 8) in one fused pass; any other in a row and a column
  // pass with loops over its taps.
  if (!dog_needs_row_buffers(weights)) {
    const dim3 grid((v.width + fused_tile - 1) / fused_tile, (v.height + fused_tile - 1) / fused_tile,
                    static_cast<unsigned>(v.frames));
    const dim3 block(fused_threads);
    if (v.raw_u16)
      fused_dog_kernel<std::uint16_t, 3, 8><<<grid, block, 0, stream>>>(
          static_cast<const std::uint16_t*>(v.raw), v.width, v.height, mins, weights, norm, filtered);
    else
      fused_dog_kernel<float, 3, 8><<<grid, block, 0, stream>>>(static_cast<const float*>(v.raw), v.width, v.height,
                                                                mins, weights, norm, filtered);
    NANOSCOPY_CUDA_CHECK_LAUNCH();
  } else {
    dog_passes(v, mins, weights, norm, rows1, rows2, filtered, stream);
  }
}

unsigned noise_list_capacity(int device) {
  cudaDeviceProp prop{};
  NANOSCOPY_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  cudaFuncAttributes attributes{};
  NANOSCOPY_CUDA_CHECK(cudaFuncGetAttributes(&attributes, noise_kernel));
  // As much as leaves room for as many blocks per multiprocessor as its threads allow (2 on sm_80 and sm_90,
  // 1 on sm_75, sm_86 and sm_89), so the list never costs occupancy.
  const std::size_t blocks = std::max(1, prop.maxThreadsPerMultiProcessor / noise_threads);
  const std::size_t per_block = std::min<std::size_t>(prop.sharedMemPerBlockOptin,
                                                      prop.sharedMemPerMultiprocessor / blocks - prop.reservedSharedMemPerBlock);
  const std::size_t room = per_block > attributes.sharedSizeBytes ? per_block - attributes.sharedSizeBytes : 0;
  const std::size_t keys = std::min<std::size_t>(select_list_max, room / sizeof(std::uint32_t)) / 256 * 256;
  if (keys < 1024) return 0;  // too small to hold a typical bin: every pass reads global memory
  NANOSCOPY_CUDA_CHECK(cudaFuncSetAttribute(noise_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(keys * sizeof(std::uint32_t))));
  return static_cast<unsigned>(keys);
}

void launch_noise(const float* filtered, std::int64_t frames, std::int64_t n, double threshold,
                  unsigned list_capacity, float* noise_sd, float* level, cudaStream_t stream) {
  if (frames <= 0) return;
  if (frames > 0x7fffffff) throw UsageError("detect", "too many frames for one launch");
  noise_kernel<<<static_cast<unsigned>(frames), noise_threads, list_capacity * sizeof(std::uint32_t), stream>>>(
      filtered, n, threshold, list_capacity, noise_sd, level);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_maxima(const FrameView& v, const float* filtered, const float* level, const DetectSettings& settings,
                   const unsigned char* inside, unsigned long long* keys, unsigned long long* count,
                   unsigned long long* outside, std::int64_t capacity, const NetGradientUnits& units,
                   cudaStream_t stream) {
  if (v.frames <= 0) return;
  check_grid_frames(v.frames);
  if (static_cast<std::int64_t>(v.width) * v.height > 0xffffffffLL) throw UsageError("detect", "frame too large");
  constexpr int threads = 256;
  const dim3 grid(blocks_for(static_cast<std::int64_t>(v.width) * v.height, threads), static_cast<unsigned>(v.frames));
  const float floor = net_gradient_floor(settings.min_net_gradient);
  if (v.raw_u16)
    maxima_kernel<<<grid, threads, 0, stream>>>(static_cast<const std::uint16_t*>(v.raw), filtered, level, v.width,
                                                v.height, settings.box, settings.border, inside, keys, count, outside,
                                                capacity, floor, units);
  else
    maxima_kernel<<<grid, threads, 0, stream>>>(static_cast<const float*>(v.raw), filtered, level, v.width, v.height,
                                                settings.box, settings.border, inside, keys, count, outside, capacity,
                                                floor, units);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

std::size_t sort_keys_temp_bytes(std::int64_t capacity) {
  std::size_t bytes = 0;
  NANOSCOPY_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, static_cast<const unsigned long long*>(nullptr),
                                                      static_cast<unsigned long long*>(nullptr), capacity, 0, 64));
  return bytes;
}

void sort_keys(void* temp, std::size_t temp_bytes, const unsigned long long* keys_in, unsigned long long* keys_out,
               std::int64_t count, int end_bit, cudaStream_t stream) {
  if (count <= 0) return;
  NANOSCOPY_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys_in, keys_out, count, 0, end_bit, stream));
}

void launch_finalize(const FrameView& v, const unsigned long long* keys, std::int64_t count, const float* filtered,
                     const float* noise_sd, std::int64_t first_frame, int box, const NetGradientUnits& units,
                     Candidate* candidates, RoiOrigin* origins, void* rois, cudaStream_t stream) {
  if (count <= 0) return;
  constexpr int threads = 256;
  const std::int64_t roi_pixels = count * box * box;
  if (v.raw_u16) {
    const auto* raw = static_cast<const std::uint16_t*>(v.raw);
    candidate_kernel<<<blocks_for(count, threads), threads, 0, stream>>>(
        raw, keys, count, filtered, noise_sd, first_frame, v.width, v.height, box, units, candidates, origins);
    NANOSCOPY_CUDA_CHECK_LAUNCH();
    roi_kernel<<<blocks_for(roi_pixels, threads), threads, 0, stream>>>(raw, keys, origins, count, v.width, v.height,
                                                                        box, static_cast<std::uint16_t*>(rois));
  } else {
    const auto* raw = static_cast<const float*>(v.raw);
    candidate_kernel<<<blocks_for(count, threads), threads, 0, stream>>>(
        raw, keys, count, filtered, noise_sd, first_frame, v.width, v.height, box, units, candidates, origins);
    NANOSCOPY_CUDA_CHECK_LAUNCH();
    roi_kernel<<<blocks_for(roi_pixels, threads), threads, 0, stream>>>(raw, keys, origins, count, v.width, v.height,
                                                                        box, static_cast<float*>(rois));
  }
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

}  // namespace nanoscopy::cuda
