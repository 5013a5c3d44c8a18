// fit2d --roi: fixed marker ROIs fitted in every frame, warm-started, one drift
// row per frame (and, with --stream, one line on stdout as soon as it is known),
// for a stage controller that corrects drift while the movie is recorded.
#pragma once

#include <iosfwd>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/fit2d/cli.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/loc/pipeline.hpp"

namespace nanoscopy {

// Follows options.roi_file's markers through `range` with the camera and fit of
// `settings`; writes the drift CSV (default STACK_roi_drift.csv) and the summary
// (to stderr with --stream: stdout then carries only the per-frame lines).
// UsageError with --partial or under mpirun: the markers are followed in one process.
// The drift CSV --roi writes: -o, or STACK_roi_drift.csv.
std::string roi_mode_output(const Fit2dOptions& options, const StackInfo& info);

void run_roi_mode(const Fit2dOptions& options, ToolContext& ctx, StackReader& reader, FrameRange::Resolved range,
                  const PipelineSettings& settings, std::ostream& out);

}  // namespace nanoscopy
