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

template <typename Raw>
__global__ void frame_min_kernel(const Raw* raw, std::int64_t n, float* mins) {
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
  __shared__ float part[256];
  part[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) part[threadIdx.x] = fminf(part[threadIdx.x], part[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0) mins[blockIdx.x] = part[0];
}

// The radii of both Gaussians as compile-time constants (R1, R2 > 0: the default DoG's 3 and 8, whose tap
// loops unroll with the weights in registers) or from w (0). The sums are the same in either case.
template <int R1, int R2>
struct Radii {
  int r1, r2;
  __device__ explicit Radii(const DetectWeights& w) : r1(R1 > 0 ? R1 : w.r1), r2(R2 > 0 ? R2 : w.r2) {}
};

// grid (row segments, rows, frames), block row_tile.
template <typename Raw, int R1, int R2>
__global__ void row_kernel(const Raw* raw, int width, int height, const float* mins, DetectWeights w, float* rows1,
                           float* rows2) {
  extern __shared__ float seg[];  // row_tile + 2·r values
  const Radii<R1, R2> rr(w);
  const int r = rr.r1 > rr.r2 ? rr.r1 : rr.r2;
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
  const float* p1 = seg + threadIdx.x + r - rr.r1;
#pragma unroll
  for (int k = 0; k <= 2 * rr.r1; ++k) a1 = add(a1, mul(w.w1[k], p1[k]));
  const float* p2 = seg + threadIdx.x + r - rr.r2;
#pragma unroll
  for (int k = 0; k <= 2 * rr.r2; ++k) a2 = add(a2, mul(w.w2[k], p2[k]));
  const std::int64_t o = f * n + static_cast<std::int64_t>(y) * width + x;
  rows1[o] = a1;
  rows2[o] = a2;
}

// grid (column tiles, row tiles, frames), block (col_tile_x, col_threads_y).
template <int R1, int R2>
__global__ void column_kernel(int width, int height, DetectWeights w, const float* rows1, const float* rows2,
                              const float* norm, float* filtered) {
  constexpr int span = col_tile_y + 2 * kMaxDogRadius;
  __shared__ float s1[span][col_tile_x];
  __shared__ float s2[span][col_tile_x];
  const Radii<R1, R2> rr(w);
  const int r = rr.r1 > rr.r2 ? rr.r1 : rr.r2;
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
#pragma unroll
    for (int k = 0; k <= 2 * rr.r1; ++k) a1 = add(a1, mul(w.w1[k], s1[o + r - rr.r1 + k][threadIdx.x]));
#pragma unroll
    for (int k = 0; k <= 2 * rr.r2; ++k) a2 = add(a2, mul(w.w2[k], s2[o + r - rr.r2 + k][threadIdx.x]));
    const std::int64_t p = static_cast<std::int64_t>(y) * width + x;
    filtered[base + p] = mul(sub(a1, a2), norm[p]);
  }
}

struct SelectShared {
  unsigned hist[noise_warps][256];
  unsigned long long total[256];
  unsigned long long finite_count;
  std::uint32_t prefix;
  unsigned long long rank;
};

// Adds one value per lane of the warp (all 32 lanes call it together) to the warp's histogram, bin 256
// for none. The lanes that share the first valid lane's bin add once, by their count: in the early radix
// passes nearly every value of a frame falls in one bin (one sign and exponent), where lane-by-lane
// atomics on one shared address would serialise 32-fold.
__device__ void warp_count(unsigned* hist, unsigned bin) {
  const unsigned valid = __ballot_sync(0xffffffffu, bin < 256u);
  if (valid == 0) return;
  const int leader = __ffs(valid) - 1;
  const unsigned lead_bin = __shfl_sync(0xffffffffu, bin, leader);
  const unsigned same = __ballot_sync(0xffffffffu, bin == lead_bin);
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (lane == leader)
    atomicAdd(&hist[lead_bin], static_cast<unsigned>(__popc(same)));
  else if (bin < 256u && bin != lead_bin)
    atomicAdd(&hist[bin], 1u);
}

// The value of rank `rank` among the finite keys of (deviation ? |v − centre| : v).
__device__ float block_select(const float* values, std::int64_t n, bool deviation, float centre,
                              unsigned long long rank, SelectShared& s) {
  const int warp = threadIdx.x / 32;
  std::uint32_t prefix = 0, mask = 0;
  for (int shift = 24; shift >= 0; shift -= 8) {
    for (int i = threadIdx.x; i < noise_warps * 256; i += blockDim.x) (&s.hist[0][0])[i] = 0;
    __syncthreads();
    // The bin of one value, 256 for none (not finite, or outside the prefix).
    const auto bin_of = [&](float v) {
      if (!finite(v)) return 256u;
      if (deviation) v = fabsf(sub(v, centre));
      const std::uint32_t key = order_key(v);
      return (key & mask) == prefix ? (key >> shift) & 255u : 256u;
    };
    if (n % 4 == 0 && reinterpret_cast<std::uintptr_t>(values) % 16 == 0) {  // 4 values per 16-byte load
      const float4* q = reinterpret_cast<const float4*>(values);
      const std::int64_t n4 = n / 4;
      for (std::int64_t base = 0; base < n4; base += blockDim.x) {  // the same trip count for a whole warp
        const std::int64_t i = base + threadIdx.x;
        const float4 v = i < n4 ? q[i] : make_float4(NAN, NAN, NAN, NAN);
        warp_count(s.hist[warp], bin_of(v.x));
        warp_count(s.hist[warp], bin_of(v.y));
        warp_count(s.hist[warp], bin_of(v.z));
        warp_count(s.hist[warp], bin_of(v.w));
      }
    } else {
      for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        const unsigned b = bin_of(values[i]);
        if (b < 256u) atomicAdd(&s.hist[warp][b], 1u);
      }
    }
    __syncthreads();
    if (threadIdx.x < 256) {
      unsigned long long t = 0;
      for (int wi = 0; wi < noise_warps; ++wi) t += s.hist[wi][threadIdx.x];
      s.total[threadIdx.x] = t;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      unsigned long long below = 0;
      int bin = 0;
      for (; bin < 255; ++bin) {
        if (rank < below + s.total[bin]) break;
        below += s.total[bin];
      }
      s.rank = rank - below;
      s.prefix = prefix | (static_cast<std::uint32_t>(bin) << shift);
    }
    __syncthreads();
    rank = s.rank;
    prefix = s.prefix;
    mask |= 255u << shift;
    __syncthreads();
  }
  return from_order_key(prefix);
}

__global__ void noise_kernel(const float* filtered, std::int64_t n, double threshold, float* noise_sd, float* level) {
  __shared__ SelectShared s;
  const float* values = filtered + static_cast<std::int64_t>(blockIdx.x) * n;
  unsigned long long local = 0;
  for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) local += finite(values[i]) ? 1 : 0;
  if (threadIdx.x == 0) s.finite_count = 0;
  __syncthreads();
  atomicAdd(&s.finite_count, local);
  __syncthreads();
  const unsigned long long m = s.finite_count;
  if (m == 0) {
    if (threadIdx.x == 0) noise_sd[blockIdx.x] = level[blockIdx.x] = NAN;
    return;
  }
  const auto rank = static_cast<unsigned long long>(median_rank(static_cast<std::int64_t>(m)));
  const float median = block_select(values, n, false, 0.f, rank, s);
  const float mad = block_select(values, n, true, median, rank, s);
  if (threadIdx.x == 0) {
    const float sd = noise_sd_from_mad(mad);
    noise_sd[blockIdx.x] = sd;
    level[blockIdx.x] = detection_level(threshold, sd);
  }
}

template <typename Raw>
__global__ void maxima_kernel(const Raw* raw, const float* filtered, const float* level, std::int64_t total, int width,
                              int height, int box, int border, const unsigned char* inside, unsigned long long* keys,
                              unsigned long long* count, unsigned long long* outside, std::int64_t capacity,
                              float net_gradient_below, NetGradientUnits units) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const std::int64_t n = static_cast<std::int64_t>(width) * height;
  const std::int64_t f = i / n;
  const float lv = level[f];
  if (!(filtered[i] > lv)) return;
  const int p = static_cast<int>(i - f * n);
  const int y = p / width, x = p - y * width;
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

template <int R1, int R2>
void dog_passes(const FrameView& v, const float* mins, const DetectWeights& weights, const float* norm, float* rows1,
                float* rows2, float* filtered, cudaStream_t stream) {
  const int r = weights.r1 > weights.r2 ? weights.r1 : weights.r2;
  const dim3 row_grid((v.width + row_tile - 1) / row_tile, v.height, static_cast<unsigned>(v.frames));
  const std::size_t row_shared = sizeof(float) * (row_tile + 2 * r);
  if (v.raw_u16)
    row_kernel<std::uint16_t, R1, R2><<<row_grid, row_tile, row_shared, stream>>>(
        static_cast<const std::uint16_t*>(v.raw), v.width, v.height, mins, weights, rows1, rows2);
  else
    row_kernel<float, R1, R2><<<row_grid, row_tile, row_shared, stream>>>(static_cast<const float*>(v.raw), v.width,
                                                                          v.height, mins, weights, rows1, rows2);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
  const dim3 col_grid((v.width + col_tile_x - 1) / col_tile_x, (v.height + col_tile_y - 1) / col_tile_y,
                      static_cast<unsigned>(v.frames));
  column_kernel<R1, R2><<<col_grid, dim3(col_tile_x, col_threads_y), 0, stream>>>(v.width, v.height, weights, rows1,
                                                                                  rows2, norm, filtered);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_frame_min(const FrameView& v, float* mins, cudaStream_t stream) {
  if (v.frames <= 0) return;
  const std::int64_t n = static_cast<std::int64_t>(v.width) * v.height;
  if (v.frames > 0x7fffffff) throw UsageError("detect", "too many frames for one launch");
  const unsigned grid = static_cast<unsigned>(v.frames);
  if (v.raw_u16)
    frame_min_kernel<<<grid, 256, 0, stream>>>(static_cast<const std::uint16_t*>(v.raw), n, mins);
  else
    frame_min_kernel<<<grid, 256, 0, stream>>>(static_cast<const float*>(v.raw), n, mins);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_dog(const FrameView& v, const float* mins, const DetectWeights& weights, const float* norm, float* rows1,
                float* rows2, float* filtered, cudaStream_t stream) {
  if (v.frames <= 0) return;
  check_grid_frames(v.frames);
  // The default DoG (sigma 1 and 2.5 px: radii 3 and 8) with unrolled taps; any other with loops.
  if (weights.r1 == 3 && weights.r2 == 8)
    dog_passes<3, 8>(v, mins, weights, norm, rows1, rows2, filtered, stream);
  else
    dog_passes<0, 0>(v, mins, weights, norm, rows1, rows2, filtered, stream);
}

void launch_noise(const float* filtered, std::int64_t frames, std::int64_t n, double threshold, float* noise_sd,
                  float* level, cudaStream_t stream) {
  if (frames <= 0) return;
  if (frames > 0x7fffffff) throw UsageError("detect", "too many frames for one launch");
  noise_kernel<<<static_cast<unsigned>(frames), noise_threads, 0, stream>>>(filtered, n, threshold, noise_sd, level);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_maxima(const FrameView& v, const float* filtered, const float* level, const DetectSettings& settings,
                   const unsigned char* inside, unsigned long long* keys, unsigned long long* count,
                   unsigned long long* outside, std::int64_t capacity, const NetGradientUnits& units,
                   cudaStream_t stream) {
  const std::int64_t total = v.frames * v.width * v.height;
  if (total <= 0) return;
  constexpr int threads = 256;
  const unsigned grid = blocks_for(total, threads);
  if (v.raw_u16)
    maxima_kernel<<<grid, threads, 0, stream>>>(
        static_cast<const std::uint16_t*>(v.raw), filtered, level, total, v.width, v.height, settings.box,
        settings.border, inside, keys, count, outside, capacity, net_gradient_floor(settings.min_net_gradient), units);
  else
    maxima_kernel<<<grid, threads, 0, stream>>>(static_cast<const float*>(v.raw), filtered, level, total, v.width,
                                                v.height, settings.box, settings.border, inside, keys, count, outside,
                                                capacity, net_gradient_floor(settings.min_net_gradient), units);
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
