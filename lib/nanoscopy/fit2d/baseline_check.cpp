#include "nanoscopy/fit2d/baseline_check.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/loc/detect/detect.hpp"

namespace nanoscopy {
namespace {

double quantile(std::vector<float>& v, double q) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

std::string adu(double v) {
  std::ostringstream s;
  s.precision(3);
  s << v;
  return s.str();
}

}  // namespace

BaselineEvidence baseline_evidence(const float* values, std::int64_t frames, std::int64_t pixels, double baseline) {
  BaselineEvidence e;
  std::vector<float> finite, diffs;
  for (std::int64_t t = 0; t < frames; ++t)
    for (std::int64_t i = 0; i < pixels; ++i) {
      const float v = values[t * pixels + i];
      if (!std::isfinite(v)) continue;
      finite.push_back(v);
      if (t == 0) continue;
      const float before = values[(t - 1) * pixels + i];
      if (std::isfinite(before)) diffs.push_back(v - before);
    }
  if (finite.empty()) return e;
  e.low = quantile(finite, 0.01);
  // The differences of a pixel between frames cancel the sample's structure; their spread is √2 × the noise,
  // dominated by the background pixels (the median), so that the bright spots do not inflate it.
  if (!diffs.empty())
    e.noise = robust_noise_sd(diffs.data(), static_cast<std::int64_t>(diffs.size())) / std::sqrt(2.0);
  e.margin = kBaselineMarginSds * std::sqrt(e.noise * e.noise + 1.0);
  e.below = e.low < baseline - e.margin;
  return e;
}

void check_baseline(Fit2dSetup& setup, const Params& p, StackReader& reader) {
  FitSettings& fit = setup.settings.fit;
  if (fit.estimator == Estimator::lsq || setup.settings.camera_maps) return;
  const StackInfo& info = reader.info();
  const std::int64_t frames = std::min<std::int64_t>(info.frames, 10);
  const std::int64_t pixels = info.width * info.height;
  if (frames <= 0 || pixels <= 0) return;
  std::vector<float> values(static_cast<std::size_t>(frames * pixels));
  reader.read_float(0, frames, values.data());
  const double baseline = setup.settings.camera.baseline;
  const BaselineEvidence e = baseline_evidence(values.data(), frames, pixels, baseline);
  if (!e.below) return;
  const bool from_movie =
      std::find(setup.camera_from_movie.begin(), setup.camera_from_movie.end(), "Baseline") != setup.camera_from_movie.end();
  const std::string source = from_movie ? "the movie's metadata" : p.source("Camera/Baseline").named("the default");
  const std::string evidence = "the baseline " + adu(baseline) + " ADU (" + source + ") lies above the movie's darkest "
                               "pixels (1st percentile " + adu(e.low) + " ADU in its first " + std::to_string(frames) +
                               " frames, noise " + adu(e.noise) + " ADU)";
  if (setup.estimator_reason.empty())  // the user's wlsq or mle: their photons would be garbage
    throw UsageError(info.path, evidence + ": give the camera's offset with --baseline, or --estimator lsq");
  std::cerr << "fit2d: warning: " << info.path << ": " << evidence
            << ": fitting with lsq instead of mle; give the camera's offset with --baseline\n";
  fit.estimator = Estimator::lsq;
  setup.estimator_reason = "auto: the baseline lies above the movie's pixels";
}

}  // namespace nanoscopy
