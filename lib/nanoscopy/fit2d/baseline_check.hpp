// The camera baseline against the movie's own pixels, before wlsq and mle fit photons as
// (ADU − Baseline)·Sensitivity/Gain: a movie recorded with offset 0 under the default baseline
// of 100 gives every pixel negative photons, and the fit returns numbers (photons, precisions)
// that look plausible but are garbage. The darkest pixels of a correct movie lie at the baseline
// minus a few read-noise sds, never far below it.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "nanoscopy/fit2d/settings.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/params/params.hpp"

namespace nanoscopy {

// What the first frames say of the baseline.
struct BaselineEvidence {
  double low = 0;     // ADU: the 1st percentile of the finite pixels
  double noise = 0;   // ADU: a pixel's noise sd, robust_noise_sd (1.4826·MAD) of frame-to-frame differences / √2
  double margin = 0;  // ADU: how far below the baseline `low` may lie by chance
  bool below = false; // low < baseline − margin
};

// How many sds below the baseline the 1st percentile may lie (pure read noise puts it at 2.3).
inline constexpr double kBaselineMarginSds = 6.0;

// The evidence of `frames` frames of `pixels` values each (row-major, frame after frame) against
// `baseline` (ADU). The noise variance gets 1 ADU² added, so noise-free frames are not refused for
// a fraction of an ADU.
BaselineEvidence baseline_evidence(const float* values, std::int64_t frames, std::int64_t pixels, double baseline);

// For wlsq and mle without camera maps (maps carry their own offsets): reads the first frames of
// the stack (at most 10). When they lie below the baseline: a chosen estimator is refused
// (UsageError naming the movie and --baseline); auto's mle warns on stderr and falls back to lsq
// (setup.settings.fit.estimator and setup.estimator_reason).
void check_baseline(Fit2dSetup& setup, const Params& p, StackReader& reader);

}  // namespace nanoscopy
