// fit2d link: merges the localizations of one blink (loc/link.hpp) in a file
// (ours, Picasso's or ThunderSTORM's) and writes them with Picasso's len and n
// fields (ThunderSTORM's detections column).
#pragma once

#include <iosfwd>
#include <string>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/loc/link.hpp"
#include "nanoscopy/params/params.hpp"

namespace nanoscopy {

struct Fit2dLinkOptions {
  std::string input;
  std::string output;
  std::string format;
  double pixel_size_nm = 0;
};

// The Link section of fit2d's parameters (fit2d link --radius, --max-dark; fit2d --link-radius,
// --link-max-dark; a parameter file) for localizations of `pixel_size_nm`. UsageError naming the
// parameter's source for a radius that is none of the three forms.
LinkSettings link_step_settings(const Params& p, double pixel_size_nm);

// Reads `input`, links it with ctx.params' Link section and writes OUTPUT; prints the groups made.
// InputError for an unreadable input.
void run_fit2d_link(const Fit2dLinkOptions& options, ToolContext& ctx, std::ostream& out);

}  // namespace nanoscopy
