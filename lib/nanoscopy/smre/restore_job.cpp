#include "nanoscopy/smre/restore_job.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "nanoscopy/cluster/fingerprint.hpp"
#include "nanoscopy/cluster/part_file.hpp"
#include "nanoscopy/config.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/core/progress.hpp"
#include "nanoscopy/core/sibling_path.hpp"
#include "nanoscopy/io/frame_source.hpp"
#include "nanoscopy/smre/partial.hpp"
#include "nanoscopy/smre/simulate.hpp"

namespace nanoscopy {
namespace {

namespace fs = std::filesystem;

std::string file_part(const std::string& spec) {
  // "file.h5:/dataset" names a dataset; the file is the part before ":/".
  const auto colon = spec.find(":/");
  return colon == std::string::npos ? spec : spec.substr(0, colon);
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

std::string plural(std::int64_t n) { return n == 1 ? "" : "s"; }

}  // namespace

SmreRestoreJob::SmreRestoreJob(const SmreOptions& options, ToolContext& ctx, const FrameJob& job, StackReader& reader,
                               SmreRunner& runner, const SmreRunOptions& run_options, std::ostream& out)
    : options_(options), job_(job), reader_(reader), info_(reader.info()), runner_(runner), ro_(run_options),
      settings_(run_options.settings), out_(out) {
  const Params& p = ctx.params;
  simulate_ = p.get_bool("simulate dataset from real image/simulate");
  seed_ = p.get_bool("simulate dataset from real image/time seed")
              ? static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count())
              : 42u;
  if (simulate_ && !(settings_.noise_sigma > 0))
    throw UsageError("gaussian noise", "simulate adds Gaussian noise of this sigma and must know it: give --noise > 0");
  output_ = options.output.empty() ? p.get_string("output/output image") : options.output;
  const std::string input = options.input.empty() ? p.get_string("input data/image") : options.input;
  if (output_.empty()) output_ = sibling_path(file_part(input), "_smre.tif");
  log_path_ = p.get_string("output/log");
  control_ = p.get_bool("output/control");
  if (job.part() || job.mpi()) {
    const std::string how = job.how();
    if (simulate_) throw UsageError(how, "--simulate runs in one process");
    if (!log_path_.empty() || control_) throw UsageError(how, "--log and --control run in one process");
    if (job.part() && !is_hdf5_path(options.partial))
      throw UsageError(options.partial, "part files are HDF5: name it .h5");
  }

  meta_.width = info_.width;
  meta_.height = info_.height;
  meta_.frames = job.mine().count();
  meta_.type = PixelType::f32;
  meta_.pixel_size_nm = info_.pixel_size_nm;
  meta_.axis = info_.axis;  // a movie stays a movie (T), a focus series a Z stack
  meta_.software = std::string("nanoscopy smre ") + NANOSCOPY_VERSION;
  // Every file of the run, checked against every file it reads before any work (core/run_files.hpp);
  // then the outputs are opened (and their directories checked).
  plan_output(job.part() ? options.partial : output_, job.part() ? "the part file (--partial)" : "the restored image (-o)");
  if (!log_path_.empty()) plan_output(log_path_, "the convergence log (--log)");
  if (simulate_)
    plan_output(sibling_path(output_, "_simulated" + fs::path(output_).extension().string()),
                "the simulated input (--simulate)");
  check_run_plan();
  if (!log_path_.empty()) AtomicOutput check(log_path_);  // the log is written last: fail now, not after the work
  if (job.part()) {
    PartOrigin origin{"", fs::path(info_.path).filename().string(), stack_fingerprint(reader),
                      smre_parameter_fingerprint(p, settings_.psf_sigma), info_.frames, job.range.first,
                      job.range.last};
    ImageMeta part = meta_;
    part.root_attributes = part_attributes(kSmrePartFormat, origin);
    output_ = options.partial;
    writer_ = create_image_writer(output_, part);
  } else if (!job.root()) {
    writer_ = create_rank_spool(meta_);
  } else {
    ImageMeta whole = meta_;
    whole.frames = job.range.count();
    writer_ = create_image_writer(output_, whole);
  }
  simulated_path_ = sibling_path(output_, "_simulated" + fs::path(output_).extension().string());
  if (simulate_) simulated_writer_ = create_image_writer(simulated_path_, meta_);
}

SmreRestoreJob::~SmreRestoreJob() = default;

FrameJobHooks<SmreTotals> SmreRestoreJob::hooks() {
  FrameJobHooks<SmreTotals> h;
  h.process = [this](const FrameJob&) { return process(); };
  h.write_part = [this](SmreTotals& t) { finish(t); };
  h.transfer = [this](const FrameJob&) { transfer(); };
  h.pack = [](const SmreTotals& t) {
    return std::vector<double>{static_cast<double>(t.iterations), static_cast<double>(t.converged), t.sigma_sum};
  };
  h.merge = [this](SmreTotals&&, const std::vector<std::vector<double>>& all) { return merge(all); };
  h.write_output = [this](SmreTotals& t) { finish(t); };
  return h;
}

void SmreRestoreJob::print_header() const {
  if (ro_.quiet) return;
  const Padding& pad = runner_.padding();
  const std::int64_t frames = job_.mine().count();
  std::cerr << "smre: " << job_.range.count() << " frame" << plural(frames) << " of " << info_.width << "x"
            << info_.height;
  if (pad.padded())
    std::cerr << ", padded by reflection to " << pad.padded_width << "x" << pad.padded_height << " (margin "
              << pad.left << " px, tile grid 32)";
  std::cerr << "\nsmre: " << runner_.problem().family.describe() << ", " << to_string(settings_.regularizer)
            << " regularizer (lambda " << settings_.lambda << "), PSF sigma " << settings_.psf_sigma << " px, on "
            << runner_.engine_name() << "\n";
}

// Reports (printed for a single frame, and logged with --log) and control images (--control).
void SmreRestoreJob::set_callbacks() {
  const std::int64_t frames = job_.mine().count();
  log_ << "frame,iteration,c1,c2,max_ratio,step,sweeps\n" << std::setprecision(8);
  const bool print_reports = !ro_.quiet && job_.range.count() == 1;
  runner_.on_report = [this, print_reports](const ReportLine& r) {
    if (print_reports) std::cerr << format_report(r) << "\n";
    if (!log_path_.empty())
      log_ << r.frame << "," << r.iteration << "," << r.stats.c1 << "," << r.stats.c2 << "," << r.max_ratio << ","
           << r.stats.step << "," << r.stats.sweeps << "\n";
  };
  if (!print_reports && log_path_.empty()) runner_.on_report = nullptr;  // the constraint ratio costs a download
  if (control_ && frames == 1)
    runner_.on_control = [this](std::int64_t, std::int64_t it, std::span<const float> x) {
      char suffix[32];
      std::snprintf(suffix, sizeof suffix, "_iter%06lld", static_cast<long long>(it));
      ImageMeta m = meta_;
      m.frames = 1;
      auto w = create_image_writer(sibling_path(output_, suffix + fs::path(output_).extension().string()), m);
      w->write(x.data(), 1);
      w->close();
    };
}

// This process's frames, a chunk at a time: (simulated,) restored, written.
SmreTotals SmreRestoreJob::process() {
  print_header();
  set_callbacks();
  start_ = std::chrono::steady_clock::now();
  SmreTotals t;
  t.frames = job_.mine().count();
  Progress progress("smre", t.frames, ro_.quiet || t.frames == 1);
  FrameSource source(reader_, job_.mine(), runner_.batch_frames());
  FrameChunk chunk;
  std::vector<float> buffer, truth;
  std::int64_t done = 0;
  while (source.next(chunk)) {
    const auto pixels = chunk.floats();
    buffer.assign(pixels.begin(), pixels.end());
    const std::int64_t n = info_.pixels_per_frame();
    if (simulate_) {
      truth = buffer;
      for (std::int64_t f = 0; f < chunk.count; ++f)
        blur_and_add_noise(
            std::span<float>(buffer).subspan(static_cast<std::size_t>(f * n), static_cast<std::size_t>(n)), info_.width,
            info_.height, settings_.psf_sigma, settings_.noise_sigma, seed_ + static_cast<std::uint64_t>(chunk.first + f));
      simulated_writer_->write(buffer.data(), chunk.count);
    }
    const std::vector<float> measured = simulate_ ? buffer : std::vector<float>{};
    std::vector<FrameOutcome> part;
    on_frames(chunk.first, chunk.count, [&] { part = runner_.run(buffer, chunk.first); });
    writer_->write(buffer.data(), chunk.count);
    for (std::size_t f = 0; f < part.size(); ++f) {
      const FrameOutcome& o = part[f];
      t.iterations += o.iterations;
      t.converged += o.converged;
      t.sigma_sum += o.noise_sigma;
      if (simulate_) {
        const auto at = [&](const std::vector<float>& v) {
          return std::span<const float>(v).subspan(f * static_cast<std::size_t>(n), static_cast<std::size_t>(n));
        };
        t.quality_sum += l2_distance(at(buffer), at(truth)) / l2_distance(at(measured), at(truth));
      }
    }
    done += chunk.count;
    progress.update(done);
    if (t.frames == 1) t.outcomes = part;
  }
  progress.finish();
  return t;
}

// mpirun: ranks other than 0 send their spooled frames; rank 0 appends them in rank order.
void SmreRestoreJob::transfer() const {
  const std::int64_t n = info_.pixels_per_frame();
  if (!job_.root())
    send_spool(*writer_, std::max<std::int64_t>(1, (std::int64_t{1} << 24) / n));  // 64 MB messages
  else
    for (int r = 1; r < job_.world.size; ++r) receive_frames(r, *writer_, n);
}

SmreTotals SmreRestoreJob::merge(const std::vector<std::vector<double>>& all) const {
  SmreTotals t;
  for (const auto& s : all) {
    t.iterations += static_cast<std::int64_t>(s[0]);
    t.converged += static_cast<std::int64_t>(s[1]);
    t.sigma_sum += s[2];
  }
  t.frames = job_.range.count();
  return t;
}

// Closes the outputs (together) and reports: one process, a part, or rank 0.
void SmreRestoreJob::finish(const SmreTotals& totals) {
  OutputGroup outputs;  // the restored stack, the simulated input and the log appear together
  writer_->close();
  if (simulated_writer_) simulated_writer_->close();
  if (!log_path_.empty()) write_file_atomically(log_path_, log_.str());
  outputs.commit();
  print_report(totals, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
}

void SmreRestoreJob::print_report(const SmreTotals& t, double seconds) const {
  const std::int64_t frames = t.frames;
  out_ << "smre: restored " << frames << " frame" << plural(frames) << " in " << std::setprecision(3) << seconds
       << " s (" << static_cast<double>(frames) / seconds << " frames/s) on " << runner_.engine_name()
       << (job_.mpi() ? " (" + std::to_string(job_.world.size) + " MPI ranks)" : "") << "\n";
  out_ << "  iterations: " << t.iterations << (frames > 1 ? " in all" : "") << ", " << t.converged << " of " << frames
       << " converged (tolerance " << settings_.tolerance << " sigma, cap " << settings_.max_iterations << ")\n";
  if (t.converged < frames && !ro_.quiet)
    std::cerr << "smre: note: " << frames - t.converged << " of " << frames << " frame" << plural(frames)
              << " stopped at the iteration cap (" << settings_.max_iterations
              << ") before the tolerance: the result is written but not converged; raise --iterations or "
                 "--tolerance\n";
  out_ << "  noise sigma: " << t.sigma_sum / static_cast<double>(frames)
       << (ro_.anscombe ? " (Anscombe domain)" : (settings_.noise_sigma > 0 ? " (given)" : " (estimated, mean)"))
       << "\n";
  if (frames == 1 && !t.outcomes.empty())
    out_ << "  last iteration: c1 " << t.outcomes[0].last.c1 << ", c2 " << t.outcomes[0].last.c2 << ", |dx| "
         << t.outcomes[0].last.step << "\n";
  if (simulate_) {
    out_ << "  simulated input: " << simulated_path_ << "\n";
    out_ << "  quality |x - x*| / |I - x*|: " << std::setprecision(4) << t.quality_sum / static_cast<double>(frames)
         << (frames > 1 ? " (mean)" : "") << "\n";
  }
  out_ << "  wrote " << output_ << (job_.part() ? " (a part: merge with smre merge)" : "") << "\n";
  if (!log_path_.empty()) out_ << "  convergence log: " << log_path_ << "\n";
}

}  // namespace nanoscopy
