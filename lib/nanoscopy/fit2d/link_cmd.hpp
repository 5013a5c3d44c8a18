// fit2d link: merges the localizations of one blink (loc/link.hpp) in a file
// (ours, Picasso's or ThunderSTORM's) and writes them with Picasso's len and n
// fields (ThunderSTORM's detections column).
#pragma once

#include <iosfwd>
#include <string>

#include "nanoscopy/cli/tool_app.hpp"

namespace nanoscopy {

struct Fit2dLinkOptions {
  std::string input;
  std::string output;
  std::string radius = "5x";  // "30nm", "0.3px", or "5x" (times the precision; see LinkSettings)
  int max_dark = 1;
  std::string format;
  double pixel_size_nm = 0;
};

// Prints the groups made. UsageError for a radius that is none of the three
// forms; InputError for an unreadable input.
void run_fit2d_link(const Fit2dLinkOptions& options, ToolContext& ctx, std::ostream& out);

}  // namespace nanoscopy
