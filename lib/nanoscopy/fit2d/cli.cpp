#include "nanoscopy/fit2d/cli.hpp"

#include <chrono>

#include "nanoscopy/cluster/frame_job.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/core/sibling_path.hpp"
#include "nanoscopy/fit2d/baseline_check.hpp"
#include "nanoscopy/fit2d/localize_job.hpp"
#include "nanoscopy/fit2d/output.hpp"
#include "nanoscopy/fit2d/postprocess.hpp"
#include "nanoscopy/fit2d/roi_mode.hpp"
#include "nanoscopy/fit2d/settings.hpp"
#include "nanoscopy/io/stack_reader.hpp"

namespace nanoscopy {

void run_fit2d_cli(const Fit2dOptions& options, ToolContext& ctx, std::ostream& out) {
  const auto start = std::chrono::steady_clock::now();
  if (options.input.empty()) throw UsageError("command line", "no input stack given (see fit2d --help)");
  auto reader = open_stack(options.input);
  const StackInfo& info = reader->info();
  const auto range = ctx.frames.resolve(info.frames, info.path);
  Fit2dSetup setup = fit2d_setup(ctx.params, info, options.regions_file, ctx.quiet);
  const Fit2dPostprocess post = fit2d_postprocess(ctx.params);
  if (post.any() && !options.roi_file.empty())
    throw UsageError("--roi", "follows fixed markers and writes no localizations to undrift, link or render");
  const FrameJob job = make_frame_job(range, options.partial, ctx.device);
  // Every file this run writes, checked against every file it reads before any work (run_files.hpp).
  if (!options.roi_file.empty())
    plan_output(roi_mode_output(options, info), "the marker drift (--roi)");
  else if (job.part())
    plan_output(options.partial, "the part file (--partial)");
  else
    plan_fit2d_outputs(options.output.empty() ? sibling_path(info.path, "_locs.hdf5") : options.output,
                       output_format(ctx.params), options.track, post);
  check_run_plan();
  // Before any fitting: wlsq and mle on pixels far below the baseline would return plausible garbage.
  check_baseline(setup, ctx.params, *reader);
  if (!options.roi_file.empty()) return run_roi_mode(options, ctx, *reader, range, setup.settings, out);

  if (job.part() && options.track)
    throw UsageError("--partial", "markers are tracked over the whole stack: give --track to fit2d merge");
  if (job.part() && post.any())
    throw UsageError("--partial", "a part holds some of the frames: give --undrift, --link or --render to fit2d merge");
  // Before hours of fitting, not after: every step's parameters, the RCC segments, the pixel size.
  if (post.any()) {
    bool pixel_size_known = ctx.params.source("Camera/Pixelsize").file != "default";
    for (const auto& key : setup.camera_from_movie) pixel_size_known |= key == "Pixelsize";
    check_fit2d_postprocess(post, ctx.params, range.count(), info.width, info.height, setup.settings.camera.pixel_size_nm,
                            pixel_size_known);
  }
  Fit2dLocalizeJob localize(options, ctx, job, *reader, setup, start, out);
  localize.open_output();
  run_frame_job(job, localize.hooks());
}

}  // namespace nanoscopy
