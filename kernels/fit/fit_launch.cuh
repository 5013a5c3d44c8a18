// The fit kernels' launch interface, shared by fit_kernels.cu (geometry, model
// dispatch) and the per-model translation units fit_kernels_<model>.cu, which
// instantiate the kernels of one model each: a fat build (every architecture
// from Turing on) compiles the fit kernels in parallel instead of in one long
// nvcc run, and adding a model adds a file.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "fit/fit_kernels.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/fit/fit_types.hpp"
#include "nanoscopy/fit/models/spline3d.hpp"
#include "nanoscopy/fit/real.hpp"

namespace nanoscopy::cuda::fit_launch {

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
  bool pixels_u16;  // pixels are uint16 (else float32): a branch of the staging copy, not a kernel of its own
  const float* variance_shift;  // per pixel, as pixels, or null (wlsq, mle)
  T photon_offset, photons_per_value;  // wlsq, mle: photons = (value − offset)·photons_per_value
  const SpotGuess* initial;
  FitResult* out;
  std::int64_t count;
  int width, height;
  int fits_per_block;
  int pixel_stride;  // floats per staged ROI
  FitLimits<T> limits;
};

// Calls f(E{}) with the estimator tag of `estimator`: LsqTag for lsq (the Gaussian kernels' closed-form
// least squares, or the spline's per-pixel SplineLsq), Wlsq and Mle otherwise.
template <class LsqTag, class F>
void dispatch_estimator(Estimator estimator, F&& f) {
  switch (estimator) {
    case Estimator::lsq:
      f(LsqTag{});
      return;
    case Estimator::wlsq:
      f(Wlsq{});
      return;
    case Estimator::mle:
      f(Mle{});
      return;
  }
  throw UsageError("fit", "the estimator is not one the fitter knows");
}

// The kernels of model M in precision T for `estimator`, on pixels of uint16 or float32 (fit_kernels_<model>.cu).
template <class M, class T>
void launch_model(const KernelArgs<T>& args, const M& model, Estimator estimator, bool pixels_u16,
                  const FitGeometry& geo, int blocks, cudaStream_t stream);

// Loads every lane count of model M, precision T and `estimator` (preload_fit_kernels).
template <class M, class T>
void preload_model(Estimator estimator);

// The spline model's kernels (fit_kernels_spline.cu): float only, one thread per fit; `model` holds
// the device copy of the coefficients (FitLaunch::spline_coefficients).
void launch_spline(const KernelArgs<float>& args, const Spline3d& model, Estimator estimator, bool pixels_u16,
                   cudaStream_t stream);
void preload_spline_kernels(Estimator estimator);

}  // namespace nanoscopy::cuda::fit_launch
