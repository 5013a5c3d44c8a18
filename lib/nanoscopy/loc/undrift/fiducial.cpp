#include "nanoscopy/loc/undrift/fiducial.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/loc/undrift/drift_model.hpp"

namespace nanoscopy {
namespace {

std::vector<double> marker_weights(const DriftTrace& raw) {
  std::vector<double> w(raw.markers.size());
  for (std::size_t t = 0; t < w.size(); ++t) w[t] = static_cast<double>(raw.markers[t]);
  return w;
}

}  // namespace

FiducialDrift fiducial_drift(std::span<const Localization> locs, std::int64_t frames, const TrackSettings& track,
                             std::int64_t smooth_frames, const std::string& where) {
  if (smooth_frames < 3) throw UsageError("--smooth", "the smoothing window must be at least 3 frames");
  FiducialDrift out;
  FiducialTracker tracker(track, frames, where);
  const bool sorted = std::is_sorted(locs.begin(), locs.end(),
                                     [](const Localization& a, const Localization& b) { return a.frame < b.frame; });
  if (sorted) {
    tracker.add(locs);
  } else {
    std::vector<Localization> copy(locs.begin(), locs.end());
    std::stable_sort(copy.begin(), copy.end(),
                     [](const Localization& a, const Localization& b) { return a.frame < b.frame; });
    tracker.add(copy);
  }
  out.raw = tracker.finish();
  out.summary = tracker.summary();
  out.smooth = smooth_drift(out.raw, smooth_frames);
  return out;
}

DriftTrace smooth_drift(const DriftTrace& raw, std::int64_t smooth_frames) {
  const auto w = marker_weights(raw);
  DriftTrace out;
  out.dx = robust_smooth(raw.dx, w, smooth_frames);
  out.dy = robust_smooth(raw.dy, w, smooth_frames);
  fill_gaps(out.dx);
  fill_gaps(out.dy);
  out.markers = raw.markers;
  zero_mean(out);
  return out;
}

DriftTrace combine_drift(const DriftTrace& rcc, const DriftTrace& fiducial_raw, std::int64_t smooth_frames) {
  if (rcc.frames() != fiducial_raw.frames())
    throw UsageError("undrift", "the RCC and marker traces cover different frames");
  DriftTrace difference = fiducial_raw;
  for (std::int64_t t = 0; t < rcc.frames(); ++t) {
    const auto i = static_cast<std::size_t>(t);
    difference.dx[i] -= rcc.dx[i];
    difference.dy[i] -= rcc.dy[i];
  }
  const DriftTrace correction = smooth_drift(difference, smooth_frames);
  DriftTrace out = rcc;
  for (std::int64_t t = 0; t < rcc.frames(); ++t) {
    const auto i = static_cast<std::size_t>(t);
    out.dx[i] += correction.dx[i];
    out.dy[i] += correction.dy[i];
  }
  out.markers = fiducial_raw.markers;
  zero_mean(out);
  return out;
}

}  // namespace nanoscopy
