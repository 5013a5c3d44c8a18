#include "nanoscopy/smre/cli.hpp"

#include <iomanip>
#include <tuple>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/frame_size.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/params/tool_schemas.hpp"
#include "nanoscopy/smre/runner.hpp"
#include "nanoscopy/smre/restore_job.hpp"

namespace nanoscopy {

SmreSettings smre_settings_from(const Params& p) {
  SmreSettings s;
  s.psf_sigma = p.get_real("input data/sigma");
  s.noise_sigma = p.get_real("input data/gaussian noise");
  s.lambda = p.get_real("input data/regularization");
  s.alpha1 = p.get_real("input data/alpha1");
  s.alpha2 = p.get_real("input data/alpha2");
  s.rho1 = p.get_real("input data/rho1");
  s.rho2 = p.get_real("input data/rho2");
  s.projection = p.get_bool("program flow control/approx") ? Projection::icd : Projection::exact;
  s.mr_depth = static_cast<int>(p.get_int("program flow control/MRdepth"));
  s.max_iterations = p.get_int("program flow control/maximum iterations");
  s.report_interval = p.get_int("program flow control/report interval");
  s.tolerance = p.get_real("program flow control/tolerance");
  s.regularizer = parse_regularizer(p.get_string("method/regularizer"));
  s.coverage = p.get_real("method/coverage");
  s.weights = parse_weight_method(p.get_string("method/weights"));
  s.weight_samples = static_cast<int>(p.get_int("method/weight samples"));
  s.icd_sweeps = static_cast<int>(p.get_int("method/icd sweeps"));
  s.dykstra_tolerance = p.get_real("method/dykstra tolerance");
  s.dykstra_max_sweeps = static_cast<int>(p.get_int("method/dykstra max sweeps"));
  s.dykstra_warm_start = p.get_bool("method/dykstra warm start");
  s.gamma = p.get_real("method/gamma");
  s.tv_iterations = static_cast<int>(p.get_int("method/tv iterations"));
  return s;
}

SmreEngineFactory smre_engine_factory(const Device& device) {
  return [device](const SmreProblem& problem, std::int64_t max_batch) {
    return make_smre_engine(device, problem, max_batch);
  };
}

SmreRunOptions smre_options_from_file(const std::string& path, double psf_scale, bool quiet) {
  static const Schema schema = smre_schema();
  const Params p = schema.resolve(load_param_file(path));
  SmreRunOptions ro;
  ro.settings = smre_settings_from(p);
  ro.settings.psf_sigma *= psf_scale;
  ro.anscombe = p.get_bool("method/anscombe");
  ro.quiet = quiet;
  return ro;
}

namespace {

void print_weights(std::ostream& out, const SmreProblem& problem) {
  const Weights& w = problem.weights;
  out << "# SMRE weights c_s for " << problem.family.describe() << "\n# on a " << problem.width << "x"
      << problem.height << " frame, coverage alpha = " << w.coverage << ", " << to_string(w.method);
  if (w.method == WeightMethod::monte_carlo)
    out << " (" << w.samples << " noise images" << (w.from_cache ? ", from the cache" : "") << ")";
  out << "\n# a set s of |s| pixels is feasible when c_s * sum eps^2 <= sigma^2\nedge,pixels,quantile,c_s\n";
  out << std::setprecision(6);
  for (std::size_t k = 0; k < w.edges.size(); ++k)
    out << w.edges[k] << "," << w.edges[k] * w.edges[k] << "," << w.q[k] << "," << w.c[k] << "\n";
}

// --print-weights without an image: the weights of a --size frame (default 1024x1024).
void print_weights_for_size(std::ostream& out, const std::string& size_text, const SmreSettings& settings, bool quiet) {
  std::int64_t w = 1024, h = 1024;
  if (!size_text.empty()) {
    const auto size = parse_frame_size(size_text);
    if (!size) throw UsageError("--size", "expected WIDTHxHEIGHT, e.g. 1024x1024 (got '" + size_text + "')");
    std::tie(w, h) = *size;
  }
  WeightOptions wo;
  wo.method = settings.weights;
  wo.coverage = settings.coverage;
  wo.samples = settings.weight_samples;
  wo.quiet = quiet;
  print_weights(out, make_smre_problem(w, h, settings, wo));
}

// The runner's options: the parameters, with the PSF given as --fwhm instead of sigma.
SmreRunOptions run_options(const Params& p, double fwhm, bool quiet) {
  SmreRunOptions ro;
  ro.settings = smre_settings_from(p);
  if (!(fwhm >= 0))  // not given: 0
    throw UsageError("--fwhm", "the PSF's full width at half maximum must be > 0 px, not " + std::to_string(fwhm));
  if (fwhm > 0) {
    if (p.source("input data/sigma").file != "default")
      throw UsageError("--fwhm", "give the PSF width once: --psf (sigma) or --fwhm, not both");
    ro.settings.psf_sigma = fwhm_to_sigma(fwhm);
  }
  ro.anscombe = p.get_bool("method/anscombe");
  ro.quiet = quiet;
  return ro;
}

}  // namespace

void run_smre_cli(const SmreOptions& options, ToolContext& ctx, std::ostream& out) {
  SmreRunOptions ro = run_options(ctx.params, options.fwhm, ctx.quiet);
  const std::string input = options.input.empty() ? ctx.params.get_string("input data/image") : options.input;
  if (options.print_weights && input.empty()) return print_weights_for_size(out, options.size, ro.settings, ctx.quiet);
  if (input.empty()) throw UsageError("command line", "no input image given (see smre --help)");

  auto reader = open_stack(input);
  const StackInfo info = reader->info();
  const auto range = ctx.frames.resolve(info.frames, info.path);
  if (range.count() < 1) throw InputError(info.path, "no frames to restore in the range " + ctx.frames.to_string());
  // Under mpirun this process restores its share of the frames; rank 0 writes them all.
  const FrameJob job = make_frame_job(range, options.partial, ctx.device);
  job.mine();  // more ranks than frames: said before the runner's own checks
  ro.source = info.path;
  ro.quiet = ctx.quiet || !job.root();
  SmreRunner runner(info.width, info.height, ro, smre_engine_factory(job.device));
  if (options.print_weights) return print_weights(out, runner.problem());

  SmreRestoreJob restore(options, ctx, job, *reader, runner, ro, out);
  run_frame_job(job, restore.hooks());
}

}  // namespace nanoscopy
