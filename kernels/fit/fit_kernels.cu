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

// T: the scalar of the fit math, float unless FitSettings::precision asks for
// fp64. The float kernels hold no FP64 instruction (scripts/sass-fp64, ctest
// sass_fp64): the settings arrive converted (FitLimits<float>), and χ² is
// summed from residuals (estimators/lsq.hpp, kResidualChi2).
template <class T>
struct KernelArgs {
  const void* pixels;
  const SpotGuess* initial;
  FitResult* out;
  std::int64_t count;
  int width, height;
  int fits_per_block;
  int pixel_stride;  // floats per staged ROI
  FitLimits<T> limits;
};

// Sum over the group's lanes (xor butterfly: every lane ends with the same bits).
template <int G, typename T>
__device__ __forceinline__ T group_sum(T v, unsigned mask) {
#pragma unroll
  for (int off = G / 2; off > 0; off /= 2) v += __shfl_xor_sync(mask, v, off);
  return v;
}

template <int G, class T>
__device__ __forceinline__ InitScan<T> group_combine(InitScan<T> s, unsigned mask) {
#pragma unroll
  for (int off = G / 2; off > 0; off /= 2) {
    InitScan<T> o;
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
template <int G, class M, class T>
struct GroupEvaluator {
  static constexpr int N = M::n_params;
  using DataSums = typename M::template DataSums<T>;
  using real = T;

  const float* g;  // the staged ROI (shared)
  real* tab;       // 3·(width + height) values (shared): v, dc, ds; columns then rows
  int w, h, lane;
  int c0, r0, dc, dr;  // this lane's first pixel and the stride G as (columns, rows)
  unsigned mask;
  RoiConstants<T> k;

  // Out of line, as one call per evaluation: inlined at lm_fit's two call
  // sites the kernels need about 200–220 registers a thread (sm_90, ptxas -v),
  // out of line 152–160 (the fused kernel before the model split: 156–176),
  // which keeps three 128-thread blocks per SM instead of two.
  __device__ __noinline__ bool operator()(const real p[N], Evaluation<T, N>& e) {
    const int t = w + h;
    const auto ax = M::make_axis(M::column_width(p));
    const auto ay = M::make_axis(M::row_width(p));
    const real cx = M::column_centre(p), cy = M::row_centre(p);
    AxisSums<T> xs, ys;
    clear(xs);
    clear(ys);
    __syncwarp(mask);  // every lane is done reading the previous terms
    // Terms j = lane, lane + G, … over the columns (0 … w−1), then on over the
    // rows (w … t−1). Two loops, not a choice of axis per term: a per-term
    // choice between two Axis structs puts both in local memory.
    int j = lane;
    for (; j < w; j += G) {
      const AxisTerm<T> a = M::term(ax, j - cx);
      tab[j] = a.v;
      tab[t + j] = a.dc;
      tab[2 * t + j] = a.ds;
      accumulate(xs, a);
    }
    for (; j < t; j += G) {
      const AxisTerm<T> a = M::term(ay, (j - w) - cy);
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
      const AxisTerm<T> X{tab[c], tab[t + c], tab[2 * t + c]};
      const AxisTerm<T> Y{tab[w + r], tab[t + w + r], tab[2 * t + w + r]};
      accumulate(d, static_cast<real>(g[i]), X, Y);
      c += dc;
      r += dr;
      if (c >= w) {
        c -= w;
        ++r;
      }
    }
    if (G > 1) {
      const auto reduce = [this](AxisSums<T>& a) {
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
    if (!lsq_assemble(M::sums(p, xs, ys, d), k, e)) return false;
    if constexpr (kResidualChi2<T>) {
      // χ² from the residuals (see kResidualChi2): a second pass over this lane's pixels.
      real chi2 = 0;
      c = c0;
      r = r0;
      for (int i = lane; i < n; i += G) {
        const real res = static_cast<real>(g[i]) - e.alpha * (tab[c] * tab[w + r]) - e.beta;
        chi2 += res * res;
        c += dc;
        r += dr;
        if (c >= w) {
          c -= w;
          ++r;
        }
      }
      if (G > 1) chi2 = group_sum<G>(chi2, mask);
      e.chi2 = chi2;
    }
    return true;
  }
};

template <typename Pixel, int G, class M, class T>
__global__ void fit_kernel(KernelArgs<T> a) {
  using real = T;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int w = a.width, h = a.height, n = w * h, t = w + h;
  const int fpb = a.fits_per_block;
  real* tables = reinterpret_cast<real*>(shared_bytes);
  float* staged = reinterpret_cast<float*>(tables + static_cast<std::size_t>(fpb) * 3 * t);

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
  InitScan<T> scan = init_scan_identity<T>();
  for (int i = lane; i < n; i += G) init_scan_pixel(scan, g, w, h, i % w, i / w);
  scan = group_combine<G>(scan, mask);
  if (scan.nonfinite > 0 || !(scan.max > scan.min)) {
    if (lane == 0) a.out[fit] = invalid_result();
    return;
  }
  real start[M::n_params];
  if (a.initial) {
    const SpotGuess guess = a.initial[fit];
    M::from_spot(real(guess.x), real(guess.y), real(guess.sigma), start);
  } else {
    const real threshold = init_threshold(scan);
    int above = 0;
    for (int i = lane; i < n; i += G) above += static_cast<real>(g[i]) > threshold ? 1 : 0;
    above = group_sum<G>(above, mask);
    M::from_spot(real(scan.best_index % w), real(scan.best_index / w), init_sigma<T>(above), start);
  }

  GroupEvaluator<G, M, T> eval;
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
  eval.k = RoiConstants<T>{static_cast<real>(n), scan.sum, scan.sum2};
  const FitResult r = lm_fit<M>(eval, start, w, h, n, a.limits);
  if (lane == 0) a.out[fit] = r;
}

template <typename Pixel, class M, class T>
void launch_typed(const KernelArgs<T>& args, const FitGeometry& geo, int blocks, cudaStream_t stream) {
  switch (geo.lanes) {
    case 1:
      fit_kernel<Pixel, 1, M, T><<<blocks, geo.threads, geo.shared_bytes, stream>>>(args);
      break;
    case 2:
      fit_kernel<Pixel, 2, M, T><<<blocks, geo.threads, geo.shared_bytes, stream>>>(args);
      break;
    case 4:
      fit_kernel<Pixel, 4, M, T><<<blocks, geo.threads, geo.shared_bytes, stream>>>(args);
      break;
    case 8:
      fit_kernel<Pixel, 8, M, T><<<blocks, geo.threads, geo.shared_bytes, stream>>>(args);
      break;
    case 16:
      fit_kernel<Pixel, 16, M, T><<<blocks, geo.threads, geo.shared_bytes, stream>>>(args);
      break;
    case 32:
      fit_kernel<Pixel, 32, M, T><<<blocks, geo.threads, geo.shared_bytes, stream>>>(args);
      break;
    default:
      throw UsageError("fit", "lanes per fit must be 1, 2, 4, 8, 16 or 32");
  }
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

template <typename Pixel, class M, class T>
void preload_typed() {
  cudaFuncAttributes a{};
  NANOSCOPY_CUDA_CHECK(cudaFuncGetAttributes(&a, fit_kernel<Pixel, 1, M, T>));
  NANOSCOPY_CUDA_CHECK(cudaFuncGetAttributes(&a, fit_kernel<Pixel, 2, M, T>));
  NANOSCOPY_CUDA_CHECK(cudaFuncGetAttributes(&a, fit_kernel<Pixel, 4, M, T>));
  NANOSCOPY_CUDA_CHECK(cudaFuncGetAttributes(&a, fit_kernel<Pixel, 8, M, T>));
  NANOSCOPY_CUDA_CHECK(cudaFuncGetAttributes(&a, fit_kernel<Pixel, 16, M, T>));
  NANOSCOPY_CUDA_CHECK(cudaFuncGetAttributes(&a, fit_kernel<Pixel, 32, M, T>));
}

int pixel_stride(int width, int height) {
  return (width * height + 1) & ~1;
}

int shared_per_fit(int width, int height, bool fp64) {
  const int real_bytes = fp64 ? static_cast<int>(sizeof(double)) : static_cast<int>(sizeof(float));
  return 3 * real_bytes * (width + height) + 4 * pixel_stride(width, height);
}

template <class T>
void launch_in(const FitLaunch& launch, const FitGeometry& geo, cudaStream_t stream) {
  KernelArgs<T> args;
  args.pixels = launch.pixels;
  args.initial = launch.initial;
  args.out = launch.out;
  args.count = launch.count;
  args.width = launch.width;
  args.height = launch.height;
  args.fits_per_block = geo.fits_per_block;
  args.pixel_stride = pixel_stride(launch.width, launch.height);
  args.limits = fit_limits<T>(launch.settings);
  const std::int64_t blocks = (launch.count + geo.fits_per_block - 1) / geo.fits_per_block;
  if (blocks > 0x7fffffff) throw UsageError("fit", "too many ROIs for one launch");
  // The model list (model_list.hpp) instantiates one kernel family per model.
  const bool known = dispatch_model(launch.settings.model, [&]<class M>(M) {
    if (launch.pixels_u16)
      launch_typed<std::uint16_t, M, T>(args, geo, static_cast<int>(blocks), stream);
    else
      launch_typed<float, M, T>(args, geo, static_cast<int>(blocks), stream);
  });
  if (!known) throw UsageError("fit", "the spot model is not one the fitter knows");
}

}  // namespace

bool fit_fp64(FitPrecision precision) {
  return precision == FitPrecision::fp64;
}

FitGeometry fit_geometry(int width, int height, std::int64_t count, int lanes, int multiprocessors,
                         FitPrecision precision) {
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
  const int per_fit = shared_per_fit(width, height, fit_fp64(precision));
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
  if (fit_fp64(launch.settings.precision))
    launch_in<double>(launch, geo, stream);
  else
    launch_in<float>(launch, geo, stream);
}

void preload_fit_kernels(FitPrecision precision) {
  for_each_model([precision]<class M>(M) {
    if (fit_fp64(precision)) {
      preload_typed<std::uint16_t, M, double>();
      preload_typed<float, M, double>();
    } else {
      preload_typed<std::uint16_t, M, float>();
      preload_typed<float, M, float>();
    }
  });
}

}  // namespace nanoscopy::cuda
