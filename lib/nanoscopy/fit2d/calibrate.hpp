// fit2d calibrate: an astigmatic 3D calibration from a bead z-stack. Each frame's
// beads are detected, cut and fitted with the elliptical model (through the
// FitEngine: CPU or --device); σx, σy per frame are the medians over its beads;
// z = (frame − centre frame)·z_step, or z0 + frame·z_step; fit_astigmatic_calibration
// fits both defocus curves. Writes the calibration JSON and a PNG of σx, σy vs z
// (points and the fitted curves), each atomically.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "nanoscopy/cli/tool_app.hpp"

namespace nanoscopy {

struct Fit2dCalibrateOptions {
  std::string input;
  std::string output;          // the calibration JSON
  std::string plot;            // "" = OUTPUT_STEM.png beside the JSON
  double z_step = 0;           // nm between frames
  std::optional<double> z0;    // nm of frame 0; unset: the centre frame is z = 0
  int box = 15;                // ROI edge (defocused beads are wide)
  bool higher_order = true;    // fit the A, B terms of the defocus curves
};

// Prints the fit RMS per axis, the z range and the files to `out`. InputError
// (one line) for a stack of fewer than 6 frames, or when no bead is found. UsageError naming
// --z-step for a step that is not finite and positive, or whose stack would span more than
// 100 µm (1e300 would write a calibration of ±3e301 nm); naming --z0 beyond ±100 µm.
void run_fit2d_calibrate(const Fit2dCalibrateOptions& options, ToolContext& ctx, std::ostream& out);

}  // namespace nanoscopy
