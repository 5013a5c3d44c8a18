// The fit kernels' host side: launch geometry and the dispatch to the model's
// kernels, which fit_kernels_<model>.cu instantiate (fit_launch.cuh).
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "common/cuda_check.hpp"
#include "fit/fit_kernels.hpp"
#include "fit/fit_launch.cuh"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/fit/model_list.hpp"

namespace nanoscopy::cuda {
namespace {

using namespace fit_launch;

int pixel_stride(int width, int height) {
  return (width * height + 1) & ~1;
}

// The axis-term tables and the staged pixels; the per-pixel estimators also stage the variance shifts.
int shared_per_fit(int width, int height, bool fp64, Estimator estimator) {
  const int real_bytes = fp64 ? static_cast<int>(sizeof(double)) : static_cast<int>(sizeof(float));
  const int staged = estimator == Estimator::lsq ? 1 : 2;
  return 3 * real_bytes * (width + height) + staged * 4 * pixel_stride(width, height);
}

template <class T>
void launch_in(const FitLaunch& launch, const FitGeometry& geo, cudaStream_t stream) {
  KernelArgs<T> args;
  args.pixels = launch.pixels;
  args.pixels_u16 = launch.pixels_u16;
  args.variance_shift = launch.variance_shift;
  args.photon_offset = static_cast<T>(launch.settings.photon_offset);
  args.photons_per_value = static_cast<T>(launch.settings.photons_per_value);
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
  if ((launch.settings.estimator != Estimator::lsq || launch.settings.model == ShapeModel::spline) &&
      !(launch.settings.photons_per_value > 0))
    throw UsageError("fit", "photons per pixel value must be positive");
  if (launch.settings.model == ShapeModel::spline) {
    if constexpr (std::is_same_v<T, double>) {
      throw UsageError("fit", "the spline fit runs in float on the GPU (--precision auto or float)");
    } else {
      if (!launch.settings.spline || !launch.spline_coefficients)
        throw UsageError("fit", "the spline model needs a spline PSF (a calibration)");
      launch_spline(args, make_spline_model(*launch.settings.spline, launch.settings.z_factor, launch.spline_coefficients),
                    launch.settings.estimator, launch.pixels_u16, stream);
    }
    return;
  }
  const bool known = dispatch_model(launch.settings.model, [&]<class M>(M) {
    launch_model<M, T>(args, make_model<M>(launch.settings), launch.settings.estimator, launch.pixels_u16, geo,
                       static_cast<int>(blocks), stream);
  });
  if (!known) throw UsageError("fit", "the spot model is not one the fitter knows");
}

}  // namespace

bool fit_fp64(FitPrecision precision) {
  return precision == FitPrecision::fp64;
}

FitGeometry fit_geometry(int width, int height, std::int64_t count, int lanes, int multiprocessors,
                         FitPrecision precision, Estimator estimator) {
  const int n = width * height;
  FitGeometry geo;
  if (lanes <= 0) {
    // lsq: about 48 pixels per lane, at least 4 lanes; wlsq and mle: about 24. Measured (2026-11-25, 1e6
    // sampled fits, float, data on the device, fits/s): lsq 9×9 with 1/2/4/8/16 lanes 1.42/2.09/2.25/1.91/
    // 1.47e8, 13×13 with 4/16 lanes 1.39/1.15e8, 7×7 with 2/4 lanes 2.44/2.64e8 (H100) — its group
    // reductions (24 sums, log₂G shuffles each) outweigh the pixels a lane walks; mle with 2/4/8/16 lanes
    // 7×7 8.3/9.8/9.4/6.9e7, 9×9 7.3/8.7/8.4/6.6e7, 13×13 3.7/5.3/5.9/4.9e7 (H200) — 21 sums a pixel.
    const int pixels_per_lane = estimator == Estimator::lsq ? 48 : 24;
    lanes = estimator == Estimator::lsq ? 4 : 1;
    while (lanes < 32 && lanes * pixels_per_lane < n) lanes *= 2;
    const std::int64_t wanted_threads = static_cast<std::int64_t>(std::max(multiprocessors, 1)) * 1024;
    while (lanes < 32 && count * lanes < wanted_threads) lanes *= 2;
  }
  if (fit_fp64(precision)) lanes = kFp64Lanes;  // the one count its kernels are built for
  geo.lanes = lanes;
  const int per_fit = shared_per_fit(width, height, fit_fp64(precision), estimator);
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

void preload_spline_fit_kernels(Estimator estimator) {
  preload_spline_kernels(estimator);
}

void preload_fit_kernels(FitPrecision precision, Estimator estimator) {
  for_each_model([precision, estimator]<class M>(M) {
    if (fit_fp64(precision))
      preload_model<M, double>(estimator);
    else
      preload_model<M, float>(estimator);
  });
}

}  // namespace nanoscopy::cuda
