#include "nanoscopy/fit2d/cli.hpp"

#include <chrono>

#include "nanoscopy/cluster/frame_job.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/fit2d/localize_job.hpp"
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
  const Fit2dSetup setup = fit2d_setup(ctx.params, info, options.regions_file, ctx.quiet);
  if (!options.roi_file.empty()) return run_roi_mode(options, ctx, *reader, range, setup.settings, out);

  const FrameJob job = make_frame_job(range, options.partial, ctx.device);
  if (job.part() && options.track)
    throw UsageError("--partial", "markers are tracked over the whole stack: give --track to fit2d merge");
  Fit2dLocalizeJob localize(options, ctx, job, *reader, setup, start, out);
  localize.open_output();
  run_frame_job(job, localize.hooks());
}

}  // namespace nanoscopy
