// The fit kernels as templates (fit_launch.cuh says why they live in a header):
// included only by fit_kernels_<model>.cu, each of which instantiates
// launch_model and preload_model for its model in float and double.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <type_traits>

#include "common/cuda_check.hpp"
#include "fit/fit_launch.cuh"
#include "nanoscopy/fit/estimators/lsq.hpp"
#include "nanoscopy/fit/estimators/mle.hpp"
#include "nanoscopy/fit/initial_estimate.hpp"
#include "nanoscopy/fit/lm.hpp"
#include "nanoscopy/fit/model_list.hpp"

namespace nanoscopy::cuda::fit_launch {

using namespace fit_detail;

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

  M model;         // the batch's model object (constants of the astigmatic model; empty otherwise)
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
    const auto ax = model.make_axis(model.column_width(p));
    const auto ay = model.make_axis(model.row_width(p));
    const real cx = model.column_centre(p), cy = model.row_centre(p);
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
    if (!lsq_assemble(model.sums(p, xs, ys, d), k, e)) return false;
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

// The estimator tag of the closed-form least squares (estimators/lsq.hpp);
// Mle and Wlsq are the per-pixel estimators of estimators/mle.hpp.
struct Lsq {};

// A per-pixel estimator E (mle, wlsq) of model M at θ = (p, α, β) for one
// group: lanes fill the axis terms (as GroupEvaluator), then each lane sums
// E's terms over its pixels and the group reduces them.
template <int G, class M, class E, class T>
struct GroupPixelEvaluator {
  static constexpr int N = M::n_params;
  static constexpr int P = kPixelParams<N>;
  using real = T;

  M model;
  const float* g;      // the staged ROI in photons (shared)
  const float* shift;  // the staged variance shifts (shared), or null: 0
  real* tab;
  int w, h, lane;
  int c0, r0, dc, dr;
  unsigned mask;

  __device__ void fill(const real q[P]) {
    const int t = w + h;
    const auto ax = model.make_axis(model.column_width(q));
    const auto ay = model.make_axis(model.row_width(q));
    const real cx = model.column_centre(q), cy = model.row_centre(q);
    __syncwarp(mask);
    int j = lane;
    for (; j < w; j += G) {
      const AxisTerm<T> a = M::term(ax, j - cx);
      tab[j] = a.v;
      tab[t + j] = a.dc;
      tab[2 * t + j] = a.ds;
    }
    for (; j < t; j += G) {
      const AxisTerm<T> a = M::term(ay, (j - w) - cy);
      tab[j] = a.v;
      tab[t + j] = a.dc;
      tab[2 * t + j] = a.ds;
    }
    __syncwarp(mask);
  }

  // ∂μ/∂θ, μ and g' of this lane's pixel i at (c, r).
  __device__ __forceinline__ void at(const real q[P], int i, int c, int r, real d[P], real& mu, real& gs) const {
    const int t = w + h;
    const AxisTerm<T> X{tab[c], tab[t + c], tab[2 * t + c]};
    const AxisTerm<T> Y{tab[w + r], tab[t + w + r], tab[2 * t + w + r]};
    real f, df[N];
    model.pixel(q, X, Y, f, df);
    mu_derivatives<T, N>(f, df, q[N], d);
    const real s = shift ? static_cast<real>(shift[i]) : real(0);
    mu = q[N] * f + q[N + 1] + s;
    gs = static_cast<real>(g[i]) + s;
  }

  // Fills the axis terms at θ = q, then calls visit(g', μ, ∂μ/∂θ) for each of this lane's pixels.
  template <class Visit>
  __device__ __forceinline__ void each_pixel(const real q[P], Visit&& visit) {
    fill(q);
    const int n = w * h;
    int c = c0, r = r0;
    for (int i = lane; i < n; i += G) {
      real d[P], mu, gs;
      at(q, i, c, r, d, mu, gs);
      visit(gs, mu, static_cast<const real*>(d));
      c += dc;
      r += dr;
      if (c >= w) {
        c -= w;
        ++r;
      }
    }
  }

  __device__ __noinline__ bool operator()(const real theta[P], Evaluation<T, P>& out) {
    // The sums and θ in registers: `out` and `theta` live in the caller's local memory, and summing into
    // them through the reference made every pixel's 21 updates local-memory read-modify-writes (the
    // compiler cannot rule out that the shared-memory loads alias them; ncu on the H100: L2 73 % busy).
    real q[P];
#pragma unroll
    for (int j = 0; j < P; ++j) q[j] = theta[j];
    Evaluation<T, P> e;
    clear_evaluation(e);
    int bad = 0;
    each_pixel(q, [&](real gs, real mu, const real* d) { bad += E::add(e, gs, mu, d) ? 0 : 1; });
    if (G > 1) {
      e.chi2 = group_sum<G>(e.chi2, mask);
#pragma unroll
      for (int j = 0; j < triangle(P); ++j) e.h[j] = group_sum<G>(e.h[j], mask);
#pragma unroll
      for (int j = 0; j < P; ++j) e.grad[j] = group_sum<G>(e.grad[j], mask);
      bad = group_sum<G>(bad, mask);
    }
    const bool ok = bad == 0 && pixel_finish(e, q);
    out = e;
    return ok;
  }

  // The CRLB and log-likelihood at the estimate (every lane: the sums are reduced over the group).
  __device__ __noinline__ void finish(const real q[P], FitResult& out) {
    FisherSums<T, P> fs;
    clear_fisher(fs);
    each_pixel(q, [&](real gs, real mu, const real* d) { add_fisher(fs, gs, mu, d); });
    if (G > 1) {
#pragma unroll
      for (int j = 0; j < triangle(P); ++j) fs.info[j] = group_sum<G>(fs.info[j], mask);
      fs.log_likelihood = group_sum<G>(fs.log_likelihood, mask);
      fs.ok = group_sum<G>(fs.ok ? 0 : 1, mask) == 0;
    }
    real magnitude[P];
    parameter_magnitudes<real, P>(model, q, magnitude);
    fisher_to_result<T, P, z_index<M>(), peak_amplitude<M>()>(fs, q, magnitude, out);
  }
};

// A per-pixel evaluator of estimator E over the same group, staged ROI and
// axis-term tables as the lsq evaluator `eval`; `shift`: the staged variance
// shifts, or null (0).
template <class E, int G, class M, class T>
__device__ GroupPixelEvaluator<G, M, E, T> pixel_evaluator(const GroupEvaluator<G, M, T>& eval, const float* shift) {
  GroupPixelEvaluator<G, M, E, T> pe;
  pe.model = eval.model;
  pe.g = eval.g;
  pe.shift = shift;
  pe.tab = eval.tab;
  pe.w = eval.w;
  pe.h = eval.h;
  pe.lane = eval.lane;
  pe.c0 = eval.c0;
  pe.r0 = eval.r0;
  pe.dc = eval.dc;
  pe.dr = eval.dr;
  pe.mask = eval.mask;
  return pe;
}

// A 3D model's CRLB after an lsq fit, as the CPU engine's lsq_crlb
// (estimators/mle.hpp, lsq_result_theta), with no variance shift (lsq does not
// stage it), by the per-pixel evaluator's finish on the lsq group.
template <int G, class M, class T>
__device__ void lsq_crlb(const GroupEvaluator<G, M, T>& eval, FitResult& r, const KernelArgs<T>& a) {
  T theta[kPixelParams<M::n_params>];
  if (!lsq_result_theta<M>(r, a.photon_offset, a.photons_per_value, theta)) return;
  auto pe = pixel_evaluator<Mle>(eval, nullptr);
  FitResult bound;
  pe.finish(theta, bound);
  take_lsq_crlb(bound, a.photons_per_value, r);
}

// Copies the block's ROIs of pixel type Pixel into shared memory as float: photons
// for the per-pixel estimators (with the variance shifts after the pixels), raw
// values for lsq. The pixel type is a uniform branch at run time, not a template
// parameter of fit_kernel: that halves the kernels each architecture's ptxas
// compiles (the fat build's longest steps) for a copy loop that costs nothing.
template <typename Pixel, bool PerPixel, class T>
__device__ __forceinline__ void stage_rois(const KernelArgs<T>& a, std::int64_t first, int fits_here, float* staged,
                                           float* shifts) {
  using real = T;
  const int n = a.width * a.height;
  const Pixel* src = static_cast<const Pixel*>(a.pixels) + first * n;
  for (int i = threadIdx.x; i < fits_here * n; i += blockDim.x) {
    const int f = i / n;
    if constexpr (PerPixel) {
      staged[f * a.pixel_stride + (i - f * n)] =
          static_cast<float>((static_cast<real>(src[i]) - a.photon_offset) * a.photons_per_value);
      if (a.variance_shift) shifts[f * a.pixel_stride + (i - f * n)] = a.variance_shift[first * n + i];
    } else {
      staged[f * a.pixel_stride + (i - f * n)] = static_cast<float>(src[i]);
    }
  }
}

template <int G, class M, class T, class E>
__global__ void fit_kernel(KernelArgs<T> a, M model) {
  using real = T;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int w = a.width, h = a.height, n = w * h, t = w + h;
  const int fpb = a.fits_per_block;
  real* tables = reinterpret_cast<real*>(shared_bytes);
  float* staged = reinterpret_cast<float*>(tables + static_cast<std::size_t>(fpb) * 3 * t);

  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * fpb;
  const int fits_here = static_cast<int>(min(static_cast<std::int64_t>(fpb), a.count - first));
  constexpr bool per_pixel = !std::is_same_v<E, Lsq>;
  // The per-pixel estimators stage photons, and the variance shifts after the pixels.
  float* shifts = staged + static_cast<std::size_t>(fpb) * a.pixel_stride;
  if (a.pixels_u16)
    stage_rois<std::uint16_t, per_pixel>(a, first, fits_here, staged, shifts);
  else
    stage_rois<float, per_pixel>(a, first, fits_here, staged, shifts);
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
    model.from_spot(real(guess.x), real(guess.y), real(guess.sigma), start);
  } else {
    const real threshold = init_threshold(scan);
    int above = 0;
    for (int i = lane; i < n; i += G) above += static_cast<real>(g[i]) > threshold ? 1 : 0;
    above = group_sum<G>(above, mask);
    model.from_spot(real(scan.best_index % w), real(scan.best_index / w), init_sigma<T>(above), start);
  }

  GroupEvaluator<G, M, T> eval;
  eval.model = model;
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
  if constexpr (!per_pixel) {
    FitResult r = lm_fit<M, M::n_params>(model, eval, start, w, h, n, a.limits);
    if constexpr (z_index<M>() >= 0) lsq_crlb(eval, r, a);
    if (lane == 0) a.out[fit] = r;
  } else {
    // lsq's closed-form α̂, β̂ at the initial shape start α, β (estimators/mle.hpp).
    constexpr int N = M::n_params;
    constexpr int P = kPixelParams<N>;
    Evaluation<T, N> closed{};
    const bool start_finite = finite(start[0]) && finite(start[1]) && finite(start[2]);
    const bool have = start_finite && eval(start, closed);
    real theta[P];
#pragma unroll
    for (int j = 0; j < N; ++j) theta[j] = start[j];
    pixel_start(have, closed.alpha, closed.beta, scan.max - scan.min, theta[N], theta[N + 1]);
    // Without sCMOS shifts the evaluator reads none (one shared load and add less per pixel and pass).
    auto pe = pixel_evaluator<E>(eval, a.variance_shift ? shifts + slot * a.pixel_stride : nullptr);
    FitResult r = lm_fit<M, P>(model, pe, theta, w, h, n, a.limits);
    const real inv = real(1) / a.photons_per_value;
    r.amplitude = static_cast<float>(static_cast<real>(r.amplitude) * inv);
    r.background = static_cast<float>(static_cast<real>(r.background) * inv + a.photon_offset);
    r.crlb_background = static_cast<float>(static_cast<real>(r.crlb_background) * inv);
    r.crlb_photons = static_cast<float>(static_cast<real>(r.crlb_photons) * inv);
    if (lane == 0) a.out[fit] = r;
  }
}

// Calls f(std::integral_constant<int, G>{}) for `lanes` = G, one of the lane counts the kernels of precision T
// are built for: 1..32 in float, kFp64Lanes in double (fit_kernels.hpp says why).
template <class T, class F>
void dispatch_lanes(int lanes, F&& f) {
  if constexpr (std::is_same_v<T, double>) {
    if (lanes != kFp64Lanes) throw UsageError("fit", "fp64 fits run with " + std::to_string(kFp64Lanes) + " lanes per fit");
    return f(std::integral_constant<int, kFp64Lanes>{});
  }
  switch (lanes) {
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 8:
      return f(std::integral_constant<int, 8>{});
    case 16:
      return f(std::integral_constant<int, 16>{});
    case 32:
      return f(std::integral_constant<int, 32>{});
    default:
      throw UsageError("fit", "lanes per fit must be 1, 2, 4, 8, 16 or 32");
  }
}

template <class M, class T, class E>
void launch_typed(const KernelArgs<T>& args, const M& model, const FitGeometry& geo, int blocks, cudaStream_t stream) {
  dispatch_lanes<T>(geo.lanes, [&]<int G>(std::integral_constant<int, G>) {
    fit_kernel<G, M, T, E><<<blocks, geo.threads, geo.shared_bytes, stream>>>(args, model);
  });
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

template <class M, class T, class E>
void preload_typed() {
  for (const int lanes : {1, 2, 4, 8, 16, 32}) {
    if (std::is_same_v<T, double> && lanes != kFp64Lanes) continue;
    dispatch_lanes<T>(lanes, []<int G>(std::integral_constant<int, G>) {
      cudaFuncAttributes a{};
      NANOSCOPY_CUDA_CHECK(cudaFuncGetAttributes(&a, fit_kernel<G, M, T, E>));
    });
  }
}

template <class M, class T>
void launch_model(const KernelArgs<T>& args, const M& model, Estimator estimator, bool pixels_u16,
                  const FitGeometry& geo, int blocks, cudaStream_t stream) {
  KernelArgs<T> typed = args;
  typed.pixels_u16 = pixels_u16;
  dispatch_estimator<Lsq>(estimator, [&]<class E>(E) { launch_typed<M, T, E>(typed, model, geo, blocks, stream); });
}

template <class M, class T>
void preload_model(Estimator estimator) {
  dispatch_estimator<Lsq>(estimator, []<class E>(E) { preload_typed<M, T, E>(); });
}

}  // namespace nanoscopy::cuda::fit_launch
