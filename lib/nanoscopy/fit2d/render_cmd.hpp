// fit2d render: the super-resolution picture of a localization file (ours,
// Picasso's or ThunderSTORM's; loc/render.hpp) as a float32 TIFF with the
// rendered pixel size in its ImageJ metadata, and a PNG preview with a scale bar.
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
};

// The Render section of fit2d's parameters (fit2d render --pixel, --mode; fit2d --render-pixel,
// --render-mode; a parameter file): the rendered pixel and the mode (the field and the camera pixel
// are the file's).
RenderSettings render_step_settings(const Params& p);

// Reads `input`, renders it with ctx.params' Render section and writes the picture and its PNG preview
// (both or neither); prints the summary naming both.
void run_fit2d_render(const Fit2dRenderOptions& options, ToolContext& ctx, std::ostream& out);

}  // namespace nanoscopy
