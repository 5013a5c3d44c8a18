// fit2d calibrate: an astigmatic 3D calibration from a bead z-stack. Each frame's
// beads are detected, cut and fitted with the elliptical model (through the
// FitEngine: CPU or --device); σx, σy per frame are the medians over its beads;
// z = (frame − centre frame)·z_step, or z0 + frame·z_step; fit_astigmatic_calibration
// fits both defocus curves. Writes the calibration JSON and a PNG of σx, σy vs z
// (points and the fitted curves), each atomically.
// --model spline: the beads' own PSF as a tricubic spline (fit2d/calibrate_spline.hpp),
// written as our psf.h5 or SMAP's psf.mat (by the name), with a PNG of its xz/yz sections
// and each bead's residual; the run's files appear together.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "nanoscopy/cli/tool_app.hpp"

namespace nanoscopy {

struct Fit2dCalibrateOptions {
  std::string input;
  std::string output;          // the calibration: JSON (astigmatic); psf.h5 (ours) or psf.mat (SMAP's) (spline)
  std::string plot;            // "" = OUTPUT_STEM.png beside the calibration
  double z_step = 0;           // nm between frames
  std::optional<double> z0;    // nm of frame 0; unset: the centre frame is z = 0
  int box = 0;                 // ROI edge (defocused beads are wide); 0: 15 (astigmatic), 21 (spline)
  bool higher_order = true;    // fit the A, B terms of the defocus curves
  std::string model = "auto";  // "spline" (the bead PSF itself, fit2d/calibrate_spline.hpp), "astigmatic";
                               // auto: spline for a .h5/.hdf5/.mat output, astigmatic otherwise (a JSON)
  double smooth_z_nm = 200;    // spline: cut-off period of the smoothing along z, nm
  double smooth_xy_px = 0;     // spline: the same in x, y, px (0: none)
  int oversample = 0;          // spline: voxels per camera pixel in x, y; 0: 2 for psf.h5, 1 for SMAP's .mat
};

// Prints the fit RMS per axis, the z range and the files to `out`. InputError
// (one line) for a stack of fewer than 6 frames, or when no bead is found. UsageError naming
// --z-step for a step that is not finite and positive, or whose stack would span more than
// 100 µm (1e300 would write a calibration of ±3e301 nm); naming --z0 beyond ±100 µm.
void run_fit2d_calibrate(const Fit2dCalibrateOptions& options, ToolContext& ctx, std::ostream& out);

}  // namespace nanoscopy
