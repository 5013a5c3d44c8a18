// Drift from fiducial markers for fit2d undrift --method fiducial|combined.
//
// fiducial: the markers are found and their drift solved by the tracking code
// of fit2d --track (track/track.hpp, track/drift.hpp), which gives a drift per
// frame whose noise is a marker's localization precision (divided by √markers)
// in every frame; that trace is smoothed by the robust local regression of
// drift_model.hpp over `smooth_frames`, each frame weighted by its markers.
//
// combined: RCC gives the drift of the whole sample (every molecule takes part,
// nothing depends on a few beads staying put), but only at the time resolution
// of its segments; the markers see every frame but are few and noisy. So the
// combination is the RCC trace plus the smoothed difference (markers − RCC):
// the difference holds the drift faster than the segments resolve plus the
// markers' own constant offset, and its smoothing window can be much shorter
// than a segment. Where no marker is seen the difference is interpolated
// (held beyond the first and last frame with one), so the result falls back to
// RCC's slow drift plus the nearest known correction. A weighted mean by
// uncertainties would need RCC's per-frame error, which its segments do not
// give between their centres; the difference form needs none.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "nanoscopy/loc/localization.hpp"
#include "nanoscopy/loc/track/drift.hpp"
#include "nanoscopy/loc/track/track.hpp"

namespace nanoscopy {

struct FiducialDrift {
  DriftTrace raw;     // per frame, as fit2d --track writes it (markers per frame)
  DriftTrace smooth;  // smoothed (markers copied from raw), zero mean
  TrackSummary summary;
};

// Tracks the markers in `locs` (any order; frames 0 … frames−1) and smooths
// their drift. InputError naming `where` when no track qualifies as a marker.
FiducialDrift fiducial_drift(std::span<const Localization> locs, std::int64_t frames, const TrackSettings& track,
                             std::int64_t smooth_frames, const std::string& where);

// The raw trace smoothed (frames weighted by their markers), gaps filled, zero mean.
DriftTrace smooth_drift(const DriftTrace& raw, std::int64_t smooth_frames);

// RCC plus the smoothed difference of the markers' raw trace from it (above), zero mean; markers from `fiducial_raw`.
DriftTrace combine_drift(const DriftTrace& rcc, const DriftTrace& fiducial_raw, std::int64_t smooth_frames);

}  // namespace nanoscopy
