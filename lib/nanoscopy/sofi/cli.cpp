#include "nanoscopy/sofi/cli.hpp"

#include <algorithm>
#include <sstream>

#include "nanoscopy/cluster/frame_job.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/clip_text.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/sofi/balanced_output.hpp"
#include "nanoscopy/sofi/cumulant_job.hpp"
#include "nanoscopy/sofi/output.hpp"
#include "nanoscopy/sofi/partial.hpp"

namespace nanoscopy {
namespace {

std::vector<int> parse_int_list(const std::string& text, const std::string& option) {
  std::vector<int> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    std::size_t used = 0;
    int value = 0;
    try {
      value = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size())
      throw UsageError(option, "expected comma-separated whole numbers such as 2,3,4 (got '" + clip_text(text) + "')");
    out.push_back(value);
  }
  return out;
}

}  // namespace

SofiProblemOptions sofi_problem_options_from(const Params& p) {
  SofiProblemOptions o;
  // A bad list is named where it was given: the option, or the parameter file's line.
  o.orders = parse_int_list(p.get_string("SOFI/orders"), p.source("SOFI/orders").named("--orders"));
  const std::string lags = p.get_string("SOFI/lags");
  if (!lags.empty()) o.lags = parse_int_list(lags, p.source("SOFI/lags").named("--lags"));
  o.cross = p.get_bool("SOFI/cross");
  o.moments = p.get_bool("SOFI/moments");
  o.psf_sigma = p.get_real("SOFI/psf sigma");
  if (balanced_options_from(p).enabled) o.orders = balanced_orders(o.orders, o.cross, o.moments);
  return o;
}

void run_sofi_cli(const SofiCliOptions& options, ToolContext& ctx, std::ostream& out) {
  if (options.input.empty()) throw UsageError("command line", "no input stack given (see sofi --help)");
  const SofiProblemOptions problem_options = sofi_problem_options_from(ctx.params);
  auto reader = open_stack(options.input);
  const StackInfo info = reader->info();
  const auto range = ctx.frames.resolve(info.frames, info.path);
  const SofiProblem problem = make_sofi_problem(info.width, info.height, problem_options);
  const FrameJob job = make_frame_job(range, options.partial, ctx.device);
  SofiCumulantJob run(options, ctx, job, *reader, problem, problem_options, out);
  run_frame_job(job, run.hooks());
}

void run_sofi_merge(const SofiMergeOptions& options, ToolContext& ctx, std::ostream& out) {
  if (options.output.empty()) throw UsageError("sofi merge", "give the output image with -o OUT.tif");
  plan_output(options.output, "the SOFI image (-o)");
  check_sofi_output(options.output, true);
  const SofiPartial merged = merge_sofi_partials(options.parts, sofi_threads());
  const SofiProblem problem = make_sofi_problem(merged.width, merged.height, merged.options);
  const BalancedOptions balanced = balanced_options_from(ctx.params);
  auto two_to = [](const std::vector<int>& orders) {
    std::vector<int> all;
    for (int k = 2; k <= 4 && k <= (orders.empty() ? 0 : *std::max_element(orders.begin(), orders.end())); ++k)
      all.push_back(k);
    return all;
  };
  if (balanced.enabled && (merged.options.orders.size() < 2 || merged.options.orders != two_to(merged.options.orders)))
    throw UsageError("--balanced", "the parts hold orders " + join_ints(merged.options.orders) +
                                       ": run them with --balanced (orders 2..n) to balance the merged image");
  if (balanced.enabled) balanced_orders(merged.options.orders, merged.options.cross, merged.options.moments);
  SofiImages images = finish_images(problem, merged.acc.finished);
  apply_post_smre(ctx.params.get_string("SOFI/post smre"), problem, images, ctx.device, ctx.quiet, out);
  OutputGroup together;
  auto files = write_sofi_images(options.output, problem, images, merged.pixel_size_nm);
  const auto extra =
      write_balanced(options.output, problem, images, balanced, ctx.device, merged.pixel_size_nm, ctx.quiet, out);
  files.insert(files.end(), extra.begin(), extra.end());
  together.commit();
  if (!ctx.quiet)
    out << "sofi merge: " << options.parts.size() << " parts, " << merged.sequence.count << " frames of "
        << merged.stack_name << " in " << images.blocks << " blocks -> " << file_list(files) << "\n";
}

}  // namespace nanoscopy
