// The separable PSF passes of the SMRE engine, with the ADMM steps that read
// or write the same pixels fused into them (geometry: smre_kernels.hpp).
#include <cuda_runtime.h>

#include <cstdint>

#include "common/cuda_check.hpp"
#include "nanoscopy/smre/smre_math.hpp"
#include "smre/block_reduce.cuh"
#include "smre/smre_kernels.hpp"

namespace nanoscopy::cuda {
namespace {

namespace m = smre_math;
using smre_detail::block_sum_to_first;

constexpr int row_tile = 128;
constexpr int col_tile_x = 32;
constexpr int col_tile_y = 64;
constexpr int col_threads_y = 8;
constexpr std::size_t default_shared = 48 * 1024;

enum class RowMode { plain, residual };
enum class ColMode { plain, x_update, ax_step };

struct RowArgs {
  std::int64_t width, pixels;
  const std::uint8_t* active;
  const float* taps;
  int radius;
  bool flip;
  const float* in;  // plain
  SmreArrays a;     // residual
  float rho1;
  float* out;
};

struct ColArgs {
  std::int64_t width, height, pixels;
  const std::uint8_t* active;
  const float* taps;
  int radius;
  bool flip;
  const float* in;
  float* out;  // plain
  SmreArrays a;
  SmreScalars s;
  Regularizer reg;
  double* partials;  // x_update
};

__device__ __forceinline__ void load_taps(float* dst, const float* taps, int count, bool flip, int tid, int threads) {
  for (int i = tid; i < count; i += threads) dst[i] = taps[flip ? count - 1 - i : i];
}

// grid (row segments, rows, frames), block row_tile; shared: taps, then row_tile + 2 radius samples.
template <RowMode Mode>
__global__ void __launch_bounds__(row_tile) psf_rows_kernel(RowArgs p) {
  const std::int64_t f = blockIdx.z;
  if (!p.active[f]) return;
  extern __shared__ float smem[];
  const int r = p.radius, count = 2 * r + 1;
  float* taps = smem;
  float* seg = smem + count;
  const int tid = static_cast<int>(threadIdx.x);
  load_taps(taps, p.taps, count, p.flip, tid, row_tile);
  const std::int64_t row = f * p.pixels + static_cast<std::int64_t>(blockIdx.y) * p.width;
  const std::int64_t x0 = static_cast<std::int64_t>(blockIdx.x) * row_tile;
  for (int i = tid; i < row_tile + 2 * r; i += row_tile) {
    const std::int64_t x = x0 + i - r;
    float v = 0.0f;  // zero boundary
    if (x >= 0 && x < p.width) {
      const std::int64_t k = row + x;
      if constexpr (Mode == RowMode::plain)
        v = p.in[k];
      else
        v = m::data_residual_term(p.a.image[k], p.a.eps[k], p.a.ax[k], p.a.u1[k], p.rho1);
    }
    seg[i] = v;
  }
  __syncthreads();
  const std::int64_t x = x0 + tid;
  if (x >= p.width) return;
  float s = 0.0f;
  for (int k = 0; k < count; ++k) s += taps[k] * seg[tid + k];
  p.out[row + x] = s;
}

// grid (columns / 32, rows / 64, frames), block 32 x 8; shared: taps, then a (64 + 2 radius) x 32 tile.
template <ColMode Mode>
__global__ void __launch_bounds__(col_tile_x* col_threads_y) psf_cols_kernel(ColArgs p) {
  const std::int64_t f = blockIdx.z;
  if (!p.active[f]) return;
  extern __shared__ float smem[];
  const int r = p.radius, count = 2 * r + 1, rows = col_tile_y + 2 * r;
  float* taps = smem;
  float* tile = smem + count;
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  load_taps(taps, p.taps, count, p.flip, ty * col_tile_x + tx, col_tile_x * col_threads_y);
  const std::int64_t base = f * p.pixels;
  const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * col_tile_x + tx;  // width is a multiple of 32
  const std::int64_t y0 = static_cast<std::int64_t>(blockIdx.y) * col_tile_y;
  for (int i = ty; i < rows; i += col_threads_y) {
    const std::int64_t y = y0 + i - r;
    tile[i * col_tile_x + tx] = (y >= 0 && y < p.height) ? p.in[base + y * p.width + x] : 0.0f;
  }
  __syncthreads();
  double step2 = 0.0;
  for (int i = ty; i < col_tile_y; i += col_threads_y) {
    const std::int64_t y = y0 + i;
    if (y >= p.height) break;
    float s = 0.0f;
    for (int k = 0; k < count; ++k) s += taps[k] * tile[(i + k) * col_tile_x + tx];
    const std::int64_t idx = base + y * p.width + x;
    if constexpr (Mode == ColMode::plain) {
      p.out[idx] = s;
    } else if constexpr (Mode == ColMode::x_update) {
      const float old = p.a.x[idx];
      const float nx = m::x_update(old, s, p.a.z[idx], p.a.u2[idx], p.s.gamma, p.s.rho2);
      p.a.x[idx] = nx;
      step2 += m::squared(nx - old);
    } else {
      p.a.ax[idx] = s;
      p.a.eps[idx] = m::projection_argument(p.a.image[idx], s, p.a.u1[idx], p.s.rho1);
      if (p.reg != Regularizer::tv) {
        const float v = m::prox_argument(p.a.x[idx], p.a.u2[idx], p.s.rho2);
        p.a.z[idx] = p.reg == Regularizer::l2 ? m::prox_l2(v, p.s.lambda, p.s.rho2) : m::prox_l1(v, p.s.lambda, p.s.rho2);
      }
    }
  }
  if constexpr (Mode == ColMode::x_update) {
    __shared__ double scratch[32];
    const double total = block_sum_to_first(step2, scratch);
    if (tx == 0 && ty == 0)
      p.partials[f * gridDim.x * gridDim.y + static_cast<std::int64_t>(blockIdx.y) * gridDim.x + blockIdx.x] = total;
  }
}

std::size_t row_shared_bytes(int radius) {
  return static_cast<std::size_t>(2 * radius + 1 + row_tile + 2 * radius) * sizeof(float);
}

RowArgs row_args(const SmreBatch& b, const PsfTaps& k, float* out) {
  RowArgs p{};
  p.width = b.width;
  p.pixels = b.pixels();
  p.active = b.active;
  p.taps = k.taps;
  p.radius = k.radius;
  p.flip = k.flip;
  p.out = out;
  return p;
}

ColArgs col_args(const SmreBatch& b, const PsfTaps& k, const float* in) {
  ColArgs p{};
  p.width = b.width;
  p.height = b.height;
  p.pixels = b.pixels();
  p.active = b.active;
  p.taps = k.taps;
  p.radius = k.radius;
  p.flip = k.flip;
  p.in = in;
  p.reg = Regularizer::l2;
  return p;
}

template <RowMode Mode>
void launch_rows(const SmreBatch& b, const RowArgs& p, cudaStream_t stream) {
  if (b.frames <= 0) return;
  const dim3 grid(static_cast<unsigned>((b.width + row_tile - 1) / row_tile), static_cast<unsigned>(b.height),
                  static_cast<unsigned>(b.frames));
  psf_rows_kernel<Mode><<<grid, row_tile, row_shared_bytes(p.radius), stream>>>(p);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

template <ColMode Mode>
void launch_cols(const SmreBatch& b, const ColArgs& p, cudaStream_t stream) {
  if (b.frames <= 0) return;
  const dim3 grid(static_cast<unsigned>(b.width / col_tile_x),
                  static_cast<unsigned>((b.height + col_tile_y - 1) / col_tile_y), static_cast<unsigned>(b.frames));
  const dim3 block(col_tile_x, col_threads_y);
  psf_cols_kernel<Mode><<<grid, block, psf_col_shared_bytes(p.radius), stream>>>(p);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

template <typename Kernel>
void raise_shared_limit(Kernel kernel, std::size_t bytes) {
  if (bytes > default_shared)
    NANOSCOPY_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
}

}  // namespace

std::int64_t psf_col_blocks(std::int64_t width, std::int64_t height) {
  return (width / col_tile_x) * ((height + col_tile_y - 1) / col_tile_y);
}

std::size_t psf_col_shared_bytes(int radius) {
  return static_cast<std::size_t>(2 * radius + 1 + (col_tile_y + 2 * radius) * col_tile_x) * sizeof(float);
}

void prepare_psf_kernels(int radius) {
  raise_shared_limit(psf_rows_kernel<RowMode::plain>, row_shared_bytes(radius));
  raise_shared_limit(psf_rows_kernel<RowMode::residual>, row_shared_bytes(radius));
  raise_shared_limit(psf_cols_kernel<ColMode::plain>, psf_col_shared_bytes(radius));
  raise_shared_limit(psf_cols_kernel<ColMode::x_update>, psf_col_shared_bytes(radius));
  raise_shared_limit(psf_cols_kernel<ColMode::ax_step>, psf_col_shared_bytes(radius));
}

void launch_psf_rows_plain(const SmreBatch& b, const PsfTaps& k, const float* in, float* out, cudaStream_t stream) {
  RowArgs p = row_args(b, k, out);
  p.in = in;
  launch_rows<RowMode::plain>(b, p, stream);
}

void launch_psf_rows_residual(const SmreBatch& b, const PsfTaps& k, const SmreArrays& a, float rho1, float* out,
                              cudaStream_t stream) {
  RowArgs p = row_args(b, k, out);
  p.a = a;
  p.rho1 = rho1;
  launch_rows<RowMode::residual>(b, p, stream);
}

void launch_psf_cols_plain(const SmreBatch& b, const PsfTaps& k, const float* in, float* out, cudaStream_t stream) {
  ColArgs p = col_args(b, k, in);
  p.out = out;
  launch_cols<ColMode::plain>(b, p, stream);
}

void launch_psf_cols_x_update(const SmreBatch& b, const PsfTaps& k, const SmreArrays& a, const SmreScalars& s,
                              double* step_partials, cudaStream_t stream) {
  ColArgs p = col_args(b, k, a.work);
  p.a = a;
  p.s = s;
  p.partials = step_partials;
  launch_cols<ColMode::x_update>(b, p, stream);
}

void launch_psf_cols_ax_step(const SmreBatch& b, const PsfTaps& k, const SmreArrays& a, const SmreScalars& s,
                             Regularizer reg, cudaStream_t stream) {
  ColArgs p = col_args(b, k, a.work);
  p.a = a;
  p.s = s;
  p.reg = reg;
  launch_cols<ColMode::ax_step>(b, p, stream);
}

}  // namespace nanoscopy::cuda
