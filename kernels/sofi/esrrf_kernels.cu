// eSRRF's kernels (esrrf_kernels.hpp). The RGC kernel does the work: per output
// pixel and frame it reads ~40 lattice gradients through L1 (neighbouring threads
// share them) and the phase's tap table (distance weights tabulated on the host,
// so no exp/pow per tap: the special-function work is one sqrt per tap and one
// powf per pixel where sensitivity > 1).
#include <cuda_runtime.h>

#include <cstdint>

#include "common/cuda_check.hpp"
#include "sofi/esrrf_kernels.hpp"

namespace nanoscopy::cuda {
namespace {

using namespace esrrf_math;

constexpr int kThreads = 256;

unsigned blocks_for(std::int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

__global__ void convert_kernel(const void* raw, bool u16, std::int64_t n, float* out) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = u16 ? static_cast<float>(static_cast<const unsigned short*>(raw)[i]) : static_cast<const float*>(raw)[i];
}

__global__ void gradients_kernel(const float* frames, EsrrfFrames f, float* gc, float* gr) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t px = f.width * f.height;
  if (i >= px * f.count) return;
  const std::int64_t frame = i / px, k = i % px;
  roberts_cross(frames + frame * px, f.width, k / f.width, k % f.width, &gc[i], &gr[i]);
}

__global__ void lattices_kernel(const float* gc, const float* gr, EsrrfFrames f, int m, float* g2c, float* g2r) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t lw = 2 * f.width + 1, lp = lw * (2 * f.height + 1), px = f.width * f.height;
  if (i >= lp * f.count) return;
  const std::int64_t frame = i / lp, k = i % lp;
  lattice_gradient(gc + frame * px, gr + frame * px, f.height, f.width, m, k % lw, k / lw, &g2c[i], &g2r[i]);
}

__global__ void __launch_bounds__(256) rgc_kernel(RgcTableView table, const float* frames, const float* g2c,
                                                  const float* g2r, EsrrfFrames f, long long first,
                                                  EsrrfSlotArray slots, float* state) {
  const int m = table.magnification;
  const std::int64_t wm = f.width * m, hm = f.height * m;
  const std::int64_t xm = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t ym = static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (xm >= wm || ym >= hm) return;
  const std::int64_t px = f.width * f.height, lp = (2 * f.width + 1) * (2 * f.height + 1), out_px = wm * hm;
  const std::int64_t i = ym * wm + xm;
  for (std::int64_t j = 0; j < f.count; ++j) {
    const long long t = first + j;
    const float intensity = magnified_intensity(frames + j * px, f.height, f.width, m, xm, ym);
    const float x = rgc_pixel(table, g2c + j * lp, g2r + j * lp, f.height, f.width, xm, ym, intensity);
    for (int s = 0; s < slots.count; ++s) {
      if (t < slots.begin[s] || t >= slots.end[s] || (t - slots.begin[s]) % slots.step[s] != 0) continue;
      float* base = state + static_cast<std::int64_t>(s) * 5 * out_px + i;
      TemporalState st{base[0], base[out_px], base[2 * out_px], base[3 * out_px], base[4 * out_px]};
      temporal_add(st, x, t == slots.begin[s]);
      base[0] = st.k;
      base[out_px] = st.s1;
      base[2 * out_px] = st.s2;
      base[3 * out_px] = st.p;
      base[4 * out_px] = st.last;
    }
  }
}

}  // namespace

void launch_esrrf_convert(const void* raw, bool u16, const EsrrfFrames& f, float* out, cudaStream_t stream) {
  const std::int64_t n = f.width * f.height * f.count;
  if (n == 0) return;
  convert_kernel<<<blocks_for(n), kThreads, 0, stream>>>(raw, u16, n, out);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_esrrf_gradients(const float* frames, const EsrrfFrames& f, float* gc, float* gr, cudaStream_t stream) {
  const std::int64_t n = f.width * f.height * f.count;
  if (n == 0) return;
  gradients_kernel<<<blocks_for(n), kThreads, 0, stream>>>(frames, f, gc, gr);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_esrrf_lattices(const float* gc, const float* gr, const EsrrfFrames& f, int magnification, float* g2c,
                           float* g2r, cudaStream_t stream) {
  const std::int64_t n = (2 * f.width + 1) * (2 * f.height + 1) * f.count;
  if (n == 0) return;
  lattices_kernel<<<blocks_for(n), kThreads, 0, stream>>>(gc, gr, f, magnification, g2c, g2r);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_esrrf_rgc(const RgcTableView& table, const float* frames, const float* g2c, const float* g2r,
                      const EsrrfFrames& f, std::int64_t first, const EsrrfSlotArray& slots, float* state,
                      cudaStream_t stream) {
  if (f.count == 0) return;
  const std::int64_t wm = f.width * table.magnification, hm = f.height * table.magnification;
  const dim3 block(32, 8);
  const dim3 grid(static_cast<unsigned>((wm + 31) / 32), static_cast<unsigned>((hm + 7) / 8));
  rgc_kernel<<<grid, block, 0, stream>>>(table, frames, g2c, g2r, f, first, slots, state);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

}  // namespace nanoscopy::cuda
