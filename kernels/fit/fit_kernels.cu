#include <cuda_runtime.h>

#include <algorithm>

#include "common/cuda_check.hpp"
#include "fit/fit_kernels.hpp"
#include "nanoscopy/fit/estimators/lsq.hpp"
#include "nanoscopy/fit/initial_estimate.hpp"
#include "nanoscopy/fit/lm.hpp"
#include "nanoscopy/fit/model_list.hpp"

namespace nanoscopy::cuda {
namespace {

using namespace fit_detail;

constexpr int max_shared_bytes = 48 * 1024;
constexpr int target_block_threads = 128;

struct KernelArgs {
  const void* pixels;
  const SpotGuess* initial;
  FitResult* out;
  std::int64_t count;
  int width, height;
  int fits_per_block;
  int pixel_stride;  // floats per staged ROI
  FitSettings settings;
};

// Sum over the group's lanes (xor butterfly: every lane ends with the same bits).
template <int G, typename T>
__device__ __forceinline__ T group_sum(T v, unsigned mask) {
#pragma unroll
  for (int off = G / 2; off > 0; off /= 2) v += __shfl_xor_sync(mask, v, off);
  return v;
}

template <int G>
__device__ __forceinline__ InitScan group_combine(InitScan s, unsigned mask) {
#pragma unroll
  for (int off = G / 2; off > 0; off /= 2) {
    InitScan o;
    o.best_avg = __shfl_xor_sync(mask, s.best_avg, off);
    o.best_index = __shfl_xor_sync(mask, s.best_index, off);
    o.min = __shfl_xor_sync(mask, s.min, off);
    o.max = __shfl_xor_sync(mask, s.max, off);
    o.sum = __shfl_xor_sync(mask, s.sum, off);
    o.sum2 = __shfl_xor_sync(mask, s.sum2, off);
    o.nonfinite = __shfl_xor_sync(mask, s.nonfinite, off);
    s = init_scan_combine(s, o);
  }
  return s;
}

// The model M at p for one group: lanes fill the axis terms, then sum their pixels.
template <int G, class M>
struct GroupEvaluator {
  static constexpr int N = M::n_params;
  using DataSums = typename M::DataSums;

  const float* g;  // the staged ROI (shared)
  real* tab;       // 3·(width + height) values (shared): v, dc, ds; columns then rows
  int w, h, lane;
  int c0, r0, dc, dr;  // this lane's first pixel and the stride G as (columns, rows)
  unsigned mask;
  RoiConstants k;

  // Out of line, as one call per evaluation: inlined at lm_fit's two call
  // sites the kernels need about 200–220 registers a thread (sm_90, ptxas -v),
  // out of line 152–160 (the fused kernel before the model split: 156–176),
  // which keeps three 128-thread blocks per SM instead of two.
  __device__ __noinline__ bool operator()(const real p[N], Evaluation<N>& e) {
    const int t = w + h;
    const typename M::Axis ax = M::make_axis(M::column_width(p));
    const typename M::Axis ay = M::make_axis(M::row_width(p));
    const real cx = M::column_centre(p), cy = M::row_centre(p);
    AxisSums xs, ys;
    clear(xs);
    clear(ys);
    __syncwarp(mask);  // every lane is done reading the previous terms
    // Terms j = lane, lane + G, … over the columns (0 … w−1), then on over the
    // rows (w … t−1). Two loops, not a choice of axis per term: a per-term
    // choice between two Axis structs puts both in local memory.
    int j = lane;
    for (; j < w; j += G) {
      const AxisTerm a = M::term(ax, j - cx);
      tab[j] = a.v;
      tab[t + j] = a.dc;
      tab[2 * t + j] = a.ds;
      accumulate(xs, a);
    }
    for (; j < t; j += G) {
      const AxisTerm a = M::term(ay, (j - w) - cy);
      tab[j] = a.v;
      tab[t + j] = a.dc;
      tab[2 * t + j] = a.ds;
      accumulate(ys, a);
    }
    __syncwarp(mask);
    DataSums d;
    clear(d);
    const int n = w * h;
    int c = c0, r = r0;
    for (int i = lane; i < n; i += G) {
      const AxisTerm X{tab[c], tab[t + c], tab[2 * t + c]};
      const AxisTerm Y{tab[w + r], tab[t + w + r], tab[2 * t + w + r]};
      accumulate(d, static_cast<real>(g[i]), X, Y);
      c += dc;
      r += dr;
      if (c >= w) {
        c -= w;
        ++r;
      }
    }
    if (G > 1) {
      const auto reduce = [this](AxisSums& a) {
        a.v = group_sum<G>(a.v, mask);
        a.dc = group_sum<G>(a.dc, mask);
        a.ds = group_sum<G>(a.ds, mask);
        a.vv = group_sum<G>(a.vv, mask);
        a.vdc = group_sum<G>(a.vdc, mask);
        a.vds = group_sum<G>(a.vds, mask);
        a.dcdc = group_sum<G>(a.dcdc, mask);
        a.dcds = group_sum<G>(a.dcds, mask);
        a.dsds = group_sum<G>(a.dsds, mask);
      };
      reduce(xs);
      reduce(ys);
#pragma unroll
      for (int j = 0; j < DataSums::size; ++j) d.s[j] = group_sum<G>(d.s[j], mask);
    }
    return lsq_assemble(M::sums(p, xs, ys, d), k, e);
  }
};

template <typename Pixel, int G, class M>
__global__ void fit_kernel(KernelArgs a) {
  extern __shared__ real shared[];
  const int w = a.width, h = a.height, n = w * h, t = w + h;
  const int fpb = a.fits_per_block;
  real* tables = shared;
  float* staged = reinterpret_cast<float*>(shared + static_cast<std::size_t>(fpb) * 3 * t);

  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * fpb;
  const int fits_here = static_cast<int>(min(static_cast<std::int64_t>(fpb), a.count - first));
  const Pixel* src = static_cast<const Pixel*>(a.pixels) + first * n;
  for (int i = threadIdx.x; i < fits_here * n; i += blockDim.x) {
    const int f = i / n;
    staged[f * a.pixel_stride + (i - f * n)] = static_cast<float>(src[i]);
  }
  __syncthreads();

  const int slot = threadIdx.x / G;
  if (slot >= fits_here) return;
  const int lane = threadIdx.x % G;
  const unsigned mask = G == 32 ? 0xffffffffu : ((1u << G) - 1u) << ((threadIdx.x & 31) & ~(G - 1));
  const float* g = staged + slot * a.pixel_stride;
  const std::int64_t fit = first + slot;

  // The paper's initial estimate, lanes over pixels.
  InitScan scan = init_scan_identity();
  for (int i = lane; i < n; i += G) init_scan_pixel(scan, g, w, h, i % w, i / w);
  scan = group_combine<G>(scan, mask);
  if (scan.nonfinite > 0 || !(scan.max > scan.min)) {
    if (lane == 0) a.out[fit] = invalid_result();
    return;
  }
  real start[M::n_params];
  if (a.initial) {
    const SpotGuess guess = a.initial[fit];
    M::from_spot(guess.x, guess.y, guess.sigma, start);
  } else {
    const real threshold = init_threshold(scan);
    int above = 0;
    for (int i = lane; i < n; i += G) above += static_cast<real>(g[i]) > threshold ? 1 : 0;
    above = group_sum<G>(above, mask);
    M::from_spot(scan.best_index % w, scan.best_index / w, init_sigma(above), start);
  }

  GroupEvaluator<G, M> eval;
  eval.g = g;
  eval.tab = tables + static_cast<std::size_t>(slot) * 3 * t;
  eval.w = w;
  eval.h = h;
  eval.lane = lane;
  eval.c0 = lane % w;
  eval.r0 = lane / w;
  eval.dc = G % w;
  eval.dr = G / w;
  eval.mask = mask;
  eval.k = RoiConstants{static_cast<real>(n), scan.sum, scan.sum2};
  const FitResult r = lm_fit<M>(eval, start, w, h, n, a.settings);
  if (lane == 0) a.out[fit] = r;
}

template <typename Pixel, class M>
void launch_typed(const KernelArgs& args, const FitGeometry& geo, int blocks, cudaStream_t stream) {
  switch (geo.lanes) {
    case 1:
      fit_kernel<Pixel, 1, M><<<blocks, geo.threads, geo.shared_bytes, stream>>>(args);
      break;
    case 2:
      fit_kernel<Pixel, 2, M><<<blocks, geo.threads, geo.shared_bytes, stream>>>(args);
      break;
    case 4:
      fit_kernel<Pixel, 4, M><<<blocks, geo.threads, geo.shared_bytes, stream>>>(args);
      break;
    case 8:
      fit_kernel<Pixel, 8, M><<<blocks, geo.threads, geo.shared_bytes, stream>>>(args);
      break;
    case 16:
      fit_kernel<Pixel, 16, M><<<blocks, geo.threads, geo.shared_bytes, stream>>>(args);
      break;
    case 32:
      fit_kernel<Pixel, 32, M><<<blocks, geo.threads, geo.shared_bytes, stream>>>(args);
      break;
    default:
      throw UsageError("fit", "lanes per fit must be 1, 2, 4, 8, 16 or 32");
  }
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

template <typename Pixel, class M>
void preload_typed() {
  cudaFuncAttributes a{};
  NANOSCOPY_CUDA_CHECK(cudaFuncGetAttributes(&a, fit_kernel<Pixel, 1, M>));
  NANOSCOPY_CUDA_CHECK(cudaFuncGetAttributes(&a, fit_kernel<Pixel, 2, M>));
  NANOSCOPY_CUDA_CHECK(cudaFuncGetAttributes(&a, fit_kernel<Pixel, 4, M>));
  NANOSCOPY_CUDA_CHECK(cudaFuncGetAttributes(&a, fit_kernel<Pixel, 8, M>));
  NANOSCOPY_CUDA_CHECK(cudaFuncGetAttributes(&a, fit_kernel<Pixel, 16, M>));
  NANOSCOPY_CUDA_CHECK(cudaFuncGetAttributes(&a, fit_kernel<Pixel, 32, M>));
}

int pixel_stride(int width, int height) {
  return (width * height + 1) & ~1;
}

int shared_per_fit(int width, int height) {
  return static_cast<int>(3 * sizeof(real)) * (width + height) + 4 * pixel_stride(width, height);
}

}  // namespace

FitGeometry fit_geometry(int width, int height, std::int64_t count, int lanes, int multiprocessors) {
  const int n = width * height;
  FitGeometry geo;
  if (lanes <= 0) {
    // About 16 pixels per lane; more lanes when the batch cannot fill the GPU.
    lanes = 1;
    while (lanes < 32 && lanes * 16 < n) lanes *= 2;
    const std::int64_t wanted_threads = static_cast<std::int64_t>(std::max(multiprocessors, 1)) * 1024;
    while (lanes < 32 && count * lanes < wanted_threads) lanes *= 2;
  }
  geo.lanes = lanes;
  const int per_fit = shared_per_fit(width, height);
  int fpb = std::max(1, target_block_threads / lanes);
  fpb = std::max(1, std::min(fpb, max_shared_bytes / per_fit));
  if (fpb * lanes >= 32) fpb = (fpb * lanes / 32) * 32 / lanes;  // whole warps
  geo.fits_per_block = fpb;
  geo.threads = fpb * lanes;
  geo.shared_bytes = fpb * per_fit;
  return geo;
}

void launch_fit(const FitLaunch& launch, const FitGeometry& geo, cudaStream_t stream) {
  if (launch.count <= 0) return;
  KernelArgs args;
  args.pixels = launch.pixels;
  args.initial = launch.initial;
  args.out = launch.out;
  args.count = launch.count;
  args.width = launch.width;
  args.height = launch.height;
  args.fits_per_block = geo.fits_per_block;
  args.pixel_stride = pixel_stride(launch.width, launch.height);
  args.settings = launch.settings;
  const std::int64_t blocks = (launch.count + geo.fits_per_block - 1) / geo.fits_per_block;
  if (blocks > 0x7fffffff) throw UsageError("fit", "too many ROIs for one launch");
  // The model list (model_list.hpp) instantiates one kernel family per model.
  const bool known = dispatch_model(launch.settings.model, [&]<class M>(M) {
    if (launch.pixels_u16)
      launch_typed<std::uint16_t, M>(args, geo, static_cast<int>(blocks), stream);
    else
      launch_typed<float, M>(args, geo, static_cast<int>(blocks), stream);
  });
  if (!known) throw UsageError("fit", "the spot model is not one the fitter knows");
}

void preload_fit_kernels() {
  for_each_model([]<class M>(M) {
    preload_typed<std::uint16_t, M>();
    preload_typed<float, M>();
  });
}

}  // namespace nanoscopy::cuda
