#include "nanoscopy/bench/bench_sofi.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <optional>
#include <iostream>
#include <optional>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/frc/frc.hpp"
#include "nanoscopy/io/frame_source.hpp"
#include "nanoscopy/io/image_png.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/sim/blinking.hpp"
#include "nanoscopy/smre/cli.hpp"
#include "nanoscopy/smre/runner.hpp"
#include "nanoscopy/sofi/runner.hpp"
#include "nanoscopy/sofi/split_run.hpp"
#include "nanoscopy/bench/bench_common.hpp"
#include "nanoscopy/bench/page_cache.hpp"
#include "nanoscopy/bench/read_alone.hpp"
#include "nanoscopy/bench/sofi_truth.hpp"
#include "nanoscopy/sofi/balanced.hpp"
#include "nanoscopy/sofi/cli.hpp"

namespace nanoscopy {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

double since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

SofiProblem problem_of(std::int64_t w, std::int64_t h, std::vector<int> orders) {
  SofiProblemOptions o;
  o.orders = std::move(orders);
  return make_sofi_problem(w, h, o);
}

// SOFI of one sequence of a stack.
SofiImages sofi_of(const std::string& path, const SofiProblem& problem, const Device& device, FrameSequence sequence,
                   std::int64_t block) {
  auto reader = open_stack(path);
  auto engine = make_sofi_engine(device, problem, 256 + problem.max_lag);
  SofiRunInput in;
  in.reader = reader.get();
  in.sequence = sequence;
  in.end = sequence.count;
  in.block = block;
  in.quiet = true;
  return finish_images(problem, run_sofi(problem, *engine, in).finished);
}

// The SMRE used on frames and on SOFI2 images: params/sofi-smre.prm's settings unless a file is given.
SmreRunOptions smre_options(const SofiBenchOptions& o, double psf_scale) {
  if (!o.smre_params.empty()) return smre_options_from_file(o.smre_params, psf_scale, true);
  SmreRunOptions ro;
  ro.settings.psf_sigma = o.psf_sigma * psf_scale;
  ro.settings.projection = Projection::icd;
  ro.settings.mr_depth = 8;
  ro.settings.max_iterations = 200;
  ro.settings.tolerance = 1e-3;
  ro.settings.weights = WeightMethod::closed_form;
  ro.settings.report_interval = 10;
  ro.quiet = true;
  return ro;
}

// Every frame restored by SMRE, streamed into a float32 stack.
void smre_every_frame(const std::string& in_path, const std::string& out_path, const SmreRunOptions& ro,
                      const Device& device, bool quiet) {
  auto reader = open_stack(in_path);
  const StackInfo info = reader->info();
  SmreRunner runner(info.width, info.height, ro, smre_engine_factory(device));
  ImageMeta meta;
  meta.width = info.width, meta.height = info.height, meta.frames = info.frames, meta.type = PixelType::f32;
  auto writer = create_image_writer(out_path, meta);
  FrameSource source(*reader, {0, info.frames}, 64);
  std::vector<float> frames;  // restored in place
  for (FrameChunk chunk; source.next(chunk);) {
    const auto pixels = chunk.floats();
    frames.assign(pixels.begin(), pixels.end());
    runner.run(std::span<float>(frames), chunk.first);
    writer->write(frames.data(), chunk.count);
    if (!quiet)
      std::cerr << "\rbench sofi: SMRE on every frame " << chunk.first + chunk.count << "/" << info.frames << std::flush;
  }
  if (!quiet) std::cerr << "\n";
  writer->close();
}

json frc_entry(const std::vector<float>& a, const std::vector<float>& b, std::int64_t w, std::int64_t h,
               double pixel_nm) {
  json out;
  for (const char* t : {"2sigma", "1/7"}) {
    const auto r = compute_frc(a, b, FrcGeometry{w, h, 0.125}, parse_frc_threshold(t));
    const bool crossed = r.crossing.status == FrcCrossing::Status::crossed;
    out[t] = {{"status", to_string(r.crossing.status)},
              {"ring", r.crossing.ring},
              {"resolution_px", r.crossing.resolution_px},
              {"resolution_nm", crossed || r.crossing.status == FrcCrossing::Status::not_reached
                                    ? r.crossing.resolution_px * pixel_nm
                                    : 0.0}};
  }
  return out;
}

void save_image(const SofiBenchOptions& o, const std::string& name, std::int64_t w, std::int64_t h,
                const std::vector<float>& pixels) {
  if (o.images.empty()) return;
  fs::create_directories(o.images);
  const float* page = pixels.data();
  write_float_pages((fs::path(o.images) / (name + ".tif")).string(), w, h, {&page, 1}, o.pixel_size);
  write_gray_png((fs::path(o.images) / (name + ".png")).string(), w, h, pixels);
}

json quality(const SofiBenchOptions& o, const BenchDevice& dev, const fs::path& dir, std::uint64_t seed, bool quiet,
             std::ostream& out) {
  BlinkingSettings s;
  s.frames = o.frames;
  s.width = s.height = o.size;
  s.emitters = o.emitters;
  s.psf_sigma = o.psf_sigma;
  s.pixel_size_nm = o.pixel_size;
  s.seed = seed;
  const std::string stack = (dir / "bench_sofi_qd.tif").string();
  const auto sim = simulate_blinking(s, stack, quiet);
  const std::int64_t n = o.size, frames = o.frames, block = 500;
  const SofiProblem problem = problem_of(n, n, {2});
  const FrameSequence all{0, 1, frames}, even{0, 2, (frames + 1) / 2}, odd{1, 2, frames / 2};

  out << "\nSOFI quality: " << frames << " frames of " << n << "x" << n << ", " << sim.emitters
      << " quantum dots (power-law blinking, mean on-fraction " << std::setprecision(3) << sim.mean_on_fraction
      << "), PSF sigma " << o.psf_sigma << " px, " << o.pixel_size << " nm pixels; SMRE (ICD) on " << dev.label
      << "\nFRC of the even- against the odd-frame image; each image against the sample (error |a x + b - t| / |t| "
         "with the best a, b; FRC at 0.5)\nand against its own ideal (what a noise-free image of its kind would be):\n"
      << "  the sample: each quantum dot weighted by its brightness, blurred to the sharpest resolution compared "
         "here (sigma / 2 = " << o.psf_sigma / 2 << " px, order 4)\n"
      << "  own ideals: mean: brightness x on-fraction, PSF sigma; SOFI_n: brightness^n x w_n(rho), PSF sigma / "
         "sqrt(n); balanced: the sample\n";
  // The one truth every image is ranked by. Each image kind also has its own ideal (sofi_truth.hpp), which
  // says whether the image is what its method promises; only the sample says which image is closest to the
  // specimen, so only it ranks across kinds.
  const auto truth_sample = sofi_truth_image(sim.emitter_list, n, n, 1, o.psf_sigma, 4, TruthWeight::linear);
  save_image(o, "sample", n, n, truth_sample);
  save_image(o, "sample", n, n, truth_sample);
  const auto truth_mean = sofi_truth_image(sim.emitter_list, n, n, 1, o.psf_sigma, 1);
  const auto truth_sofi2 = sofi_truth_image(sim.emitter_list, n, n, 1, o.psf_sigma, 2);
  const auto truth_sofi4 = sofi_truth_image(sim.emitter_list, n, n, 1, o.psf_sigma, 4);
  json rows = json::array();
  struct Ranked {
    std::string method;
    double oddeven_nm, sample_error;
  };
  std::vector<Ranked> ranked;
  auto report = [&](const std::string& method, const std::vector<float>& full, const std::vector<float>& a,
                    const std::vector<float>& b, const std::vector<float>& ideal, std::int64_t w, std::int64_t h,
                    double pixel_nm, double seconds) {
    json entry = frc_entry(a, b, w, h, pixel_nm);
    const TruthScore sample = score_against_truth(full, truth_sample, w, h);
    const TruthScore own = score_against_truth(full, ideal, w, h);
    const auto frc_nm = [&](const TruthScore& score) {
      return score.frc_status == "crossed" || score.frc_status == "not reached" ? score.frc_resolution_px * pixel_nm : 0.0;
    };
    entry["method"] = method;
    entry["seconds"] = seconds;
    entry["truth"] = {{"normalized_error", sample.normalized_error},
                      {"frc_status", sample.frc_status},
                      {"frc_resolution_nm", frc_nm(sample)}};
    entry["own_ideal"] = {{"normalized_error", own.normalized_error},
                          {"frc_status", own.frc_status},
                          {"frc_resolution_nm", frc_nm(own)}};
    rows.push_back(entry);
    const double oddeven = entry["1/7"]["resolution_nm"].get<double>();
    ranked.push_back({method, oddeven > 0 ? oddeven : HUGE_VAL, sample.normalized_error});
    out << "  " << std::left << std::setw(12) << method << std::right << " odd/even 2sigma " << std::fixed
        << std::setprecision(1) << std::setw(6) << entry["2sigma"]["resolution_nm"].get<double>() << " nm, 1/7 "
        << std::setw(6) << oddeven << " nm | sample: error " << std::setprecision(3) << sample.normalized_error
        << ", FRC " << std::setprecision(1) << std::setw(6) << frc_nm(sample) << " nm | own ideal: error "
        << std::setprecision(3) << own.normalized_error << " | " << std::setprecision(1) << seconds << " s"
        << (entry["2sigma"]["status"] == "crossed" ? "" : "  (2sigma " + entry["2sigma"]["status"].get<std::string>() +
                                                              ": at most Nyquist, 2 px)")
        << "\n";
    std::string name = method;
    std::replace(name.begin(), name.end(), '(', '_');
    name.erase(std::remove(name.begin(), name.end(), ')'), name.end());
    save_image(o, name, w, h, full);
  };

  auto t = clock_type::now();
  const auto sofi_full = sofi_of(stack, problem, dev.device, all, block);
  const auto sofi_even = sofi_of(stack, problem, dev.device, even, block);
  const auto sofi_odd = sofi_of(stack, problem, dev.device, odd, block);
  const double sofi_seconds = since(t);
  report("mean", sofi_full.mean, sofi_even.mean, sofi_odd.mean, truth_mean, n, n, o.pixel_size, sofi_seconds);
  report("SOFI2", sofi_full.planes[0], sofi_even.planes[0], sofi_odd.planes[0], truth_sofi2, n, n, o.pixel_size,
         sofi_seconds);

  if (!o.skip_smre) {
    t = clock_type::now();
    const std::string restored = (dir / "bench_sofi_qd_smre.tif").string();
    smre_every_frame(stack, restored, smre_options(o, 1.0), dev.device, quiet);
    const auto pre_full = sofi_of(restored, problem, dev.device, all, block);
    const auto pre_even = sofi_of(restored, problem, dev.device, even, block);
    const auto pre_odd = sofi_of(restored, problem, dev.device, odd, block);
    report("SOFI2(SMRE)", pre_full.planes[0], pre_even.planes[0], pre_odd.planes[0], truth_sofi2, n, n, o.pixel_size,
           since(t));
    fs::remove(restored);

    t = clock_type::now();
    SmreRunner post(n, n, smre_options(o, 1.0 / std::sqrt(2.0)), smre_engine_factory(dev.device));
    auto post_full = sofi_full, post_even = sofi_even, post_odd = sofi_odd;
    post.run(post_full.planes[0], 0);
    post.run(post_even.planes[0], 0);
    post.run(post_odd.planes[0], 0);
    report("SMRE(SOFI2)", post_full.planes[0], post_even.planes[0], post_odd.planes[0], truth_sofi2, n, n,
           o.pixel_size, since(t));
  }

  // SOFI4 and balanced SOFI (sofi --balanced's defaults: orders 2..4, Richardson-Lucy, 10 iterations, on the
  // quality device) from the same cumulant runs.
  t = clock_type::now();
  const SofiProblem problem4 = problem_of(n, n, {2, 3, 4});
  const auto c4_full = sofi_of(stack, problem4, dev.device, all, block);
  const auto c4_even = sofi_of(stack, problem4, dev.device, even, block);
  const auto c4_odd = sofi_of(stack, problem4, dev.device, odd, block);
  const double c4_seconds = since(t);
  report("SOFI4", c4_full.planes[2], c4_even.planes[2], c4_odd.planes[2], truth_sofi4, n, n, o.pixel_size,
         c4_seconds);
  t = clock_type::now();
  BalancedSettings balanced_settings;
  balanced_settings.psf_sigma = o.psf_sigma;
  const auto deconvolve =
      richardson_lucy_deconvolver(o.psf_sigma, kBalancedRlIterations, make_deconvolve_engine(dev.device));
  const auto bal_full = balance_sofi(problem4, c4_full, balanced_settings, deconvolve);
  const auto bal_even = balance_sofi(problem4, c4_even, balanced_settings, deconvolve);
  const auto bal_odd = balance_sofi(problem4, c4_odd, balanced_settings, deconvolve);
  report("balanced", bal_full.balanced, bal_even.balanced, bal_odd.balanced, truth_sample, n, n, o.pixel_size,
         c4_seconds + since(t));
  out << "  (paper, quantum-dot neurons: SOFI2 129 nm, SOFI2(SMRE) 95 nm, SMRE(SOFI2) 127 nm)\n";

  std::sort(ranked.begin(), ranked.end(), [](const Ranked& p, const Ranked& q) { return p.sample_error < q.sample_error; });
  out << "  closest to the sample:";
  for (std::size_t i = 0; i < ranked.size(); ++i)
    out << (i ? " < " : " ") << ranked[i].method << " " << std::setprecision(3) << ranked[i].sample_error;
  out << "\n";

  // Where the two judges disagree, and why.
  json disagreements = json::array();
  for (std::size_t i = 0; i < ranked.size(); ++i)
    for (std::size_t j = i + 1; j < ranked.size(); ++j) {
      const auto& p = ranked[i];
      const auto& q = ranked[j];
      if (p.oddeven_nm == q.oddeven_nm || (p.oddeven_nm < q.oddeven_nm) == (p.sample_error < q.sample_error))
        continue;
      const auto& frc_better = p.oddeven_nm < q.oddeven_nm ? p : q;
      const auto& truth_better = p.oddeven_nm < q.oddeven_nm ? q : p;
      out << "  disagree: odd/even FRC ranks " << frc_better.method << " above " << truth_better.method
          << ", the sample ranks " << truth_better.method << " above " << frc_better.method << " (error "
          << std::setprecision(3) << truth_better.sample_error << " vs " << frc_better.sample_error << ")\n";
      disagreements.push_back({{"frc_prefers", frc_better.method}, {"truth_prefers", truth_better.method}});
    }
  if (!disagreements.empty())
    out << "  why: the odd/even FRC measures how well two independent halves agree (noise), not how close an image is\n"
           "  to the sample. A blur or bias both halves share (the mean image's full PSF, SMRE's regularization, the\n"
           "  brightness^n weighting that hides dim emitters) passes it unseen, and an image that resolves more but is\n"
           "  noisier loses; the truth sees both.\n";
  fs::remove(stack);
  json ranking = json::array();
  for (const auto& r : ranked) ranking.push_back(r.method);
  return {{"frames", frames},          {"size", n},
          {"emitters", sim.emitters},  {"mean_on_fraction", sim.mean_on_fraction},
          {"psf_sigma_px", o.psf_sigma}, {"pixel_size_nm", o.pixel_size},
          {"device", dev.label},       {"rows", rows},
          {"truth", "the sample: emitters weighted by brightness * PSF sigma/2 (order 4); error |a x + b - t|/|t|; "
                    "FRC against it at 0.5"},
          {"own_ideal", "mean: brightness x on-fraction * PSF sigma; SOFI_n: brightness^n w_n(rho) * PSF "
                        "sigma/sqrt(n); balanced: the sample"},
          {"ranking", ranking},
          {"disagreements", disagreements}};
}

// A 512x512 uint16 stack of noise and blinking spots, fast to make.
void write_speed_stack(const std::string& path, std::int64_t frames, std::int64_t size, std::uint64_t seed) {
  ImageMeta meta;
  meta.width = size, meta.height = size, meta.frames = frames, meta.type = PixelType::u16;
  auto writer = create_image_writer(path, meta);
  std::vector<std::uint16_t> frame(static_cast<std::size_t>(size * size));
  std::uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (std::int64_t t = 0; t < frames; ++t) {
    for (auto& v : frame) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      v = static_cast<std::uint16_t>(100 + ((state >> 33) % 1000));
    }
    writer->write(frame.data(), 1);
  }
  writer->close();
}

// Reading alone as sofi reads (FrameReader, chunks of 256 frames, `threads`
// readers), frames/s: best of three passes, warm or cold (read_alone.hpp).
struct ReadRate {
  double frames_per_s = 0;
  int threads = 1;
  TimedPasses passes;
};
ReadRate read_rate(const std::string& path, std::int64_t frames, int threads, bool cold) {
  ReadRate r;
  r.passes = best_of_passes(path, cold, 3, [&] { return time_frame_reader(path, 256, threads, &r.threads); });
  r.frames_per_s = static_cast<double>(frames) / r.passes.seconds;
  return r;
}

json speed(const SofiBenchOptions& o, const std::vector<BenchDevice>& devices, const fs::path& dir, std::uint64_t seed,
           int repeats, std::ostream& out) {
  const std::int64_t n = o.speed_size;
  const std::string path = (dir / "bench_sofi_speed.tif").string();
  write_speed_stack(path, o.speed_frames, n, seed);
  json result;
  const double bytes_per_frame = static_cast<double>(n * n * 2);
  const ReadRate read1 = read_rate(path, o.speed_frames, 1, false);
  const ReadRate readn = read_rate(path, o.speed_frames, o.read_threads, false);
  const ReadRate read4 = readn.threads == 4 ? readn : read_rate(path, o.speed_frames, 4, false);
  out << "\nSOFI speed: " << n << "x" << n << " uint16 frames from a TIFF (" << o.speed_frames << " frames, "
      << std::fixed << std::setprecision(2) << bytes_per_frame * static_cast<double>(o.speed_frames) / 1e9
      << " GB), sofi reading with " << readn.threads << " threads\n  reading alone as sofi reads (FrameReader), page cache warm: "
      << std::setprecision(0) << read1.frames_per_s << " frames/s (1 thread), " << readn.frames_per_s << " frames/s ("
      << readn.threads << " threads)\n";
  result["read_frames_per_s"] = {{"threads_1", read1.frames_per_s},
                                 {"threads_4", read4.frames_per_s},
                                 {"threads_n", readn.frames_per_s}};
  result["read_threads"] = readn.threads;
  std::optional<ReadRate> cold1, coldn;
  if (o.cold) {
    cold1 = read_rate(path, o.speed_frames, 1, true);
    coldn = read_rate(path, o.speed_frames, o.read_threads, true);
    out << "  reading alone, cold file (" << coldn->passes.drop_method << "; at most " << std::setprecision(1)
        << 100 * std::max(cold1->passes.resident_after, coldn->passes.resident_after) << " % still cached): "
        << std::setprecision(0) << cold1->frames_per_s << " frames/s (1 thread), " << coldn->frames_per_s
        << " frames/s (" << coldn->threads << " threads)\n";
    result["read_cold_frames_per_s"] = {{"threads_1", cold1->frames_per_s},
                                       {"threads_n", coldn->frames_per_s},
                                       {"drop_method", coldn->passes.drop_method},
                                       {"resident_after", std::max(cold1->passes.resident_after,
                                                                   coldn->passes.resident_after)}};
  }
  json rows = json::array();
  for (const auto& dev : devices) {
    const bool gpu = dev.device.kind == DeviceKind::cuda;
    const std::int64_t frames = gpu ? o.speed_frames : std::min(o.cpu_frames, o.speed_frames);
    struct Config {
      std::vector<int> orders;
      bool balanced;  // + sofi --balanced's step (its defaults: Richardson-Lucy, on the same device)
    };
    for (const auto& [orders, balanced] : {Config{{2}, false}, Config{{2, 3, 4}, false}, Config{{2, 3, 4}, true}}) {
      const SofiProblem problem = problem_of(n, n, orders);
      // One reader per GPU (its FrameReader adds the decoding threads); cuda:all splits the frames between its
      // GPUs (sofi/split_run.hpp).
      const std::size_t engines_n = gpu ? dev.device.gpus.size() : 1;
      std::vector<std::unique_ptr<StackReader>> readers;
      for (std::size_t i = 0; i < engines_n; ++i) readers.push_back(open_stack(path));
      std::vector<double> times, streaming, reads_beside;
      const bool with_balanced = balanced;  // a structured binding: not captured by clang before C++20's fix
      // One run: end-to-end seconds, and the streaming seconds after set-up.
      auto run_once = [&](double& streaming_s) {
        const auto t = clock_type::now();
        const auto engines = make_sofi_engines(dev.device, problem, 256 + problem.max_lag);
        const double setup = since(t);  // pinned buffers and device sums: paid once per run
        std::vector<SofiEngine*> parts;
        std::vector<SofiRunInput> inputs;
        for (std::size_t g = 0; g < engines.size(); ++g) {
          parts.push_back(engines[g].get());
          SofiRunInput in;
          in.reader = readers[g].get();
          in.read_threads = o.read_threads;
          in.sequence = {0, 1, frames};
          in.end = frames;
          in.block = std::min<std::int64_t>(500, frames);
          in.quiet = true;
          inputs.push_back(std::move(in));
        }
        const SofiImages images = finish_images(problem, run_sofi_split(problem, parts, inputs).finished);
        if (with_balanced) {
          BalancedSettings settings;
          settings.psf_sigma = 2.0;
          balance_sofi(problem, images, settings,
                       richardson_lucy_deconvolver(settings.psf_sigma, kBalancedRlIterations,
                                                   make_deconvolve_engine(dev.device)));
        }
        const double seconds = since(t);
        streaming_s = seconds - setup;
        return seconds;
      };
      if (o.cold) time_frame_reader(path, 256, o.read_threads);  // back into the page cache after a cold pass
      for (int r = 0; r < std::max(1, std::min(repeats, 3)); ++r) {
        reads_beside.push_back(time_frame_reader(path, 256, o.read_threads));  // the host's read rate just now
        double streaming_s = 0;
        times.push_back(run_once(streaming_s));
        streaming.push_back(streaming_s);
      }
      // The best run, as the read alone is the best of three passes: one statistic on both sides of pipeline / read.
      const double fps = static_cast<double>(frames) / *std::min_element(times.begin(), times.end());
      const double stream_fps = static_cast<double>(frames) / *std::min_element(streaming.begin(), streaming.end());
      const std::string label = balanced ? "balanced 2-4" : "orders " + join_ints(orders);
      // Against the first one-GPU row of the same configuration: what the further GPUs add.
      std::optional<double> speedup;
      if (gpu)
        for (const auto& r : rows)
          if (r["mode"] == "end-to-end" && r["gpus"] == 1 && r["orders"] == json(orders) && r["balanced"] == balanced) {
            speedup = fps / r["frames_per_s"].get<double>();
            break;
          }
      // pipeline / read: the run's seconds over reading the same frames alone (N threads, same cache state).
      const double over_read = readn.frames_per_s / fps;
      // The read passes took the whole stack, a CPU run only its first `frames`: compare the rates.
      std::vector<double> reads_of_run_frames;
      for (const double t : reads_beside)
        reads_of_run_frames.push_back(t * static_cast<double>(frames) / static_cast<double>(o.speed_frames));
      const double paired = median_paired_ratio(times, reads_of_run_frames);
      out << "  " << std::left << std::setw(8) << dev.label << std::setw(15) << label << std::right << " end to end "
          << std::setw(9) << std::setprecision(0) << fps << " frames/s (" << std::setprecision(2)
          << fps * bytes_per_frame / 1e9 << " GB/s of pixels, " << frames << " frames); streaming after set-up "
          << std::setprecision(0) << stream_fps << " frames/s; pipeline / read " << std::setprecision(2) << over_read
          << " (paired with a read pass before each run: " << paired << ")";
      if (dev.device.gpus.size() > 1) out << "; " << device_label(dev.device);
      if (speedup && dev.device.gpus.size() > 1) out << ", " << std::setprecision(2) << *speedup << "x one GPU";
      out << "\n";
      json row{{"device", dev.label}, {"device_name", device_label(dev.device)},
               {"gpus", gpu ? dev.device.gpus.size() : 0}, {"orders", orders}, {"frames", frames},
               {"frames_per_s", fps}, {"streaming_frames_per_s", stream_fps}, {"mode", "end-to-end"},
               {"balanced", balanced}, {"read_threads", readn.threads}, {"pipeline_over_read", over_read},
               {"streaming_over_read", readn.frames_per_s / stream_fps}, {"runs_s", times},
               {"read_beside_runs_s", reads_beside},
               {"pipeline_over_read_paired", paired}};
      if (speedup) row["speedup_vs_one_gpu"] = *speedup;
      if (o.cold) {
        const CacheDrop drop = drop_file_cache(path);
        double cold_streaming = 0;
        const double cold_fps = static_cast<double>(frames) / run_once(cold_streaming);
        out << "  " << std::left << std::setw(8) << dev.label << std::setw(15) << label << std::right << " cold file  "
            << std::setw(9) << std::setprecision(0) << cold_fps << " frames/s; pipeline / read " << std::setprecision(2)
            << coldn->frames_per_s / cold_fps << "\n";
        row["cold"] = {{"frames_per_s", cold_fps},
                       {"streaming_frames_per_s", static_cast<double>(frames) / cold_streaming},
                       {"pipeline_over_read", coldn->frames_per_s / cold_fps},
                       {"drop_method", drop.method},
                       {"resident_after", drop.resident_after}};
      }
      if (gpu && !balanced && dev.device.gpus.size() == 1) {  // the kernels alone: one GPU's
        const std::int64_t resident = 2000;
        if (auto timing = time_device_resident_sofi(dev.device, problem, resident, std::max(repeats, 3))) {
          const double dfps = static_cast<double>(resident) / timing->seconds;
          const double bw = timing->bytes / timing->seconds;
          out << "  " << std::left << std::setw(8) << dev.label << std::setw(15) << label << std::right
              << " on the GPU " << std::setw(9) << std::setprecision(0) << dfps << " frames/s, " << std::setprecision(0)
              << bw / 1e9 << " GB/s = " << std::setprecision(1) << 100 * bw / timing->peak_bandwidth << " % of "
              << std::setprecision(0) << timing->peak_bandwidth / 1e9 << " GB/s nominal\n";
          rows.push_back({{"device", dev.label}, {"orders", orders}, {"frames", resident}, {"frames_per_s", dfps},
                          {"mode", "device-resident"}, {"bytes_per_pass", timing->bytes},
                          {"bandwidth_bytes_per_s", bw}, {"peak_bandwidth_bytes_per_s", timing->peak_bandwidth}});
        }
      }
      rows.push_back(row);
    }
  }
  if (!o.keep_stack) fs::remove(path);
  result["size"] = n;
  result["rows"] = rows;
  return result;
}

}  // namespace

void add_sofi_bench_options(CLI::App& cmd, SofiBenchOptions& o) {
  cmd.add_option("--devices", o.devices, "devices to time (cpu, cuda:0, ...); default: cpu and every GPU")->delimiter(',');
  cmd.add_option("--frames", o.frames, "quality: frames of the simulated quantum-dot stack")->default_val(o.frames);
  cmd.add_option("--size", o.size, "quality: frame edge in pixels")->default_val(o.size);
  cmd.add_option("--emitters", o.emitters, "quality: quantum dots")->default_val(o.emitters);
  cmd.add_option("--psf-sigma", o.psf_sigma, "quality: PSF sigma in pixels")->default_val(o.psf_sigma);
  cmd.add_option("--pixel-size", o.pixel_size, "quality: pixel size in nm")->default_val(o.pixel_size);
  cmd.add_option("--smre-params", o.smre_params, "smre parameter file for SOFI2(SMRE) and SMRE(SOFI2) "
                                                 "(default: the settings of params/sofi-smre.prm)");
  cmd.add_option("--quality-device", o.quality_device, "device of the quality runs (default: first GPU, else cpu)");
  cmd.add_option("--speed-frames", o.speed_frames, "speed: frames in the test stack")->default_val(o.speed_frames);
  cmd.add_option("--speed-size", o.speed_size, "speed: frame edge")->default_val(o.speed_size);
  cmd.add_option("--cpu-frames", o.cpu_frames, "speed: frames the CPU is timed over")->default_val(o.cpu_frames);
  cmd.add_option("--dir", o.dir, "where the test stacks are written (created when missing; default: system temp dir)");
  cmd.add_flag("--skip-quality", o.skip_quality, "skip the FRC comparison");
  cmd.add_flag("--skip-speed", o.skip_speed, "skip the speed measurements");
  cmd.add_flag("--skip-smre", o.skip_smre, "quality: leave out SOFI2(SMRE) and SMRE(SOFI2) (SMRE on every frame "
                                           "takes minutes on a CPU)");
  cmd.add_flag("--keep-stack", o.keep_stack, "keep the speed test stack (bench_sofi_speed.tif in --dir)");
  cmd.add_option("--read-threads", o.read_threads,
                 "speed: sofi's read threads (Input/read threads; 0: auto); reading alone is timed with 1 and these")
      ->default_val(o.read_threads)
      ->check(CLI::Range(0, 64));
  cmd.add_flag("--cold", o.cold,
               "speed: also from a cold file, its cached pages dropped before each timed pass (posix_fadvise; "
               "drop_caches too as root)");
  cmd.add_option("--images", o.images, "write the SOFI images (TIFF and PNG) to this directory")->type_name("DIR");
  cmd.add_option("--json", o.json, "also write the results as JSON")->type_name("FILE");
}

void run_sofi_bench(const SofiBenchOptions& o, std::uint64_t seed, int repeats, bool quiet, std::ostream& out) {
  const auto devices = bench_devices(o.devices);
  if (!o.smre_params.empty()) (void)smre_options(o, 1.0);  // a bad file fails now, not after the simulation
  if (!o.json.empty()) AtomicOutput check(o.json);
  const fs::path dir = bench_scratch_dir(o.dir);
  json result{{"bench", "sofi"}, {"machine", machine_info()}, {"time", utc_now()}, {"seed", seed}};
  if (!o.skip_quality) {
    const BenchDevice* dev = &devices.front();
    for (const auto& d : devices)
      if (o.quality_device.empty() ? d.device.kind == DeviceKind::cuda : d.label == o.quality_device) {
        dev = &d;
        break;
      }
    result["quality"] = quality(o, *dev, dir, seed, quiet, out);
  }
  if (!o.skip_speed) result["speed"] = speed(o, devices, dir, seed, repeats, out);
  if (!o.json.empty()) write_file_atomically(o.json, result.dump(2) + "\n");
}

}  // namespace nanoscopy
