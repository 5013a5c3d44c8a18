// Timing of the CUDA fitter with the data already on the device (plain C++
// header): the batch is uploaded once, then only the fit kernel is timed with
// device events, after a warm-up. For bench.
#pragma once

#include <span>
#include <vector>

#include "nanoscopy/fit/engine.hpp"

namespace nanoscopy::cuda {

// Median seconds per call over `repeats` calls of FitPlan::fit_device on
// `device`; the results of the last call are copied to `out` (batch.count).
double time_device_resident_fit(int device, const FitSettings& settings, const RoiBatch& batch, int repeats,
                                std::span<FitResult> out);

}  // namespace nanoscopy::cuda
