// fit2d undrift: the drift of a localization file (ours, Picasso's or
// ThunderSTORM's) by redundant cross-correlation of time segments (RCC, as
// Picasso's undrift), by its fiducial markers (smoothed), or both
// (loc/undrift/); writes the corrected localizations, OUT_drift.txt (Picasso),
// OUT_drift.csv (nm) and OUT_drift.png, all together or none.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "nanoscopy/cli/tool_app.hpp"

namespace nanoscopy {

struct Fit2dUndriftOptions {
  std::string input;
  std::string output;
  std::string format;
  double pixel_size_nm = 0;      // a ThunderSTORM CSV without its .yaml
  std::string method = "rcc";    // rcc, fiducial or combined
  std::int64_t segment = 1000;   // frames per RCC segment (Picasso's default)
  double grid_pixel_nm = 0;      // RCC grid pixel; 0 = a fifth of the camera pixel
  std::int64_t max_grid = 1024;  // largest grid side
  double max_drift_nm = 3000;    // largest drift between two segments
  double max_error_nm = 0;       // RCC pair residual limit; 0 = automatic
  std::int64_t smooth = 100;     // frames of the markers' smoothing window
};

// UsageError for bad options or too few frames for --segment; InputError for
// an unreadable, empty or one-localization input, or no markers (fiducial).
void run_fit2d_undrift(const Fit2dUndriftOptions& options, ToolContext& ctx, std::ostream& out);

}  // namespace nanoscopy
