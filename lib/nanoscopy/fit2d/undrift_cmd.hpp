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
#include "nanoscopy/loc/track/track.hpp"
#include "nanoscopy/loc/undrift/rcc.hpp"
#include "nanoscopy/params/params.hpp"

namespace nanoscopy {

struct Fit2dUndriftOptions {
  std::string input;
  std::string output;
  std::string format;
  double pixel_size_nm = 0;  // a ThunderSTORM CSV without its .yaml
};

// The Undrift section of fit2d's parameters (set by fit2d undrift --method, --segment, ... or by fit2d
// --undrift-method, --undrift-segment, ..., or a parameter file), with Tracking for the markers.
struct UndriftStepSettings {
  std::string method = "rcc";  // rcc, fiducial or combined
  std::int64_t segment = 0;    // frames per RCC segment; 0: auto (loc/undrift/segment_choice.hpp)
  double grid_pixel_nm = 0;    // 0: a fifth of the camera pixel
  std::int64_t max_grid = 1024;
  double max_drift_nm = 3000;
  double max_error_nm = 0;     // 0: automatic
  std::int64_t smooth = 100;
  TrackSettings track;         // method fiducial or combined
  RccOptions rcc_options;      // how pixel, max grid and max drift were given (for errors)
  bool rcc() const { return method != "fiducial"; }
  bool markers() const { return method != "rcc"; }
};

// UsageError naming the parameter's source for a value out of place (a segment neither auto nor a whole
// number ≥ 1).
UndriftStepSettings undrift_step_settings(const Params& p);

// `settings` with the auto segment made a number for `localizations` in `frames` frames; `why` gets the
// choice's line (empty for a segment given as a number).
UndriftStepSettings resolve_undrift_segment(UndriftStepSettings settings, std::int64_t frames,
                                            std::int64_t localizations, std::string& why);

// RCC's settings for localizations of `pixel_size_nm` (the nm values made px); UsageError from
// RccSettings::validate.
RccSettings rcc_step_settings(const UndriftStepSettings& settings, double pixel_size_nm, bool quiet);

// UsageError naming `where` when `frames` cannot be cut into two RCC segments (rcc, combined; with the
// auto segment, two of kAutoMinFrames); fit2d checks this before it localizes, not after.
void check_undrift_frames(const UndriftStepSettings& settings, std::int64_t frames, const std::string& where);

// Reads `input`, undrifts it with ctx.params' Undrift section and writes OUTPUT and its drift files (all
// or none); prints the summary naming every file. UsageError for too few frames for the segment;
// InputError for an unreadable, empty or one-localization input, or no markers (fiducial).
// Declares what fit2d undrift writes to the run's plan (core/run_files.hpp): OUT, its .yaml and
// OUT_drift.txt, .csv and .png.
void plan_fit2d_undrift_outputs(const std::string& output, const std::string& format);

void run_fit2d_undrift(const Fit2dUndriftOptions& options, ToolContext& ctx, std::ostream& out);

}  // namespace nanoscopy
