// An imposed stage drift for simulations (bench simulate movie --drift-linear,
// --drift-walk; bench postprocess): a steady drift of `linear_nm` per 1000
// frames in the direction `angle_deg` (from +x towards +y), plus a random walk
// of `walk_nm` per √frame on each axis (each frame's step N(0, walk²); over
// F frames it wanders walk·√F). Drift moves the sample: an emitter at x is
// seen at x + dx[t] in frame t, the sign of fit2d's drift files (which
// subtract it). dx[0] = dy[0] = 0.
#pragma once

#include <cstdint>

#include "nanoscopy/loc/track/drift.hpp"

namespace nanoscopy {

struct DriftSimSettings {
  double linear_nm = 0;    // nm per 1000 frames
  double angle_deg = 30;   // direction of the linear drift
  double walk_nm = 0;      // nm per √frame, each axis
  std::uint64_t seed = 1;
  bool any() const { return linear_nm != 0 || walk_nm != 0; }
};

// The drift per frame in camera px (markers 0): written with loc/undrift/drift_files.hpp's
// write_undrift_csv, it has the columns of fit2d undrift's drift CSV. UsageError for a negative or
// non-finite walk, or a non-finite linear drift or angle.
DriftTrace simulate_drift(const DriftSimSettings& settings, std::int64_t frames, double pixel_size_nm);

}  // namespace nanoscopy
