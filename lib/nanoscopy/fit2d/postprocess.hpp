// fit2d STACK -o OUT --undrift --link --render: the postprocessing subcommands
// chained behind the localization, in Picasso's naming (each step's file is
// named after the file it read, as Picasso's undrift and link name theirs):
//
//   OUT                             the fitted localizations (complete first)
//   OUT_undrift (+ OUT_undrift_drift.txt, _drift.csv, _drift.png)
//                                   --undrift: fit2d undrift OUT -o OUT_undrift
//   PREV_link                       --link: fit2d link PREV -o PREV_link
//   LAST.tif + LAST.png             --render: fit2d render LAST -o LAST.tif
//
// where OUT_undrift keeps OUT's extension and format (movie_locs.hdf5 →
// movie_locs_undrift.hdf5 → movie_locs_undrift_link.hdf5 →
// movie_locs_undrift_link.tif and .png), PREV is the previous step's file and
// LAST the last localization file. Each step is the subcommand's own run
// function on the previous step's file with the same parameters (sections
// Undrift, Link, Render and Tracking), so the chain writes exactly what the
// commands typed one after another would, and each prints its own summary
// naming its files. Each step's files appear together when the step completes
// (atomically, as the subcommand writes them); a step that fails leaves the
// earlier steps' files, each complete, and none of its own. What can be
// checked before the fit is checked before it (check_fit2d_postprocess).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/params/params.hpp"

namespace nanoscopy {

struct Fit2dPostprocess {
  bool undrift = false, link = false, render = false;
  bool any() const { return undrift || link || render; }
};

// The Postprocess section (fit2d --undrift, --link, --render or a parameter file).
Fit2dPostprocess fit2d_postprocess(const Params& p);

// The files the chain on `locs` (OUT) writes, in order (the localization files; the render's TIFF and
// PNG last); the drift files sit beside OUT_undrift.
struct PostprocessNames {
  std::string undrift, link, render_tif, render_png;
};
PostprocessNames postprocess_names(const Fit2dPostprocess& steps, const std::string& locs);

// Before any localizing: every step's parameters; --undrift's RCC segments over the `frames` to be
// localized; --render needs the camera's pixel size from the user or the movie (a picture in nm from
// the default pixel size would be wrong by their ratio), as does a link radius in nm. UsageError
// naming the option.
void check_fit2d_postprocess(const Fit2dPostprocess& steps, const Params& p, std::int64_t frames, std::int64_t width,
                             std::int64_t height, double pixel_size_nm, bool pixel_size_known);

// Declares the chain's files (each step's outputs, as the subcommands declare theirs) to the run's plan.
void plan_fit2d_postprocess(const Fit2dPostprocess& steps, const std::string& locs, const std::string& format);

// Runs the chain on `locs` (written in `format`, "" = by extension; `pixel_size_nm`: the camera's, for
// a CSV without its .yaml), each step printing its summary on `out`.
void run_fit2d_postprocess(const Fit2dPostprocess& steps, const std::string& locs, const std::string& format,
                           double pixel_size_nm, ToolContext& ctx, std::ostream& out);

}  // namespace nanoscopy
