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
#include "nanoscopy/loc/render.hpp"
#include "nanoscopy/params/params.hpp"

namespace nanoscopy {

struct Fit2dRenderOptions {
  std::string input;
  std::string output;          // .tif (or .h5)
  std::string png;             // "" = OUTPUT's stem + .png
  double pixel_size_nm = 0;    // a ThunderSTORM CSV without its .yaml
  std::string color = "none";  // none or z
  std::string color_range{};   // "LOW:HIGH" nm for --color z; "" = the 1st to 99th percentile
};

// The Render section of fit2d's parameters (fit2d render --pixel, --mode; fit2d --render-pixel,
// --render-mode; a parameter file): the rendered pixel and the mode (the field and the camera pixel
// are the file's).
RenderSettings render_step_settings(const Params& p);

// Reads `input`, renders it with ctx.params' Render section and writes the picture and its PNG preview
// (both or neither); prints the summary naming both.
// The preview's name: `png`, or the picture's with .png.
std::string render_png_path(const std::string& output, const std::string& png);

void run_fit2d_render(const Fit2dRenderOptions& options, ToolContext& ctx, std::ostream& out);

}  // namespace nanoscopy
