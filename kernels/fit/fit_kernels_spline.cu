// The spline model's fit kernel (fit/models/spline3d.hpp), float only.
//
// Launch geometry: one thread per fit, kSplineBlock threads per block, no
// shared memory. A thread runs spline_fit_one — the scan, the coarse z
// search, the whole LM loop and the CRLB — reading its ROI from global memory
// (a few hundred bytes, L1-resident while the fit runs) and, per pixel and
// evaluation, the 64 coefficients of the pixel's interval as 16 float4 loads
// through the read-only path (core/spline_psf_eval.hpp). The coefficient table
// (27×27×121 voxels: 22 MB) lives in device memory and is read L2-friendly: a
// fit touches only its ROI's footprint at its current z slice (13×13 intervals,
// 43 KB), the same intervals on every iteration until z crosses a slice, and
// fits at similar depths share slices in L2 (50 MB on the H100). The inner
// pixel loop has no data-dependent branch (the interval index is clamped, not
// tested); warps diverge only in the number of LM iterations, as the other fit
// kernels do.
#include <cuda_runtime.h>

#include "common/cuda_check.hpp"
#include "fit/fit_launch.cuh"
#include "nanoscopy/fit/models/spline3d.hpp"

namespace nanoscopy::cuda::fit_launch {
namespace {

constexpr int kSplineBlock = 128;

// A ROI in device memory converted to photons at each read.
template <typename Pixel>
struct DeviceRoi {
  const Pixel* pixels;
  const float* shifts;  // or null
  float offset, scale;
  NANOSCOPY_HD float g(int i) const { return (static_cast<float>(pixels[i]) - offset) * scale; }
  NANOSCOPY_HD float s(int i) const { return shifts ? shifts[i] : 0.0f; }
};

template <typename Pixel, class E>
__global__ void __launch_bounds__(kSplineBlock) spline_fit_kernel(KernelArgs<float> a, Spline3d model) {
  const std::int64_t fit = static_cast<std::int64_t>(blockIdx.x) * kSplineBlock + threadIdx.x;
  if (fit >= a.count) return;
  const std::int64_t n = static_cast<std::int64_t>(a.width) * a.height;
  const DeviceRoi<Pixel> roi{static_cast<const Pixel*>(a.pixels) + fit * n,
                             a.variance_shift ? a.variance_shift + fit * n : nullptr, a.photon_offset,
                             a.photons_per_value};
  SpotGuess guess;
  if (a.initial) guess = a.initial[fit];
  a.out[fit] = spline_fit_one<E, float>(model, roi, a.width, a.height, a.initial ? &guess : nullptr, a.limits,
                                        a.photon_offset, a.photons_per_value);
}

}  // namespace

void launch_spline(const KernelArgs<float>& args, const Spline3d& model, Estimator estimator, bool pixels_u16,
                   cudaStream_t stream) {
  const std::int64_t blocks = (args.count + kSplineBlock - 1) / kSplineBlock;
  if (blocks > 0x7fffffff) throw UsageError("fit", "too many ROIs for one launch");
  dispatch_estimator<SplineLsq>(estimator, [&]<class E>(E) {
    if (pixels_u16)
      spline_fit_kernel<std::uint16_t, E><<<static_cast<int>(blocks), kSplineBlock, 0, stream>>>(args, model);
    else
      spline_fit_kernel<float, E><<<static_cast<int>(blocks), kSplineBlock, 0, stream>>>(args, model);
  });
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void preload_spline_kernels(Estimator estimator) {
  dispatch_estimator<SplineLsq>(estimator, []<class E>(E) {
    cudaFuncAttributes a{};
    NANOSCOPY_CUDA_CHECK(cudaFuncGetAttributes(&a, spline_fit_kernel<std::uint16_t, E>));
    NANOSCOPY_CUDA_CHECK(cudaFuncGetAttributes(&a, spline_fit_kernel<float, E>));
  });
}

}  // namespace nanoscopy::cuda::fit_launch
