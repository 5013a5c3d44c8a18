#include "nanoscopy/smre/cli.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <tuple>

#include "nanoscopy/cluster/fingerprint.hpp"
#include "nanoscopy/cluster/mpi.hpp"
#include "nanoscopy/cluster/part_file.hpp"
#include "nanoscopy/config.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/frame_size.hpp"
#include "nanoscopy/core/progress.hpp"
#include "nanoscopy/core/sibling_path.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/params/tool_schemas.hpp"
#include "nanoscopy/smre/runner.hpp"
#include "nanoscopy/smre/simulate.hpp"
#include "nanoscopy/smre/partial.hpp"

namespace nanoscopy {

namespace fs = std::filesystem;

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

std::string file_part(const std::string& spec) {
  // "file.h5:/dataset" names a dataset; the file is the part before ":/".
  const auto colon = spec.find(":/");
  return colon == std::string::npos ? spec : spec.substr(0, colon);
}

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

bool is_hdf5_path(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  return ext == ".h5" || ext == ".hdf5";
}

std::string format_report(const ReportLine& r) {
  char line[256];
  std::snprintf(line, sizeof line, "smre: frame %lld iter %6lld  c1 %.4e  c2 %.4e  max ratio %.4f  |dx| %.4e  sweeps %d",
                static_cast<long long>(r.frame), static_cast<long long>(r.iteration), r.stats.c1, r.stats.c2,
                r.max_ratio, r.stats.step, r.stats.sweeps);
  return line;
}

}  // namespace

void run_smre_cli(const SmreOptions& options, ToolContext& ctx, std::ostream& out) {
  const Params& p = ctx.params;
  SmreSettings settings = smre_settings_from(p);
  if (!(options.fwhm >= 0))  // not given: 0
    throw UsageError("--fwhm", "the PSF's full width at half maximum must be > 0 px, not " + std::to_string(options.fwhm));
  if (options.fwhm > 0) {
    if (p.source("input data/sigma").file != "default")
      throw UsageError("--fwhm", "give the PSF width once: --psf (sigma) or --fwhm, not both");
    settings.psf_sigma = fwhm_to_sigma(options.fwhm);
  }
  SmreRunOptions ro;
  ro.settings = settings;
  ro.anscombe = p.get_bool("method/anscombe");
  ro.quiet = ctx.quiet;
  const std::string input = options.input.empty() ? p.get_string("input data/image") : options.input;

  if (options.print_weights && input.empty()) {
    std::int64_t w = 1024, h = 1024;
    if (!options.size.empty()) {
      const auto size = parse_frame_size(options.size);
      if (!size) throw UsageError("--size", "expected WIDTHxHEIGHT, e.g. 1024x1024 (got '" + options.size + "')");
      std::tie(w, h) = *size;
    }
    WeightOptions wo;
    wo.method = settings.weights;
    wo.coverage = settings.coverage;
    wo.samples = settings.weight_samples;
    wo.quiet = ctx.quiet;
    print_weights(out, make_smre_problem(w, h, settings, wo));
    return;
  }
  if (input.empty()) throw UsageError("command line", "no input image given (see smre --help)");

  auto reader = open_stack(input);
  const StackInfo info = reader->info();
  const auto range = ctx.frames.resolve(info.frames, info.path);
  if (range.count() < 1) throw InputError(info.path, "no frames to restore in the range " + ctx.frames.to_string());
  // Under mpirun this process restores its share of the frames; rank 0 writes them all.
  const MpiWorld& world = mpi_world();
  const bool partial = !options.partial.empty();
  if (partial && world.size > 1) throw UsageError("mpirun", "--partial writes one part per process; start it without mpirun");
  const auto mine = world.size > 1 ? rank_frames(range, world) : range;
  std::int64_t frames = mine.count();

  ro.source = info.path;
  ro.quiet = ctx.quiet || world.rank != 0;
  SmreRunner runner(info.width, info.height, ro, smre_engine_factory(device_for_rank(ctx.device, world)));
  if (options.print_weights) {
    print_weights(out, runner.problem());
    return;
  }

  const bool simulate = p.get_bool("simulate dataset from real image/simulate");
  const std::uint64_t seed = p.get_bool("simulate dataset from real image/time seed")
                                 ? static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count())
                                 : 42u;
  if (simulate && !(settings.noise_sigma > 0))
    throw UsageError("gaussian noise", "simulate adds Gaussian noise of this sigma and must know it: give --noise > 0");
  std::string output = options.output.empty() ? p.get_string("output/output image") : options.output;
  if (output.empty()) output = sibling_path(file_part(input), "_smre.tif");
  const std::string log_path = p.get_string("output/log");
  const bool control = p.get_bool("output/control");
  if (partial || world.size > 1) {
    const std::string how = partial ? "--partial" : "mpirun";
    if (simulate) throw UsageError(how, "--simulate runs in one process");
    if (!log_path.empty() || control) throw UsageError(how, "--log and --control run in one process");
    if (partial && !is_hdf5_path(options.partial))
      throw UsageError(options.partial, "part files are HDF5: name it .h5");
  }

  ImageMeta meta;
  meta.width = info.width;
  meta.height = info.height;
  meta.frames = frames;
  meta.type = PixelType::f32;
  meta.pixel_size_nm = info.pixel_size_nm;
  meta.axis = info.axis;  // a movie stays a movie (T), a focus series a Z stack
  meta.software = std::string("nanoscopy smre ") + NANOSCOPY_VERSION;
  // Outputs are opened (and their directories checked) before any work.
  if (!log_path.empty()) AtomicOutput check(log_path);  // the log is written last: fail now, not after the work
  std::unique_ptr<ImageWriter> writer;
  if (partial) {
    PartOrigin origin{"", fs::path(info.path).filename().string(), stack_fingerprint(*reader),
                      smre_parameter_fingerprint(p, settings.psf_sigma), info.frames, range.first, range.last};
    ImageMeta part = meta;
    part.root_attributes = part_attributes(kSmrePartFormat, origin);
    output = options.partial;
    writer = create_image_writer(output, part);
  } else if (world.rank != 0) {
    writer = create_rank_spool(meta);
  } else {
    ImageMeta whole = meta;
    whole.frames = range.count();
    writer = create_image_writer(output, whole);
  }
  std::unique_ptr<ImageWriter> simulated_writer;
  const std::string simulated_path = sibling_path(output, "_simulated" + fs::path(output).extension().string());
  if (simulate) simulated_writer = create_image_writer(simulated_path, meta);

  const Padding& pad = runner.padding();
  const SmreProblem& problem = runner.problem();
  if (!ro.quiet) {
    std::cerr << "smre: " << range.count() << " frame" << (frames == 1 ? "" : "s") << " of " << info.width << "x"
              << info.height;
    if (pad.padded())
      std::cerr << ", padded by reflection to " << pad.padded_width << "x" << pad.padded_height << " (margin "
                << pad.left << " px, tile grid 32)";
    std::cerr << "\nsmre: " << problem.family.describe() << ", " << to_string(settings.regularizer)
              << " regularizer (lambda " << settings.lambda << "), PSF sigma " << settings.psf_sigma << " px, on "
              << runner.engine_name() << "\n";
  }

  std::ostringstream log;
  log << "frame,iteration,c1,c2,max_ratio,step,sweeps\n" << std::setprecision(8);
  const bool print_reports = !ro.quiet && range.count() == 1;
  runner.on_report = [&](const ReportLine& r) {
    if (print_reports) std::cerr << format_report(r) << "\n";
    if (!log_path.empty())
      log << r.frame << "," << r.iteration << "," << r.stats.c1 << "," << r.stats.c2 << "," << r.max_ratio << ","
          << r.stats.step << "," << r.stats.sweeps << "\n";
  };
  if (!print_reports && log_path.empty()) runner.on_report = nullptr;  // the constraint ratio costs a download
  if (control && frames == 1)
    runner.on_control = [&](std::int64_t, std::int64_t it, std::span<const float> x) {
      char suffix[32];
      std::snprintf(suffix, sizeof suffix, "_iter%06lld", static_cast<long long>(it));
      ImageMeta m = meta;
      m.frames = 1;
      auto w = create_image_writer(sibling_path(output, suffix + fs::path(output).extension().string()), m);
      w->write(x.data(), 1);
      w->close();
    };

  const auto start = std::chrono::steady_clock::now();
  Progress progress("smre", frames, ro.quiet || frames == 1);
  ChunkStream stream(*reader, mine, runner.batch_frames());
  ChunkStream::Chunk chunk;
  std::vector<float> buffer, truth;
  std::vector<FrameOutcome> outcomes;
  double quality_sum = 0;
  std::int64_t iterations = 0, converged = 0, done = 0;
  double sigma_sum = 0;
  while (stream.next(chunk)) {
    buffer.assign(chunk.pixels.begin(), chunk.pixels.end());
    const std::int64_t n = info.pixels_per_frame();
    if (simulate) {
      truth = buffer;
      for (std::int64_t f = 0; f < chunk.count; ++f)
        blur_and_add_noise(
            std::span<float>(buffer).subspan(static_cast<std::size_t>(f * n), static_cast<std::size_t>(n)), info.width,
            info.height, settings.psf_sigma, settings.noise_sigma, seed + static_cast<std::uint64_t>(chunk.first + f));
      simulated_writer->write(buffer.data(), chunk.count);
    }
    const std::vector<float> measured = simulate ? buffer : std::vector<float>{};
    std::vector<FrameOutcome> part;
    on_frames(chunk.first, chunk.count, [&] { part = runner.run(buffer, chunk.first); });
    writer->write(buffer.data(), chunk.count);
    for (std::size_t f = 0; f < part.size(); ++f) {
      const FrameOutcome& o = part[f];
      iterations += o.iterations;
      converged += o.converged;
      sigma_sum += o.noise_sigma;
      if (simulate) {
        const auto at = [&](const std::vector<float>& v) {
          return std::span<const float>(v).subspan(f * static_cast<std::size_t>(n), static_cast<std::size_t>(n));
        };
        quality_sum += l2_distance(at(buffer), at(truth)) / l2_distance(at(measured), at(truth));
      }
    }
    done += chunk.count;
    progress.update(done);
    if (frames == 1) outcomes = part;
  }
  progress.finish();
  if (world.size > 1) {
    const std::int64_t n = info.pixels_per_frame();
    if (world.rank != 0)
      send_spool(*writer, std::max<std::int64_t>(1, (std::int64_t{1} << 24) / n));  // 64 MB messages
    else
      for (int r = 1; r < world.size; ++r) receive_frames(r, *writer, n);
    const double mine_stats[] = {static_cast<double>(iterations), static_cast<double>(converged), sigma_sum};
    const auto all = mpi_gather(mine_stats);
    if (world.rank != 0) {
      mpi_finish();
      return;
    }
    iterations = converged = 0;
    sigma_sum = 0;
    for (const auto& s : all) {
      iterations += static_cast<std::int64_t>(s[0]);
      converged += static_cast<std::int64_t>(s[1]);
      sigma_sum += s[2];
    }
    frames = range.count();
  }
  OutputGroup outputs;  // the restored stack, the simulated input and the log appear together
  writer->close();
  if (simulated_writer) simulated_writer->close();
  if (!log_path.empty()) write_file_atomically(log_path, log.str());
  outputs.commit();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  out << "smre: restored " << frames << " frame" << (frames == 1 ? "" : "s") << " in " << std::setprecision(3)
      << seconds << " s (" << static_cast<double>(frames) / seconds << " frames/s) on " << runner.engine_name()
      << (world.size > 1 ? " (" + std::to_string(world.size) + " MPI ranks)" : "") << "\n";
  out << "  iterations: " << iterations << (frames > 1 ? " in all" : "") << ", " << converged << " of " << frames
      << " converged (tolerance " << settings.tolerance << " sigma, cap " << settings.max_iterations << ")\n";
  if (converged < frames && !ro.quiet)
    std::cerr << "smre: note: " << frames - converged << " of " << frames << " frame" << (frames == 1 ? "" : "s")
              << " stopped at the iteration cap (" << settings.max_iterations
              << ") before the tolerance: the result is written but not converged; raise --iterations or "
                 "--tolerance\n";
  out << "  noise sigma: " << sigma_sum / static_cast<double>(frames)
      << (ro.anscombe ? " (Anscombe domain)" : (settings.noise_sigma > 0 ? " (given)" : " (estimated, mean)")) << "\n";
  if (frames == 1 && !outcomes.empty())
    out << "  last iteration: c1 " << outcomes[0].last.c1 << ", c2 " << outcomes[0].last.c2 << ", |dx| "
        << outcomes[0].last.step << "\n";
  if (simulate) {
    out << "  simulated input: " << simulated_path << "\n";
    out << "  quality |x - x*| / |I - x*|: " << std::setprecision(4) << quality_sum / static_cast<double>(frames)
        << (frames > 1 ? " (mean)" : "") << "\n";
  }
  out << "  wrote " << output << (partial ? " (a part: merge with smre merge)" : "") << "\n";
  if (!log_path.empty()) out << "  convergence log: " << log_path << "\n";
  mpi_finish();
}

}  // namespace nanoscopy
