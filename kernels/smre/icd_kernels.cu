// Incomplete Dykstra (ICD) kernel of the SMRE engine: one launch per pass,
// one block of 1024 threads per 32x32 tile (geometry: dykstra_kernels.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "common/cuda_check.hpp"
#include "nanoscopy/smre/set_family.hpp"
#include "nanoscopy/smre/smre_math.hpp"
#include "smre/block_reduce.cuh"
#include "smre/dykstra_kernels.hpp"

namespace nanoscopy::cuda {
namespace {

using smre_detail::group_sum;

constexpr int tile = kIcdTile;
constexpr int tile_pixels = tile * tile;
constexpr int top_scale = kIcdScales - 1;  // edge 32
static_assert(tile == 32 && kIcdScales == 6 && kIcdPasses == 5, "the Morton layout assumes 32x32 tiles");

struct IcdArgs {
  float* eps;
  std::int64_t width, pixels;
  const std::uint8_t* on;
  const float* sigma2;
  const double* tol;
  const std::uint8_t* warm;  // per frame, may be null
  float* q;                  // this pass's q of frame 0 (scale Pass, tile 0); null: none kept
  std::int64_t q_frame;      // floats between frames' q
  std::int64_t q_scale;      // floats between scales' q (tiles of the pass * 1024)
  float c[kIcdScales];  // by scale s (edge 2^s)
  int max_sweeps, fixed_sweeps;
  int* sweeps;
};

// The even bits of v packed together (Morton decode of one coordinate).
__device__ __forceinline__ int even_bits(int v) {
  v &= 0x55555555;
  v = (v | (v >> 1)) & 0x33333333;
  v = (v | (v >> 2)) & 0x0f0f0f0f;
  v = (v | (v >> 4)) & 0x00ff00ff;
  return v;
}

// Shared scratch for the block-wide sums: two buffers used in turn, so one
// barrier per sum suffices (a buffer is rewritten only after the next sum's
// barrier, which every thread passes after reading it).
struct Scratch {
  float2 v[2][32];
};

// Sum over the whole 1024-thread block of both components; identical in every thread.
__device__ __forceinline__ float2 block_sum2(float2 v, Scratch& s, int& buf) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  v.x = group_sum<32>(v.x);
  v.y = group_sum<32>(v.y);
  if (lane == 0) s.v[buf][warp] = v;
  __syncthreads();
  float2 w = s.v[buf][lane];
  buf ^= 1;
  w.x = group_sum<32>(w.x);
  w.y = group_sum<32>(w.y);
  return w;
}

// Sum over this thread's aligned square of scale S (4^S consecutive threads), S < 5.
template <int S>
__device__ __forceinline__ float square_sum(float v, Scratch& s, int& buf) {
  if constexpr (S <= 2) {
    return group_sum<(1 << (2 * S))>(v);
  } else {
    const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
    v = group_sum<32>(v);
    if (lane == 0) s.v[buf][warp].x = v;
    __syncthreads();
    const float2* r = s.v[buf];
    buf ^= 1;
    if constexpr (S == 3) return r[warp & ~1].x + r[warp | 1].x;  // 2 warps
    else return group_sum<8>(r[(warp & ~7) + (lane & 7)].x);       // 8 warps
  }
}

// One Dykstra step of scale S on this thread's pixel: y = eps - q, eps = f y, q = eps - y.
template <int S, int Pass>
__device__ __forceinline__ void scale_step(float& e, float (&q)[kIcdScales], const IcdArgs& p, float sigma2,
                                           Scratch& s, int& buf) {
  if constexpr (S >= Pass) {
    const float y = e - q[S];
    const float f = smre_math::projection_scale(square_sum<S>(y * y, s, buf), p.c[S], sigma2);
    const smre_math::DykstraPixel d = smre_math::dykstra_pixel(y, f);
    e = d.eps;
    q[S] = d.q;
    scale_step<S - 1, Pass>(e, q, p, sigma2, s, buf);
  }
}

// grid ((width - 2^Pass) / 32, (height - 2^Pass) / 32, frames), block 1024.
template <int Pass>
__global__ void __launch_bounds__(tile_pixels) icd_pass_kernel(IcdArgs p) {
  const std::int64_t f = blockIdx.z;
  if (!p.on[f]) return;
  __shared__ Scratch scratch;
  int buf = 0;
  const int t = static_cast<int>(threadIdx.x);
  constexpr int offset = icd_pass_offset(Pass);
  const std::int64_t x = offset + static_cast<std::int64_t>(blockIdx.x) * tile + even_bits(t);
  const std::int64_t y = offset + static_cast<std::int64_t>(blockIdx.y) * tile + even_bits(t >> 1);
  float* const pixel = p.eps + f * p.pixels + y * p.width + x;
  const float sigma2 = p.sigma2[f];
  const double tol = p.tol[f];
  float e = *pixel;
  float q[kIcdScales] = {};
  float* const q_mem =
      p.q == nullptr ? nullptr
                     : p.q + f * p.q_frame +
                           (static_cast<std::int64_t>(blockIdx.y) * gridDim.x + blockIdx.x) * tile_pixels + t;
  if (q_mem != nullptr && p.warm != nullptr && p.warm[f] != 0) {
    // Warm start: the previous projection's q; e = eps + sum_s q_s (scales in project_icd_cpu's order).
#pragma unroll
    for (int s = Pass; s < kIcdScales; ++s) q[s] = q_mem[(s - Pass) * p.q_scale];
#pragma unroll
    for (int s = Pass; s < kIcdScales; ++s) e += q[s];
  }
  // The 32-px square's sum of the next sweep is taken with the previous sweep's change.
  const float first = e - q[top_scale];
  float top_sum = block_sum2(make_float2(first * first, 0.0f), scratch, buf).x;
  int sweep = 0;
  for (;;) {
    const float start = e;
    {
      const float yv = e - q[top_scale];
      const float fct = smre_math::projection_scale(top_sum, p.c[top_scale], sigma2);
      const smre_math::DykstraPixel d = smre_math::dykstra_pixel(yv, fct);
      e = d.eps;
      q[top_scale] = d.q;
    }
    scale_step<top_scale - 1, Pass>(e, q, p, sigma2, scratch, buf);
    ++sweep;
    const float next = e - q[top_scale];
    const float2 r = block_sum2(make_float2(next * next, fabsf(e - start)), scratch, buf);
    top_sum = r.x;
    const bool done = p.fixed_sweeps > 0
                          ? sweep >= p.fixed_sweeps
                          : (static_cast<double>(r.y) / tile_pixels < tol || sweep >= p.max_sweeps);
    if (done) break;
  }
  *pixel = e;
  if (q_mem != nullptr) {
#pragma unroll
    for (int s = Pass; s < kIcdScales; ++s) q_mem[(s - Pass) * p.q_scale] = q[s];
  }
  if (t == 0) atomicMax(p.sweeps + f, sweep);
}

// Tiles of pass `pass` fully inside the frame, along x and y.
std::int64_t pass_tiles(std::int64_t side, int pass) {
  return std::max<std::int64_t>(0, (side - icd_pass_offset(pass)) / tile);
}

// Floats of one frame's q of pass `pass`: its scales 2^pass .. 32, 1024 per tile.
std::int64_t pass_q_floats(std::int64_t width, std::int64_t height, int pass) {
  return (kIcdScales - pass) * pass_tiles(width, pass) * pass_tiles(height, pass) * tile_pixels;
}

template <int Pass>
void launch_pass(const DykstraFrames& d, IcdArgs p, cudaStream_t stream) {
  const std::int64_t tiles_x = pass_tiles(d.width, Pass), tiles_y = pass_tiles(d.height, Pass);
  if (tiles_x <= 0 || tiles_y <= 0) return;
  if (p.q != nullptr) {
    for (int i = 0; i < Pass; ++i) p.q += pass_q_floats(d.width, d.height, i);
    p.q_scale = tiles_x * tiles_y * tile_pixels;
  }
  const dim3 grid(static_cast<unsigned>(tiles_x), static_cast<unsigned>(tiles_y), static_cast<unsigned>(d.frames));
  icd_pass_kernel<Pass><<<grid, tile_pixels, 0, stream>>>(p);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

}  // namespace

std::int64_t icd_q_floats(std::int64_t width, std::int64_t height) {
  std::int64_t floats = 0;
  for (int pass = 0; pass < kIcdPasses; ++pass) floats += pass_q_floats(width, height, pass);
  return floats;
}

void launch_icd_pass(const DykstraFrames& d, int pass, const std::array<float, 6>& c, int max_sweeps,
                     int fixed_sweeps, int* sweeps, float* q, cudaStream_t stream) {
  if (d.frames <= 0) return;
  IcdArgs p{};
  p.eps = d.eps;
  p.width = d.width;
  p.pixels = d.pixels();
  p.on = d.on;
  p.sigma2 = d.sigma2;
  p.tol = d.tol;
  p.warm = d.warm;
  p.q = q;
  p.q_frame = q == nullptr ? 0 : icd_q_floats(d.width, d.height);
  for (int s = 0; s < kIcdScales; ++s) p.c[s] = c[static_cast<std::size_t>(s)];
  p.max_sweeps = max_sweeps;
  p.fixed_sweeps = fixed_sweeps;
  p.sweeps = sweeps;
  switch (pass) {
    case 0: return launch_pass<0>(d, p, stream);
    case 1: return launch_pass<1>(d, p, stream);
    case 2: return launch_pass<2>(d, p, stream);
    case 3: return launch_pass<3>(d, p, stream);
    case 4: return launch_pass<4>(d, p, stream);
    default: break;
  }
}

}  // namespace nanoscopy::cuda
