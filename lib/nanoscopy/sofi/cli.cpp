#include "nanoscopy/sofi/cli.hpp"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>

#include "nanoscopy/cluster/fingerprint.hpp"
#include "nanoscopy/cluster/mpi.hpp"
#include "nanoscopy/config.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/sibling_path.hpp"
#include "nanoscopy/io/hdf5_images.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/sofi/merge.hpp"
#include "nanoscopy/sofi/partial.hpp"
#include "nanoscopy/sofi/runner.hpp"
#include "nanoscopy/smre/cli.hpp"

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
      throw UsageError(option, "expected comma-separated whole numbers such as 2,3,4 (got '" + text + "')");
    out.push_back(value);
  }
  return out;
}

int host_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// Post-SMRE: a SOFI image of order n has the PSF raised to the n-th power, so
// its sigma is the camera PSF's / sqrt(n), in pixels of its own grid (n times
// finer for cross-cumulants).
double post_smre_psf_scale(const SofiPlane& plane) {
  return static_cast<double>(plane.upsample) / std::sqrt(static_cast<double>(plane.order));
}

void apply_post_smre(const std::string& prm, const SofiPlan& plan, SofiImages& images, const Device& device,
                     bool quiet, std::ostream& out) {
  if (prm.empty()) return;
  for (std::size_t i = 0; i < plan.planes.size(); ++i) {
    auto ro = smre_options_from_file(prm, post_smre_psf_scale(plan.planes[i]), true);
    ro.source = "sofi " + plan.labels[i];
    SmreRunner runner(plan.plane_width(static_cast<int>(i)), plan.plane_height(static_cast<int>(i)), ro,
                      smre_engine_factory(device));
    const auto outcome = runner.run(images.planes[i], 0);
    if (!quiet)
      out << "  post-SMRE of " << plan.labels[i] << ": " << outcome.front().iterations << " iterations"
          << (outcome.front().converged ? "" : " (iteration cap)") << ", PSF sigma " << ro.settings.psf_sigma << " px\n";
  }
}

// Writes the planes and the mean (one file, or one per order and the mean, all
// appearing together); returns the files written.
std::vector<std::string> write_output(const std::string& path, const SofiPlan& plan, const SofiImages& images,
                                      double pixel_size_nm) {
  const std::string software = std::string("nanoscopy sofi ") + NANOSCOPY_VERSION;
  const std::string ext = std::filesystem::path(path).extension().string();
  const char* kind = plan.moments ? "moment" : "order";
  if (ext == ".h5" || ext == ".hdf5") {
    std::vector<NamedImage> named;
    for (std::size_t i = 0; i < plan.planes.size(); ++i) {
      const auto& pl = plan.planes[i];
      named.push_back({kind + std::to_string(pl.order), plan.plane_width(static_cast<int>(i)),
                       plan.plane_height(static_cast<int>(i)), images.planes[i].data(), plan.labels[i],
                       pixel_size_nm / pl.upsample});
    }
    named.push_back({"mean", plan.width, plan.height, images.mean.data(), "mean image", pixel_size_nm});
    write_hdf5_images(path, named, software);
    return {path};
  }
  if (ext != ".tif" && ext != ".tiff")
    throw UsageError(path, "write .tif/.tiff (one float32 page per order, then the mean) or .h5/.hdf5");
  // Every page is named (ImageJ slice labels): "order 2", ..., "mean".
  auto write_pages = [&](const std::string& file, std::int64_t w, std::int64_t h, std::vector<const float*> pages,
                         double px, const std::vector<std::string>& labels) {
    write_float_pages(file, w, h, pages, px, software, labels);
  };
  if (!plan.planes.front().cross) {
    std::vector<const float*> pages;
    std::vector<std::string> labels = plan.labels;
    for (const auto& plane : images.planes) pages.push_back(plane.data());
    pages.push_back(images.mean.data());
    labels.push_back("mean");
    write_pages(path, plan.width, plan.height, pages, pixel_size_nm, labels);
    return {path};
  }
  // Cross-cumulant grids differ per order: one file each (ImageJ wants one size
  // per stack), appearing together.
  OutputGroup together;
  std::vector<std::string> files;
  for (std::size_t i = 0; i < plan.planes.size(); ++i) {
    const auto& pl = plan.planes[i];
    files.push_back(sibling_path(path, "_" + std::string(kind) + std::to_string(pl.order) + ext));
    write_pages(files.back(), plan.plane_width(static_cast<int>(i)), plan.plane_height(static_cast<int>(i)),
                {images.planes[i].data()}, pixel_size_nm / pl.upsample, {plan.labels[i]});
  }
  files.push_back(sibling_path(path, "_mean" + ext));
  write_pages(files.back(), plan.width, plan.height, {images.mean.data()}, pixel_size_nm, {"mean"});
  together.commit();
  return files;
}

// Before any work: a wrong extension or a missing directory is found in a second, not after the run.
void check_output(const std::string& path, bool image) {
  const std::string ext = std::filesystem::path(path).extension().string();
  const bool hdf5 = ext == ".h5" || ext == ".hdf5";
  if (!hdf5 && (!image || (ext != ".tif" && ext != ".tiff")))
    throw UsageError(path, image ? "write .tif/.tiff (one float32 page per order, then the mean) or .h5/.hdf5"
                                 : "partial sums are written as HDF5 (.h5)");
  AtomicOutput probe(path);  // OutputError when the directory is missing or not writable
}

std::string list(const std::vector<std::string>& files) {
  std::string s;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (i) s += ", ";
    s += files[i];
  }
  return s;
}

struct SequenceJob {
  std::string suffix;  // "" for the main image
  FrameSequence sequence;
};

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

SofiPlanOptions sofi_plan_options_from(const Params& p) {
  SofiPlanOptions o;
  o.orders = parse_int_list(p.get_string("SOFI/orders"), "--orders");
  const std::string lags = p.get_string("SOFI/lags");
  if (!lags.empty()) o.lags = parse_int_list(lags, "--lags");
  o.cross = p.get_bool("SOFI/cross");
  o.moments = p.get_bool("SOFI/moments");
  o.psf_sigma = p.get_real("SOFI/psf sigma");
  return o;
}

void run_sofi_cli(const SofiCliOptions& options, ToolContext& ctx, std::ostream& out) {
  const Params& p = ctx.params;
  if (options.input.empty()) throw UsageError("command line", "no input stack given (see sofi --help)");
  const SofiPlanOptions plan_options = sofi_plan_options_from(p);
  auto reader = open_stack(options.input);
  const StackInfo info = reader->info();
  const auto range = ctx.frames.resolve(info.frames, info.path);
  const SofiPlan plan = make_sofi_plan(info.width, info.height, plan_options);
  const std::int64_t block = p.get_int("SOFI/block");
  const std::int64_t chunk = p.get_int("Input/chunk frames");
  const std::string pre = p.get_string("SOFI/pre smre"), post = p.get_string("SOFI/post smre");
  const std::string split = p.get_string("SOFI/split");
  const double pixel_size = p.get_real("Output/pixel size") > 0 ? p.get_real("Output/pixel size") : info.pixel_size_nm;
  const MpiWorld& world = mpi_world();
  const Device device = device_for_rank(ctx.device, world);

  std::unique_ptr<SmreRunner> pre_runner;
  FrameFilter filter;
  if (!pre.empty()) {
    auto ro = smre_options_from_file(pre, 1.0, true);
    ro.source = info.path;
    pre_runner = std::make_unique<SmreRunner>(info.width, info.height, ro, smre_engine_factory(device));
    filter = [&](std::span<float> frames, std::int64_t count, std::int64_t first) {
      pre_runner->run(frames.subspan(0, static_cast<std::size_t>(count * info.pixels_per_frame())), first);
    };
  }
  auto engine_for = [&] { return make_sofi_engine(device, plan, chunk + plan.max_lag); };
  // The GPU engine outruns one reading thread: read each chunk with four.
  std::vector<std::unique_ptr<StackReader>> extra;
  if (device.kind == DeviceKind::cuda && !filter)
    for (int i = 0; i < 3; ++i) extra.push_back(open_stack(options.input));
  auto input_for = [&](FrameSequence sequence, std::int64_t begin, std::int64_t end, std::string label) {
    SofiRunInput in;
    in.reader = reader.get();
    for (auto& r : extra) in.extra_readers.push_back(r.get());
    in.sequence = sequence;
    in.begin = begin;
    in.end = end;
    in.block = block;
    in.filter = filter;
    in.quiet = ctx.quiet;
    in.progress_label = std::move(label);
    return in;
  };
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

  if (!options.partial.empty()) {
    if (split != "none") throw UsageError("--partial", "partial sums cannot be split (--split); merge first");
    if (!post.empty()) throw UsageError("--partial", "--post-smre applies to the merged image: give it to sofi merge");
    check_output(options.partial, false);
    auto engine = engine_for();
    SofiRunInput in = input_for({0, 1, info.frames}, range.first, range.last, "sofi partial");
    SofiPartial part;
    part.acc = run_sofi(plan, *engine, in);
    part.stack_fingerprint = stack_fingerprint(*reader);
    Fnv params;
    params.add(plan.describe());
    params.add(block);
    params.add(file_fingerprint(pre));
    part.parameter_fingerprint = params.hex();
    part.stack_name = std::filesystem::path(info.path).filename().string();
    part.options = plan_options;
    part.sequence = in.sequence;
    part.begin = range.first;
    part.end = range.last;
    part.block = block;
    part.width = info.width;
    part.height = info.height;
    part.pixel_size_nm = pixel_size;
    write_sofi_partial(options.partial, part);
    if (!ctx.quiet)
      out << "sofi: partial sums of frames " << range.first << ":" << range.last << " of " << info.path << " ("
          << part.acc.finished.blocks << " whole blocks, " << part.acc.open.size() << " cut at the range edges) -> "
          << options.partial << " in " << std::fixed << std::setprecision(2) << seconds() << " s\n";
    return;
  }

  const std::string output = options.output.empty() ? sibling_path(info.path, "_sofi.tif") : options.output;
  check_output(output, true);
  if (world.size > 1) {
    // mpirun -n N: rank r sums frames [n r / N, n (r+1) / N) of the range; rank 0 merges and writes.
    if (split != "none") throw UsageError("mpirun", "--split runs in one process; start it without mpirun");
    const std::int64_t n = range.count();
    const auto mine_range = rank_frames({0, n}, world);
    const FrameSequence sequence{range.first, 1, n};
    const std::int64_t a = mine_range.first, b = mine_range.last;
    auto engine = engine_for();
    const auto mine = pack_accumulation(run_sofi(plan, *engine, input_for(sequence, a, b, "sofi rank " +
                                                                                         std::to_string(world.rank))));
    const auto all = mpi_gather(mine);
    if (world.rank == 0) {
      SofiAccumulation total;
      total.finished.reset(plan);
      for (std::size_t r = 0; r < all.size(); ++r)
        merge_accumulation(total, unpack_accumulation(plan, all[r]), rank_name(static_cast<int>(r)));
      close_open_blocks(plan, SofiBlocks{n, block}, total, "mpirun", host_threads());
      SofiImages images = finish_images(plan, total.finished);
      apply_post_smre(post, plan, images, device, ctx.quiet, out);
      const auto files = write_output(output, plan, images, pixel_size);
      if (!ctx.quiet)
        out << "sofi: " << n << " frames of " << info.path << " on " << world.size << " MPI ranks in " << images.blocks
            << " blocks -> " << list(files) << " (" << std::fixed << std::setprecision(2) << seconds() << " s)\n";
    }
    mpi_finish();
    return;
  }
  // With --split: the whole image and both halves appear together, or none of them.
  OutputGroup outputs;
  for (const auto& job : sequences_for(split, range)) {
    const auto job_start = std::chrono::steady_clock::now();
    auto job_seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - job_start).count(); };
    auto engine = engine_for();
    SofiRunInput in = input_for(job.sequence, 0, job.sequence.count, "sofi" + job.suffix);
    const auto acc = run_sofi(plan, *engine, in);
    SofiImages images = finish_images(plan, acc.finished);
    apply_post_smre(post, plan, images, ctx.device, ctx.quiet, out);
    const std::string path =
        job.suffix.empty() ? output : sibling_path(output, job.suffix + std::filesystem::path(output).extension().string());
    const auto files = write_output(path, plan, images, pixel_size);
    if (!ctx.quiet) {
      out << "sofi: " << job.sequence.count << " frames of " << info.width << "x" << info.height << " (" << info.path;
      if (job.sequence.step == 2) out << ", every 2nd frame from " << job.sequence.first;
      out << ") in " << images.blocks << " blocks of " << block << (pre.empty() ? "" : ", SMRE on every frame first")
          << ", " << engine->name() << "\n";
      for (const auto& label : plan.labels) out << "  " << label << "\n";
      const double t = job_seconds();
      out << "  -> " << list(files) << " (" << std::fixed << std::setprecision(2) << t << " s, " << std::setprecision(0)
          << static_cast<double>(job.sequence.count) / t << " frames/s)\n";
    }
  }
  outputs.commit();
}

void run_sofi_merge(const SofiMergeOptions& options, ToolContext& ctx, std::ostream& out) {
  if (options.output.empty()) throw UsageError("sofi merge", "give the output image with -o OUT.tif");
  check_output(options.output, true);
  const SofiPartial merged = merge_sofi_partials(options.parts, host_threads());
  const SofiPlan plan = make_sofi_plan(merged.width, merged.height, merged.options);
  SofiImages images = finish_images(plan, merged.acc.finished);
  apply_post_smre(ctx.params.get_string("SOFI/post smre"), plan, images, ctx.device, ctx.quiet, out);
  const auto files = write_output(options.output, plan, images, merged.pixel_size_nm);
  if (!ctx.quiet)
    out << "sofi merge: " << options.parts.size() << " parts, " << merged.sequence.count << " frames of "
        << merged.stack_name << " in " << images.blocks << " blocks -> " << list(files) << "\n";
}

}  // namespace nanoscopy
