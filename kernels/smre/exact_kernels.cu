// Exact Dykstra kernels of the SMRE engine: one launch per (edge, shift sy)
// for e <= 16 on frames up to 2048 px wide, else one per tiling; plus the
// per-sweep change and stop decision (geometry: dykstra_kernels.hpp).
#include <cuda_runtime.h>

#include <cstdint>

#include "common/cuda_check.hpp"
#include "nanoscopy/smre/smre_math.hpp"
#include "smre/block_reduce.cuh"
#include "smre/dykstra_kernels.hpp"

namespace nanoscopy::cuda {
namespace {

using smre_detail::block_sum_to_first;

constexpr int tiling_threads = 256;
constexpr int max_register_edge = 16;
constexpr int max_edge = 1024;
constexpr int band_threads = 1024;
constexpr int band_columns = 2 * band_threads;  // widest frame of the band kernel
constexpr int change_threads = 256;
constexpr int change_pixels = 4 * change_threads;
constexpr int decide_threads = 256;

// --- one kernel per (edge, sy): every shift sx of a square row -------------

struct BandArgs {
  float* eps;
  std::int64_t width, pixels;
  const std::uint8_t* on;
  const float* sigma2;
  const std::uint8_t* warm;  // per frame, may be null (read in the first sweep only)
  float* q;                  // tiling (sy, sx = 0)
  std::int64_t q_stride;     // to the next sx
  std::uint8_t* flags;       // tiling (sy, sx = 0)
  std::int64_t flag_stride;  // to the next sx
  std::int64_t flag_frame, flag_cols;
  int sy;
  float c;
};

// grid (square rows, frames), block min(width, 1024); Cols = columns per thread (1 or 2).
// In-row offsets are 32-bit: a square row holds at most 16 x 2048 pixels.
template <int E, int Cols, bool First>
__global__ void __launch_bounds__(band_threads) band_kernel(BandArgs p) {
  const std::int64_t f = blockIdx.y;
  if (!p.on[f]) return;
  __shared__ float colsum[band_columns];
  __shared__ float factor[band_columns];
  const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  const int w = static_cast<int>(p.width), b = static_cast<int>(blockIdx.x);
  const std::int64_t row0 = (p.sy + static_cast<std::int64_t>(b) * E) * p.width;  // the square row's first pixel
  float* const eps = p.eps + f * p.pixels + row0;
  const float sigma2 = p.sigma2[f];
  const bool frame_q = !First || (p.warm != nullptr && p.warm[f] != 0);  // q and flags valid
  float v[Cols][E];  // eps of the owned columns; y = eps - q while a shift is under way
#pragma unroll
  for (int k = 0; k < Cols; ++k) {
    const int x = tid + k * threads;
#pragma unroll
    for (int r = 0; r < E; ++r) v[k][r] = x < w ? eps[r * w + x] : 0.0f;
  }
  for (int sx = 0; sx < E; ++sx) {
    const int cols = (w - sx) / E;
    float* const q = p.q + sx * p.q_stride + f * p.pixels + row0;
    std::uint8_t* const flags = p.flags + sx * p.flag_stride + f * p.flag_frame + b * p.flag_cols;
#pragma unroll
    for (int k = 0; k < Cols; ++k) {
      const int x = tid + k * threads;
      const int a = (x - sx) / E;
      float s = 0.0f;
      if (x >= sx && a < cols) {
        const bool has_q = frame_q && flags[a];
#pragma unroll
        for (int r = 0; r < E; ++r) {
          if (has_q) v[k][r] -= q[r * w + x];
          s += v[k][r] * v[k][r];
        }
      }
      if (x < w) colsum[x] = s;
    }
    __syncthreads();
    for (int a = tid; a < cols; a += threads) {
      const float* cs = colsum + sx + a * E;
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < E; ++j) sum += cs[j];
      const float fct = smre_math::projection_scale(sum, p.c, sigma2);
      factor[a] = fct;
      flags[a] = fct != 1.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < Cols; ++k) {
      const int x = tid + k * threads;
      const int a = (x - sx) / E;
      if (x >= sx && a < cols) {
        const float fct = factor[a];
        if (fct != 1.0f) {  // else eps = y and q = 0: nothing to store
#pragma unroll
          for (int r = 0; r < E; ++r) {
            const smre_math::DykstraPixel d = smre_math::dykstra_pixel(v[k][r], fct);
            q[r * w + x] = d.q;
            v[k][r] = d.eps;
          }
        }
      }
    }
  }
#pragma unroll
  for (int k = 0; k < Cols; ++k) {
    const int x = tid + k * threads;
    if (x < w) {
#pragma unroll
      for (int r = 0; r < E; ++r) eps[r * w + x] = v[k][r];
    }
  }
}

// --- one kernel per tiling (any edge, any width) ----------------------------

struct TilingArgs {
  float* eps;
  float* q;
  std::uint8_t* flags;  // this tiling's, frame 0
  std::int64_t width, pixels, flag_frame, flag_cols;
  const std::uint8_t* on;
  const float* sigma2;
  const std::uint8_t* warm;  // per frame, may be null (read in the first sweep only)
  std::int64_t cols;  // squares per square row
  int sx, sy, edge;
  float c;
};

// The square geometry of this thread: squares per block, the thread's square
// (along x) and column, and whether it lies on a square of the frame.
struct TilingThread {
  int per_block, square, column;
  std::int64_t a;  // square index along x
  bool valid;
};

__device__ __forceinline__ TilingThread tiling_thread(const TilingArgs& p, int edge) {
  TilingThread t;
  t.per_block = edge <= tiling_threads ? tiling_threads / edge : 1;
  const int j = static_cast<int>(threadIdx.x);
  t.square = j / edge;
  t.column = j - t.square * edge;
  t.a = static_cast<std::int64_t>(blockIdx.x) * t.per_block + t.square;
  t.valid = t.square < t.per_block && t.a < p.cols;
  return t;
}

__device__ __forceinline__ std::uint8_t* tiling_flag(const TilingArgs& p, const TilingThread& t) {
  return p.flags + static_cast<std::int64_t>(blockIdx.z) * p.flag_frame +
         static_cast<std::int64_t>(blockIdx.y) * p.flag_cols + t.a;
}

// The square's factor: column sums of its `edge` threads in `colsum`, summed
// by the square's first thread (left to right) into factor[square]; that
// thread also sets the square's q flag.
__device__ __forceinline__ float square_factor(const TilingArgs& p, const TilingThread& t, int edge, float col_sum,
                                               float sigma2, float* colsum, float* factor) {
  colsum[threadIdx.x] = col_sum;
  __syncthreads();
  if (t.valid && t.column == 0) {
    float s = 0.0f;
    for (int k = 0; k < edge; ++k) s += colsum[threadIdx.x + k];
    const float f = smre_math::projection_scale(s, p.c, sigma2);
    factor[t.square] = f;
    *tiling_flag(p, t) = f != 1.0f;
  }
  __syncthreads();
  return factor[t.square < t.per_block ? t.square : 0];
}

// Whether the frame's q and flags hold a previous sweep's values.
template <bool First>
__device__ __forceinline__ bool frame_has_q(const TilingArgs& p, std::int64_t f) {
  return !First || (p.warm != nullptr && p.warm[f] != 0);
}

// Edge known at compile time: the column's y = eps - q stay in registers.
template <int E, bool First>
__global__ void __launch_bounds__(tiling_threads) tiling_kernel(TilingArgs p) {
  const std::int64_t f = blockIdx.z;
  if (!p.on[f]) return;
  __shared__ float colsum[tiling_threads];
  __shared__ float factor[tiling_threads];
  const TilingThread t = tiling_thread(p, E);
  const std::int64_t k0 = f * p.pixels + (p.sy + static_cast<std::int64_t>(blockIdx.y) * E) * p.width + p.sx +
                          t.a * E + t.column;
  float y[E];
  float s = 0.0f;
  bool has_q = false;
  if (t.valid) {
    has_q = frame_has_q<First>(p, f) && *tiling_flag(p, t);
#pragma unroll
    for (int r = 0; r < E; ++r) {
      const std::int64_t k = k0 + r * p.width;
      y[r] = has_q ? p.eps[k] - p.q[k] : p.eps[k];
      s += y[r] * y[r];
    }
  }
  const float fct = square_factor(p, t, E, s, p.sigma2[f], colsum, factor);
  if (!t.valid) return;
  if (fct == 1.0f) {  // eps = y and q = 0 (flag cleared): only a q that was there changes eps
    if (has_q) {
#pragma unroll
      for (int r = 0; r < E; ++r) p.eps[k0 + r * p.width] = y[r];
    }
    return;
  }
#pragma unroll
  for (int r = 0; r < E; ++r) {
    const std::int64_t k = k0 + r * p.width;
    const smre_math::DykstraPixel d = smre_math::dykstra_pixel(y[r], fct);
    p.eps[k] = d.eps;
    p.q[k] = d.q;
  }
}

// Any edge up to 1024: y is parked in eps between the two passes over the column.
template <bool First>
__global__ void __launch_bounds__(max_edge) tiling_kernel_any(TilingArgs p) {
  const std::int64_t f = blockIdx.z;
  if (!p.on[f]) return;
  __shared__ float colsum[max_edge];
  __shared__ float factor[max_edge];
  const int edge = p.edge;
  const TilingThread t = tiling_thread(p, edge);
  const std::int64_t k0 = f * p.pixels + (p.sy + static_cast<std::int64_t>(blockIdx.y) * edge) * p.width + p.sx +
                          t.a * edge + t.column;
  float s = 0.0f;
  if (t.valid) {
    const bool has_q = frame_has_q<First>(p, f) && *tiling_flag(p, t);
    for (int r = 0; r < edge; ++r) {
      const std::int64_t k = k0 + r * p.width;
      const float y = has_q ? p.eps[k] - p.q[k] : p.eps[k];
      p.eps[k] = y;
      s += y * y;
    }
  }
  const float fct = square_factor(p, t, edge, s, p.sigma2[f], colsum, factor);
  if (!t.valid || fct == 1.0f) return;
  for (int r = 0; r < edge; ++r) {
    const std::int64_t k = k0 + r * p.width;
    const smre_math::DykstraPixel d = smre_math::dykstra_pixel(p.eps[k], fct);
    p.eps[k] = d.eps;
    p.q[k] = d.q;
  }
}

template <int E>
void launch_tiling_fixed(const TilingArgs& p, dim3 grid, bool first, cudaStream_t stream) {
  if (first)
    tiling_kernel<E, true><<<grid, tiling_threads, 0, stream>>>(p);
  else
    tiling_kernel<E, false><<<grid, tiling_threads, 0, stream>>>(p);
}

template <int E = 1>
void launch_tiling_by_edge(const TilingArgs& p, dim3 grid, bool first, cudaStream_t stream) {
  if constexpr (E <= max_register_edge) {
    if (p.edge == E) return launch_tiling_fixed<E>(p, grid, first, stream);
    return launch_tiling_by_edge<E + 1>(p, grid, first, stream);
  } else {
    const unsigned threads = p.edge <= tiling_threads ? tiling_threads : static_cast<unsigned>((p.edge + 31) / 32 * 32);
    if (first)
      tiling_kernel_any<true><<<grid, threads, 0, stream>>>(p);
    else
      tiling_kernel_any<false><<<grid, threads, 0, stream>>>(p);
  }
}

template <int E, int Cols>
void launch_band_fixed(const BandArgs& p, dim3 grid, unsigned threads, bool first, cudaStream_t stream) {
  if (first)
    band_kernel<E, Cols, true><<<grid, threads, 0, stream>>>(p);
  else
    band_kernel<E, Cols, false><<<grid, threads, 0, stream>>>(p);
}

template <int E = 1>
void launch_band_by_edge(const BandArgs& p, int edge, dim3 grid, bool first, cudaStream_t stream) {
  if constexpr (E <= max_register_edge) {
    if (edge != E) return launch_band_by_edge<E + 1>(p, edge, grid, first, stream);
    if (p.width <= band_threads)
      launch_band_fixed<E, 1>(p, grid, static_cast<unsigned>(p.width), first, stream);
    else
      launch_band_fixed<E, 2>(p, grid, band_threads, first, stream);
  }
}

// --- warm start and the first sweep's reference ----------------------------

constexpr int warm_columns = 32, warm_rows = 8;

struct WarmArgs {
  float* eps;
  float* start;
  std::int64_t width, height, pixels;
  const std::uint8_t* on;
  const std::uint8_t* warm;  // may be null
  const ExactEdge* edges;    // device
  int edge_count;
};

// grid (width / 32, height / 8, frames), block 32 x 8: eps (+ sum of q) and start.
// The sum runs over the tilings in project_exact_cpu's order (edges largest
// first, t = sy e + sx), adding only flagged squares' q (the others' q is 0).
__global__ void __launch_bounds__(warm_columns * warm_rows) warm_start_kernel(WarmArgs p) {
  const std::int64_t f = blockIdx.z;
  if (!p.on[f]) return;
  const int x = static_cast<int>(blockIdx.x) * warm_columns + static_cast<int>(threadIdx.x);
  const int y = static_cast<int>(blockIdx.y) * warm_rows + static_cast<int>(threadIdx.y);
  const int w = static_cast<int>(p.width), h = static_cast<int>(p.height);
  const std::int64_t k = f * p.pixels + static_cast<std::int64_t>(y) * w + x;
  float v = p.eps[k];
  if (p.warm != nullptr && p.warm[f] != 0) {
    float sum = 0.0f;
    for (int i = 0; i < p.edge_count; ++i) {
      const ExactEdge& g = p.edges[i];
      const int e = g.edge;
      const int ax = x / e, rx = x - ax * e, by = y / e, ry = y - by * e;
      const std::int64_t flag_cols = w / e, flag_frame = static_cast<std::int64_t>(h / e) * flag_cols;
      for (int sy = 0; sy < e; ++sy) {
        // The square row of tiling (sy, .) holding row y, if it lies inside the frame.
        const int b = sy <= ry ? by : by - 1;
        if (b < 0 || sy + (b + 1) * e > h) continue;
        const std::int64_t t0 = static_cast<std::int64_t>(sy) * e;
        const std::uint8_t* flags = g.flags + t0 * g.flag_stride + f * flag_frame + b * flag_cols;
        const float* q = g.q + t0 * g.q_stride + k;
        for (int sx = 0; sx < e; ++sx) {
          const int a = sx <= rx ? ax : ax - 1;
          if (a >= 0 && sx + (a + 1) * e <= w && flags[sx * g.flag_stride + a]) sum += q[sx * g.q_stride];
        }
      }
    }
    v += sum;
    p.eps[k] = v;
  }
  p.start[k] = v;
}

struct ChangeArgs {
  const float* eps;
  float* start;
  std::int64_t pixels;
  const std::uint8_t* on;
  double* partials;
};

// grid (pixels / 1024, frames), block 256.
__global__ void __launch_bounds__(change_threads) change_kernel(ChangeArgs p) {
  const std::int64_t f = blockIdx.y;
  if (!p.on[f]) return;
  const std::int64_t k = f * p.pixels + static_cast<std::int64_t>(blockIdx.x) * change_pixels + 4 * threadIdx.x;
  const float4 e = *reinterpret_cast<const float4*>(p.eps + k);
  const float4 s = *reinterpret_cast<const float4*>(p.start + k);
  double sum = fabs(static_cast<double>(e.x) - s.x) + fabs(static_cast<double>(e.y) - s.y);
  sum += fabs(static_cast<double>(e.z) - s.z) + fabs(static_cast<double>(e.w) - s.w);
  *reinterpret_cast<float4*>(p.start + k) = e;
  __shared__ double scratch[32];
  const double total = block_sum_to_first(sum, scratch);
  if (threadIdx.x == 0) p.partials[f * gridDim.x + blockIdx.x] = total;
}

struct DecideArgs {
  const double* partials;
  std::int64_t blocks, pixels;
  std::uint8_t* on;
  int* sweeps;
  const double* tol;
  int max_sweeps, fixed_sweeps;
};

// grid frames, block 256.
__global__ void __launch_bounds__(decide_threads) decide_kernel(DecideArgs p) {
  const std::int64_t f = blockIdx.x;
  if (!p.on[f]) return;
  double s = 0.0;
  for (std::int64_t i = threadIdx.x; i < p.blocks; i += blockDim.x) s += p.partials[f * p.blocks + i];
  __shared__ double scratch[32];
  const double total = block_sum_to_first(s, scratch);
  if (threadIdx.x != 0) return;
  const int sweep = p.sweeps[f] + 1;
  p.sweeps[f] = sweep;
  const bool done = p.fixed_sweeps > 0
                        ? sweep >= p.fixed_sweeps
                        : (total / static_cast<double>(p.pixels) < p.tol[f] || sweep >= p.max_sweeps);
  if (done) p.on[f] = 0;
}

}  // namespace

std::int64_t ExactEdge::flag_frame() const { return (height / edge) * (width / edge); }

bool exact_edge_supported(int edge) { return edge >= 1 && edge <= max_edge; }

void launch_exact_shift_row(const DykstraFrames& d, const ExactEdge& g, int sy, bool first, cudaStream_t stream) {
  const int e = g.edge;
  const std::int64_t rows = (d.height - sy) / e;
  if (d.frames <= 0 || rows <= 0 || d.width < e) return;
  if (e <= max_register_edge && d.width <= band_columns) {
    BandArgs p{};
    p.eps = d.eps;
    p.width = d.width;
    p.pixels = d.pixels();
    p.on = d.on;
    p.sigma2 = d.sigma2;
    p.warm = d.warm;
    p.q = g.q + static_cast<std::int64_t>(sy) * e * g.q_stride;
    p.q_stride = g.q_stride;
    p.flags = g.flags + static_cast<std::int64_t>(sy) * e * g.flag_stride;
    p.flag_stride = g.flag_stride;
    p.flag_frame = g.flag_frame();
    p.flag_cols = d.width / e;
    p.sy = sy;
    p.c = g.c;
    launch_band_by_edge(p, e, dim3(static_cast<unsigned>(rows), static_cast<unsigned>(d.frames)), first, stream);
    NANOSCOPY_CUDA_CHECK_LAUNCH();
    return;
  }
  for (int sx = 0; sx < e; ++sx) {
    const std::int64_t t = static_cast<std::int64_t>(sy) * e + sx;
    TilingArgs p{};
    p.eps = d.eps;
    p.q = g.q + t * g.q_stride;
    p.flags = g.flags + t * g.flag_stride;
    p.width = d.width;
    p.pixels = d.pixels();
    p.flag_frame = g.flag_frame();
    p.flag_cols = d.width / e;
    p.on = d.on;
    p.sigma2 = d.sigma2;
    p.warm = d.warm;
    p.cols = (d.width - sx) / e;
    p.sx = sx;
    p.sy = sy;
    p.edge = e;
    p.c = g.c;
    const std::int64_t per_block = e <= tiling_threads ? tiling_threads / e : 1;
    const dim3 grid(static_cast<unsigned>((p.cols + per_block - 1) / per_block), static_cast<unsigned>(rows),
                    static_cast<unsigned>(d.frames));
    launch_tiling_by_edge(p, grid, first, stream);
    NANOSCOPY_CUDA_CHECK_LAUNCH();
  }
}

void launch_exact_warm_start(const DykstraFrames& d, const ExactEdge* edges, int count, float* start,
                             cudaStream_t stream) {
  if (d.frames <= 0) return;
  WarmArgs p{d.eps, start, d.width, d.height, d.pixels(), d.on, d.warm, edges, count};
  const dim3 grid(static_cast<unsigned>(d.width / warm_columns), static_cast<unsigned>(d.height / warm_rows),
                  static_cast<unsigned>(d.frames));
  warm_start_kernel<<<grid, dim3(warm_columns, warm_rows), 0, stream>>>(p);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

std::int64_t exact_change_blocks(std::int64_t width, std::int64_t height) { return width * height / change_pixels; }

void launch_exact_change(const DykstraFrames& d, float* start, double* partials, cudaStream_t stream) {
  if (d.frames <= 0) return;
  ChangeArgs p{d.eps, start, d.pixels(), d.on, partials};
  const dim3 grid(static_cast<unsigned>(exact_change_blocks(d.width, d.height)), static_cast<unsigned>(d.frames));
  change_kernel<<<grid, change_threads, 0, stream>>>(p);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_exact_decide(const DykstraFrames& d, const double* partials, std::uint8_t* on, int* sweeps,
                         int max_sweeps, int fixed_sweeps, cudaStream_t stream) {
  if (d.frames <= 0) return;
  DecideArgs p{partials, exact_change_blocks(d.width, d.height), d.pixels(), on, sweeps, d.tol, max_sweeps,
               fixed_sweeps};
  decide_kernel<<<static_cast<unsigned>(d.frames), decide_threads, 0, stream>>>(p);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

}  // namespace nanoscopy::cuda
