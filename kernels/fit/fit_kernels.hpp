// Launchers of the spot-fit kernels (fit_kernels.cu), for engine_cuda.cpp.
//
// Launch geometry: a group of `lanes` consecutive threads (1–32, a power of
// two, inside one warp) fits one ROI; a block holds fits_per_block groups. The
// block stages its ROIs' pixels (uint16 or float32, coalesced) as float in
// shared memory, each group computes the paper's initial estimate and runs the
// whole Levenberg–Marquardt loop of fit_detail::lm_fit without leaving the
// kernel: lanes split the pixels and the width + height axis terms (kept in
// shared memory), sums meet by warp shuffles over the group's mask, every lane
// holds the same parameters and λ, and lane 0 writes the FitResult.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "nanoscopy/fit/fit_types.hpp"

namespace nanoscopy::cuda {

struct FitGeometry {
  int lanes = 0;  // threads per fit
  int fits_per_block = 0;
  int threads = 0;       // per block = lanes · fits_per_block
  int shared_bytes = 0;  // dynamic shared memory per block
};

// Whether the kernels compute in double: FitPrecision::fp64; automatic and fp32 compute in float.
bool fit_fp64(FitPrecision precision);

// The fp64 kernels exist for one lane count only. fp64 is the reference precision (a check on float, at 1/2 to
// 1/64 of float's rate), not the fast path, and its kernels cost ptxas three times the float ones: in the fat
// build each further lane count cost ~9 s per model and architecture (astigmatic, sm_80: float 19.5 s, fp64
// 56.3 s for six lane counts). 4 lanes is within 10 % of the best float count for every estimator measured.
constexpr int kFp64Lanes = 4;

// lanes = 0 picks from the ROI size and the batch size (`count`, `multiprocessors`); the shared
// memory per fit depends on the precision (axis-term tables of float or double).
// The estimator: wlsq and mle also stage each ROI's variance shifts.
FitGeometry fit_geometry(int width, int height, std::int64_t count, int lanes, int multiprocessors,
                         FitPrecision precision, Estimator estimator = Estimator::lsq);

struct FitLaunch {
  const void* pixels = nullptr;  // device, count·width·height values
  const float* variance_shift = nullptr;  // device, laid out as pixels, or null (wlsq, mle; RoiBatch)
  bool pixels_u16 = true;        // else float32
  std::int64_t count = 0;
  int width = 0, height = 0;
  const SpotGuess* initial = nullptr;  // device, count guesses, or null
  FitResult* out = nullptr;            // device, count results
  FitSettings settings;
  const float* spline_coefficients = nullptr;  // device copy of settings.spline's table (ShapeModel::spline)
};

// Asynchronous on `stream`; count 0 launches nothing.
void launch_fit(const FitLaunch& launch, const FitGeometry& geometry, cudaStream_t stream);

// Loads every fit kernel instance of `precision` and `estimator` (its lanes,
// pixel types and models) on the current device now. With CUDA's lazy
// loading a kernel is otherwise loaded at its first launch; a later piece of a
// split chunk can pick another lane count, whose first launch on a nearly full
// device would then fail.
void preload_fit_kernels(FitPrecision precision, Estimator estimator = Estimator::lsq);

// The spline model's kernels of `estimator` (fit_kernels_spline.cu), loaded now as preload_fit_kernels does.
void preload_spline_fit_kernels(Estimator estimator);

}  // namespace nanoscopy::cuda
