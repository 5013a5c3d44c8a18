#include "nanoscopy/sofi/cumulant_job.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <ostream>
#include <sstream>
#include <thread>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/cluster/fingerprint.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/core/sibling_path.hpp"
#include "nanoscopy/smre/cli.hpp"
#include "nanoscopy/sofi/balanced_output.hpp"
#include "nanoscopy/sofi/drift_output.hpp"
#include "nanoscopy/sofi/merge.hpp"
#include "nanoscopy/sofi/output.hpp"
#include "nanoscopy/sofi/partial.hpp"
#include "nanoscopy/sofi/split_run.hpp"

namespace nanoscopy {
namespace {

std::vector<SequenceJob> sequences_for(const std::string& split, FrameRange::Resolved range) {
  const std::int64_t n = range.count();
  std::vector<SequenceJob> jobs{{"", {range.first, 1, n}}};
  if (split == "odd-even") {
    jobs.push_back({"_even", {range.first, 2, (n + 1) / 2}});
    jobs.push_back({"_odd", {range.first + 1, 2, n / 2}});
  } else if (split == "halves") {
    jobs.push_back({"_first", {range.first, 1, n / 2}});
    jobs.push_back({"_second", {range.first + n / 2, 1, n - n / 2}});
  }
  return jobs;
}

}  // namespace

int sofi_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

SofiCumulantJob::SofiCumulantJob(const SofiCliOptions& options, ToolContext& ctx, const FrameJob& job,
                                 StackReader& reader, const SofiProblem& problem, const SofiProblemOptions& problem_options,
                                 std::ostream& out)
    : options_(options), ctx_(ctx), job_(job), reader_(reader), info_(reader.info()), problem_(problem),
      problem_options_(problem_options), out_(out) {
  const Params& p = ctx.params;
  block_ = p.get_int("SOFI/block");
  chunk_ = p.get_int("Input/chunk frames");
  read_threads_ = static_cast<int>(p.get_int("Input/read threads"));
  pre_ = p.get_string("SOFI/pre smre");
  post_ = p.get_string("SOFI/post smre");
  split_ = p.get_string("SOFI/split");
  balanced_ = balanced_options_from(p);
  pixel_size_ = p.get_real("Output/pixel size") > 0 ? p.get_real("Output/pixel size") : info_.pixel_size_nm;
  correction_settings_.undrift = p.get_bool("SOFI/undrift");
  correction_settings_.drift_block = p.get_int("SOFI/drift block") > 0 ? p.get_int("SOFI/drift block") : block_;
  correction_settings_.drift.max_drift_px = p.get_real("SOFI/max drift");
  correction_settings_.bleach = parse_bleach_correction(p.get_string("SOFI/bleach correction"));
  correction_settings_.quiet = ctx.quiet;
  correction_settings_.read_threads = read_threads_;
  if (correction_settings_.undrift) (void)sofi_drift_geometry(info_.width, info_.height, correction_settings_.drift);
  make_filter();
  // --device cuda:all: every further GPU sums its part of the range through a reader of its own (its
  // FrameReader adds the decoding threads; split_run.hpp). --pre-smre's runner is one engine's: that run
  // stays on the first GPU (the registry says so).
  if (job.device.kind == DeviceKind::cuda && !filter_)
    for (std::size_t g = 1; g < job.device.gpus.size(); ++g) gpu_readers_.push_back(open_stack(options.input));
  start_ = std::chrono::steady_clock::now();
  check_outputs();
}

FrameJobHooks<SofiResults> SofiCumulantJob::hooks() {
  FrameJobHooks<SofiResults> h;
  h.process = [this](const FrameJob&) { return process(); };
  h.write_part = [this](SofiResults& r) { write_part(r.front()); };
  h.pack = [](const SofiResults& r) { return pack_accumulation(r.front().acc); };
  h.merge = [this](SofiResults&& mine, const std::vector<std::vector<double>>& all) {
    return merge(std::move(mine), all);
  };
  h.write_output = [this](SofiResults& r) { job_.mpi() ? write_merged(r.front()) : write_images(r); };
  return h;
}

// --pre-smre: every frame restored by SMRE before it is accumulated.
void SofiCumulantJob::make_filter() {
  if (pre_.empty()) return;
  auto ro = smre_options_from_file(pre_, 1.0, true);
  ro.source = info_.path;
  pre_runner_ = std::make_unique<SmreRunner>(info_.width, info_.height, ro, smre_engine_factory(job_.device));
  filter_ = [this](std::span<float> frames, std::int64_t count, std::int64_t first) {
    pre_runner_->run(frames.subspan(0, static_cast<std::size_t>(count * info_.pixels_per_frame())), first);
  };
}

void SofiCumulantJob::check_outputs() {
  if (correction_settings_.any() && (job_.part() || job_.mpi()))
    throw UsageError(job_.part() ? "--partial" : "mpirun",
                     std::string(correction_settings_.undrift ? "--undrift" : "--bleach-correction exponential") +
                         " measures the whole range in a first pass; run it in one process");
  if (job_.part()) {
    if (split_ != "none") throw UsageError("--partial", "partial sums cannot be split (--split); merge first");
    if (!post_.empty()) throw UsageError("--partial", "--post-smre applies to the merged image: give it to sofi merge");
    plan_output(options_.partial, "the part file (--partial)");
    check_sofi_output(options_.partial, false);
    return;
  }
  output_ = options_.output.empty() ? sibling_path(info_.path, "_sofi.tif") : options_.output;
  plan_output(output_, "the SOFI image (-o)");
  check_sofi_output(output_, true);
  if (job_.mpi() && split_ != "none") throw UsageError("mpirun", "--split runs in one process; start it without mpirun");
  // Every file of the run, checked against every file it reads before any work (core/run_files.hpp).
  const std::string ext = std::filesystem::path(output_).extension().string();
  int max_order = 0;
  for (const auto& plane : problem_.planes) max_order = std::max(max_order, plane.order);
  for (const auto& sequence : sequences_for(split_, job_.range)) {
    const std::string path = sequence.suffix.empty() ? output_ : sibling_path(output_, sequence.suffix + ext);
    const std::string what =
        sequence.suffix.empty() ? "the SOFI image (-o)" : "the SOFI image of --split (" + sequence.suffix + ")";
    for (const auto& file : sofi_image_files(path, problem_)) plan_output(file, what);
    if (balanced_.enabled)
      for (const auto& file : balanced_files(path, max_order)) plan_output(file, "the balanced SOFI image (--balanced)");
  }
  if (correction_settings_.undrift)
    for (const auto& file : sofi_drift_paths(output_)) plan_output(file, "the drift (--undrift)");
  check_run_plan();
}

SofiRunInput SofiCumulantJob::input_for(FrameSequence sequence, std::int64_t begin, std::int64_t end,
                                      std::string label) const {
  SofiRunInput in;
  in.reader = &reader_;
  in.read_threads = read_threads_;
  in.sequence = sequence;
  in.begin = begin;
  in.end = end;
  in.block = block_for(sequence);
  in.filter = filter_;
  in.corrections = corrections_ ? &*corrections_ : nullptr;
  in.quiet = ctx_.quiet;
  in.progress_label = std::move(label);
  return in;
}

SequenceResult SofiCumulantJob::run(const SequenceJob& job, std::int64_t begin, std::int64_t end,
                                  std::string label) const {
  const auto t0 = std::chrono::steady_clock::now();
  SequenceResult r{job, {}, {}, 0};
  const SofiRunInput input = input_for(job.sequence, begin, end, std::move(label));
  if (gpu_readers_.empty()) {
    auto engine = make_sofi_engine(job_.device, problem_, chunk_ + problem_.max_lag);
    r.acc = run_sofi(problem_, *engine, input);
    r.engine = engine->name();
  } else {  // one engine per GPU, the range split between them
    const auto engines = make_sofi_engines(job_.device, problem_, chunk_ + problem_.max_lag);
    std::vector<SofiEngine*> parts;
    std::vector<SofiRunInput> inputs{input};
    for (std::size_t g = 0; g < engines.size(); ++g) {
      parts.push_back(engines[g].get());
      r.engine += (g ? " + " : "") + engines[g]->name();
      if (g == 0) continue;
      SofiRunInput in = input;
      in.reader = gpu_readers_[g - 1].get();
      inputs.push_back(std::move(in));
    }
    r.acc = run_sofi_split(problem_, parts, inputs);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::int64_t SofiCumulantJob::block_for(const FrameSequence& sequence) const {
  return correction_settings_.bleach == BleachCorrection::none ? sequence.count : block_;
}

void SofiCumulantJob::measure_corrections() {
  const Device device = job_.device;
  corrections_ = measure_sofi_corrections(reader_, job_.range, correction_settings_,
                                          [&](const CorrelationGeometry& g) { return make_correlation_engine(device, g); });
  if (corrections_->drift && !corrections_->drift->reliable()) {
    const auto& d = *corrections_->drift;
    // A warning, not an error: the run goes on (the user may know better), but says plainly that the drift it
    // applies is not to be trusted. Printed with --quiet too: it is about the result, not the progress.
    std::cerr << "sofi: warning: " << info_.path << ": --undrift found no consistent registration between the "
              << d.block_time.size() << " drift blocks (residual " << std::fixed << std::setprecision(2)
              << d.rms_residual_px << " px rms, " << d.dropped << " of " << d.pairs
              << " pairs dropped): the stack seems to have no fixed structure to register, so the drift applied is "
                 "unreliable; run without --undrift, or with a longer --drift-block\n";
  }
}

// A part sums frames A:B of the whole stack; a rank its share of the range (as
// one sequence, so rank 0 completes the blocks cut between ranks); one process
// the range, and with --split its halves too (after the first pass, if any).
SofiResults SofiCumulantJob::process() {
  const FrameRange::Resolved range = job_.range;
  if (correction_settings_.any()) measure_corrections();
  if (job_.part()) return {run({"", {0, 1, info_.frames}}, range.first, range.last, "sofi partial")};
  if (job_.mpi()) {
    const auto mine = job_.mine();
    return {run({"", {range.first, 1, range.count()}}, mine.first - range.first, mine.last - range.first,
                "sofi rank " + std::to_string(job_.world.rank))};
  }
  SofiResults results;
  for (const auto& job : sequences_for(split_, range))
    results.push_back(run(job, 0, job.sequence.count, "sofi" + job.suffix));
  return results;
}

void SofiCumulantJob::write_part(SequenceResult& r) const {
  const FrameRange::Resolved range = job_.range;
  SofiPartial part;
  part.acc = std::move(r.acc);
  part.stack_fingerprint = stack_fingerprint(reader_);
  Fnv params;
  params.add(problem_.describe());
  params.add(block_for(r.job.sequence));
  params.add(file_fingerprint(pre_));
  part.parameter_fingerprint = params.hex();
  part.stack_name = std::filesystem::path(info_.path).filename().string();
  part.options = problem_options_;
  part.sequence = r.job.sequence;
  part.begin = range.first;
  part.end = range.last;
  part.block = block_for(r.job.sequence);
  part.width = info_.width;
  part.height = info_.height;
  part.pixel_size_nm = pixel_size_;
  write_sofi_partial(options_.partial, part);
  if (!ctx_.quiet)
    out_ << "sofi: partial sums of frames " << range.first << ":" << range.last << " of " << info_.path << " ("
         << part.acc.finished.blocks << " whole blocks, " << part.acc.open.size() << " cut at the range edges) -> "
         << options_.partial << " in " << std::fixed << std::setprecision(2) << seconds() << " s\n";
}

// Rank 0: every rank's sums added, the blocks cut between ranks completed.
SofiResults SofiCumulantJob::merge(SofiResults&& mine, const std::vector<std::vector<double>>& all) const {
  SequenceResult total = std::move(mine.front());
  total.acc = SofiAccumulation{};
  total.acc.finished.reset(problem_);
  for (std::size_t r = 0; r < all.size(); ++r)
    merge_accumulation(total.acc, unpack_accumulation(problem_, all[r]), rank_name(static_cast<int>(r)));
  close_open_blocks(problem_, SofiBlocks{job_.range.count(), block_for(total.job.sequence)}, total.acc, "mpirun",
                    sofi_threads());
  return {std::move(total)};
}

void SofiCumulantJob::write_merged(const SequenceResult& r) const {
  SofiImages images = finish_images(problem_, r.acc.finished);
  apply_post_smre(post_, problem_, images, job_.device, ctx_.quiet, out_);
  OutputGroup together;
  auto files = write_sofi_images(output_, problem_, images, pixel_size_);
  const auto extra = write_balanced(output_, problem_, images, balanced_, job_.device, pixel_size_, ctx_.quiet, out_);
  files.insert(files.end(), extra.begin(), extra.end());
  together.commit();
  if (!ctx_.quiet)
    out_ << "sofi: " << job_.range.count() << " frames of " << info_.path << " on " << job_.world.size
         << " MPI ranks in " << images.blocks << " blocks -> " << file_list(files) << " (" << std::fixed
         << std::setprecision(2) << seconds() << " s)\n";
}

// One process: the image, and with --split both halves' images, appearing together or none of them.
void SofiCumulantJob::write_images(const SofiResults& results) const {
  OutputGroup outputs;
  for (const auto& r : results) {
    const auto t0 = std::chrono::steady_clock::now();
    SofiImages images = finish_images(problem_, r.acc.finished);
    apply_post_smre(post_, problem_, images, job_.device, ctx_.quiet, out_);
    const std::string path = r.job.suffix.empty()
                                 ? output_
                                 : sibling_path(output_, r.job.suffix +
                                                             std::filesystem::path(output_).extension().string());
    auto files = write_sofi_images(path, problem_, images, pixel_size_);
    std::ostringstream balanced_note;  // printed under the image summary
    const auto extra =
        write_balanced(path, problem_, images, balanced_, job_.device, pixel_size_, ctx_.quiet, balanced_note);
    files.insert(files.end(), extra.begin(), extra.end());
    const double t = r.seconds + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!ctx_.quiet) {
      print_image_summary(r, images, files, t);
      out_ << balanced_note.str();
    }
  }
  if (corrections_ && corrections_->drift) {
    const auto files = write_sofi_drift_files(output_, *corrections_, pixel_size_);
    if (!ctx_.quiet) out_ << "  drift -> " << file_list(files) << "\n";
  }
  if (!ctx_.quiet) print_corrections_summary();
  outputs.commit();
}

void SofiCumulantJob::print_corrections_summary() const {
  if (!corrections_) return;
  const SofiCorrections& c = *corrections_;
  out_ << "  first pass over " << c.frame_mean.size() << " frames: " << std::fixed << std::setprecision(2) << c.seconds
       << " s";
  if (c.drift) {
    const auto& d = *c.drift;
    double largest = 0;
    for (std::size_t i = 0; i < d.dx.size(); ++i) largest = std::max(largest, std::hypot(d.dx[i], d.dy[i]));
    out_ << "; drift of " << d.block_time.size() << " blocks of " << correction_settings_.drift_block << " frames by "
         << d.pairs << " correlations (" << d.engine << ", " << d.correlation_seconds << " s), " << d.dropped
         << " dropped as outliers, residual " << std::setprecision(3) << d.rms_residual_px << " px rms, largest "
         << std::setprecision(2) << largest << " px (last frame " << d.dx.back() << ", " << d.dy.back() << ")";
  }
  if (c.bleach) {
    const auto& b = *c.bleach;
    if (b.decays)
      out_ << "; bleaching: mean intensity " << std::setprecision(1) << b.amplitude << " exp(-t/" << b.tau_frames
           << ") + " << b.constant << ", frames scaled by f(0)/f(t), the last by " << std::setprecision(2)
           << b.gain(static_cast<double>(c.frame_mean.size() - 1));
    else
      out_ << "; bleaching: the mean intensity does not decay, frames left as they are";
  }
  out_ << "\n";
}

void SofiCumulantJob::print_image_summary(const SequenceResult& r, const SofiImages& images,
                                        const std::vector<std::string>& files, double t) const {
  const FrameSequence& sequence = r.job.sequence;
  out_ << "sofi: " << sequence.count << " frames of " << info_.width << "x" << info_.height << " (" << info_.path;
  if (sequence.step == 2) out_ << ", every 2nd frame from " << sequence.first;
  out_ << ") in " << images.blocks << " blocks of " << block_for(sequence) << (pre_.empty() ? "" : ", SMRE on every frame first")
       << ", " << r.engine << "\n";
  for (const auto& label : problem_.labels) out_ << "  " << label << "\n";
  out_ << "  -> " << file_list(files) << " (" << std::fixed << std::setprecision(2) << t << " s, "
       << std::setprecision(0) << static_cast<double>(sequence.count) / t << " frames/s)\n";
}

double SofiCumulantJob::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

SofiCumulantJob::~SofiCumulantJob() = default;

}  // namespace nanoscopy
