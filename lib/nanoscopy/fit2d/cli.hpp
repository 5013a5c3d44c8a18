// fit2d's work, behind its command line: localize a stack (optionally tracking
// fiducial markers), or follow fixed marker ROIs frame by frame (--roi).
#pragma once

#include <iosfwd>
#include <string>

#include "nanoscopy/cli/tool_app.hpp"

namespace nanoscopy {

struct Fit2dOptions {
  std::string input;
  std::string output;  // "" = <input stem>_locs.hdf5 beside the input
  bool track = false;
  std::string roi_file;
  std::string regions_file;  // localize only inside these regions
  bool stream = false;  // --roi: one line per frame on stdout as soon as it is fitted
  std::string partial;  // write a part file of --frames A:B for fit2d merge
};

// Prints the run's summary (frames, localizations, median precision, time,
// device, files) to `out`.
void run_fit2d_cli(const Fit2dOptions& options, ToolContext& ctx, std::ostream& out);

}  // namespace nanoscopy
