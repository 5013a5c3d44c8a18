// fit2d render: the super-resolution picture of a localization file (ours,
// Picasso's or ThunderSTORM's; loc/render.hpp) as a float32 TIFF with the
// rendered pixel size in its ImageJ metadata, and a PNG preview with a scale bar.
// The file is read in chunks of 2^20 rows and accumulated on the --device's
// render engine, so files larger than memory render (a file whose .yaml does
// not give the camera frame is read twice: first for its extent).
// --color z: the picture is RGB (the density coloured by each pixel's mean z,
// loc/render.hpp), written as three float32 pages labelled red, green, blue
// (values 0 to 1) and an RGB PNG.
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
  std::string color = "none";  // none or z
  std::string color_range;     // "LOW:HIGH" nm for --color z; "" = the 1st to 99th percentile
};

void run_fit2d_render(const Fit2dRenderOptions& options, ToolContext& ctx, std::ostream& out);

}  // namespace nanoscopy
