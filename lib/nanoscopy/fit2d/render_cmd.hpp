// fit2d render: the super-resolution picture of a localization file (ours,
// Picasso's or ThunderSTORM's; loc/render.hpp) as a float32 TIFF with the
// rendered pixel size in its ImageJ metadata, and a PNG preview with a scale bar.
#pragma once

#include <iosfwd>
#include <string>

#include "nanoscopy/cli/tool_app.hpp"

namespace nanoscopy {

struct Fit2dRenderOptions {
  std::string input;
  std::string output;          // .tif (or .h5)
  std::string png;             // "" = OUTPUT's stem + .png
  double pixel_nm = 10;        // rendered pixel
  std::string mode = "gaussian";
  double pixel_size_nm = 0;    // a ThunderSTORM CSV without its .yaml
};

void run_fit2d_render(const Fit2dRenderOptions& options, ToolContext& ctx, std::ostream& out);

}  // namespace nanoscopy
