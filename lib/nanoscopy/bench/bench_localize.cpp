#include "nanoscopy/bench/bench_localize.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/config.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/stage_profile_flag.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/loc/localize_dispatch.hpp"
#include "nanoscopy/loc/localize_engine.hpp"
#include "nanoscopy/loc/pipeline.hpp"
#include "nanoscopy/sim/movie.hpp"
#include "nanoscopy/bench/bench_common.hpp"
#include "nanoscopy/bench/page_cache.hpp"
#include "nanoscopy/bench/read_alone.hpp"

namespace nanoscopy {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// Warm pipeline runs per device; the best counts (as the read alone's best of three passes).
constexpr int kPipelineRuns = 3;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Removes the bench's directory however the run ends.
struct TempTree {
  fs::path path;
  ~TempTree() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Simulates `unique_frames` frames and writes them, over and over, as a
// `frames`-page uint16 TIFF. Detection and fitting cost the same on repeated
// frames; simulating 10^4 large frames would take minutes.
void write_stack(const LocalizeBenchOptions& o, const MovieSettings& movie, const fs::path& dir,
                 const fs::path& stack) {
  const fs::path base = dir / "base.tif";
  simulate_movie(movie, base.string());
  auto reader = open_stack(base.string());
  const std::int64_t n = movie.frames;
  std::vector<std::uint16_t> frames(static_cast<std::size_t>(n * o.size * o.size));
  reader->read_raw(0, n, frames.data());
  reader.reset();
  fs::remove(base);
  ImageMeta meta;
  meta.width = meta.height = o.size;
  meta.frames = o.frames;
  meta.type = PixelType::u16;
  meta.pixel_size_nm = movie.pixel_size_nm;
  meta.software = std::string("nanoscopy bench ") + NANOSCOPY_VERSION;
  auto writer = create_image_writer(stack.string(), meta);
  for (std::int64_t t = 0; t < o.frames;) {
    const std::int64_t from = t % n, count = std::min(n - from, o.frames - t);
    writer->write(frames.data() + from * o.size * o.size, count);
    t += count;
  }
  writer->close();
}

// The pipeline's own reading alone (run_localization's FrameSource: uint16,
// two chunks ahead), with `threads` read threads; best of three passes.
TimedPasses time_read(const fs::path& stack, std::int64_t chunk_frames, int threads, bool cold, int* used) {
  return best_of_passes(stack.string(), cold, 3, [&] {
    return time_frame_source(stack.string(), chunk_frames, PixelType::u16, 2, threads, used);
  });
}

json read_entry(const TimedPasses& t, std::int64_t frames, double file_mb, int threads) {
  json entry{{"seconds", t.seconds},
             {"frames_per_s", static_cast<double>(frames) / t.seconds},
             {"mb_per_s", file_mb / t.seconds},
             {"threads", threads},
             {"cache", t.cache}};
  if (!t.drop_method.empty()) entry["drop_method"] = t.drop_method, entry["resident_after"] = t.resident_after;
  return entry;
}

std::string fmt(double v, int precision = 3) {
  std::ostringstream s;
  s << std::setprecision(precision) << v;
  return s.str();
}

}  // namespace

void add_localize_bench_options(CLI::App& cmd, LocalizeBenchOptions& o) {
  cmd.add_option("--frames", o.frames, "frames in the test stack")->default_val(o.frames);
  cmd.add_option("--size", o.size, "frame edge in pixels")->default_val(o.size);
  cmd.add_option("--spots", o.spots, "mean emitters on per frame")->default_val(o.spots);
  cmd.add_option("--unique-frames", o.unique_frames, "frames simulated (the stack repeats them)")
      ->default_val(o.unique_frames);
  cmd.add_option("--chunk-frames", o.chunk_frames, "the pipeline's chunk")->default_val(o.chunk_frames);
  cmd.add_option("--memory-frames", o.memory_frames, "frames for the localizer-alone timing (in host memory)")
      ->default_val(o.memory_frames);
  cmd.add_option("--devices", o.devices, "devices to measure (default: cpu and every GPU)")->delimiter(',');
  cmd.add_option("--read-threads", o.read_threads,
                 "the pipeline's read threads (Input/read threads; 0: auto); reading alone is timed with 1 and these")
      ->default_val(o.read_threads)
      ->check(CLI::Range(0, 64));
  cmd.add_option("--engines-per-gpu", o.engines_per_gpu,
                 "localize engines per GPU, each with its own stream and buffers (0: as fit2d: 2 where at least 8 "
                 "threads read, else 1)")
      ->default_val(o.engines_per_gpu)
      ->check(CLI::Range(0, 8));
  cmd.add_flag("--cold", o.cold,
               "also time reading alone and the pipeline from a cold file: its cached pages dropped before each "
               "timed pass (posix_fadvise; drop_caches too as root)");
  cmd.add_option("--dir", o.dir, "where to write the test stack and outputs (created when missing; default: system temp dir)");
  cmd.add_option("--json", o.json, "write every cell, the machine and the parameters as JSON")->type_name("FILE");
}

void run_localize_bench(const LocalizeBenchOptions& o, std::uint64_t seed, bool quiet, std::ostream& out) {
  if (o.frames < 1 || o.size < 16 || o.unique_frames < 1 || o.chunk_frames < 1 || o.memory_frames < 0)
    throw UsageError("bench localize", "--frames, --unique-frames and --chunk-frames must be positive, --size ≥ 16");
  if (!(o.spots > 0)) throw UsageError("bench localize", "--spots must be positive");
  const auto devices = bench_devices(o.devices);

  // ~`spots` emitters on per frame: on_fraction · emitters = spots.
  MovieSettings movie;
  movie.frames = std::min(o.unique_frames, o.frames);
  movie.width = movie.height = o.size;
  movie.on_fraction = 0.1;
  movie.emitters = std::max(1, static_cast<int>(std::lround(o.spots / movie.on_fraction)));
  movie.seed = seed;

  const fs::path root = bench_scratch_dir(o.dir);
  TempTree tree{root / ("nanoscopy-bench-localize-" + std::to_string(::getpid()))};
  fs::create_directories(tree.path);
  const fs::path stack = tree.path / "stack.tif";
  if (!quiet) std::cerr << "bench localize: writing " << o.frames << " frames of " << o.size << "x" << o.size << "\n";
  const auto t_write = Clock::now();
  write_stack(o, movie, tree.path, stack);
  const double write_s = seconds_since(t_write);

  // (a) the read alone as the pipeline reads, one thread and N: page cache
  // warm (one untimed pass first, then the best of three), and cold.
  int threads = 1;
  const TimedPasses read_1 = time_read(stack, o.chunk_frames, 1, false, nullptr);
  const TimedPasses read_n = time_read(stack, o.chunk_frames, o.read_threads, false, &threads);
  const double read_s = read_n.seconds;
  std::optional<TimedPasses> cold_1, cold_n;
  if (o.cold) {
    cold_1 = time_read(stack, o.chunk_frames, 1, true, nullptr);
    cold_n = time_read(stack, o.chunk_frames, o.read_threads, true, nullptr);
  }
  const double file_mb = static_cast<double>(fs::file_size(stack)) / 1e6;

  PipelineSettings settings;
  settings.camera.baseline = movie.baseline;
  settings.camera.sensitivity = movie.sensitivity;
  settings.camera.pixel_size_nm = movie.pixel_size_nm;
  settings.chunk_frames = o.chunk_frames;
  settings.quiet = true;
  settings.read_threads = o.read_threads;
  const int engines_per_gpu = o.engines_per_gpu > 0 ? o.engines_per_gpu : localize_engines_per_gpu(settings);

  json doc;
  doc["benchmark"] = "localize";
  doc["date"] = utc_now();
  doc["machine"] = machine_info();
  doc["parameters"] = {{"frames", o.frames},
                       {"size", o.size},
                       {"spots_per_frame", o.spots},
                       {"emitters", movie.emitters},
                       {"on_fraction", movie.on_fraction},
                       {"unique_frames", movie.frames},
                       {"chunk_frames", o.chunk_frames},
                       {"read_threads", threads},
                       {"engines_per_gpu", engines_per_gpu},
                       {"cold", o.cold},
                       {"memory_frames", std::min(o.memory_frames, o.frames)},
                       {"box", settings.detect.box},
                       {"threshold", settings.detect.threshold},
                       {"seed", seed}};
  doc["stack"] = {{"file_mb", file_mb}, {"write_s", write_s}};
  // read_only: what the pipeline is compared with (its own reading, N threads, warm).
  doc["read_only"] = read_entry(read_n, o.frames, file_mb, threads);
  doc["read_only_1_thread"] = read_entry(read_1, o.frames, file_mb, 1);
  if (o.cold)
    doc["read_cold"] = {{"threads_1", read_entry(*cold_1, o.frames, file_mb, 1)},
                        {"threads_n", read_entry(*cold_n, o.frames, file_mb, threads)}};
  doc["cells"] = json::array();

  for (const auto& dev : devices) {
    if (!quiet) std::cerr << "bench localize: " << dev.label << "\n";
    auto reader = open_stack(stack.string());
    const StackInfo& info = reader->info();
    // (c) the localizer alone, on frames already in its own host memory. It
    // runs first: its setup (the CUDA context, kernel loading, buffers) is
    // timed apart, and the pipeline after it starts on a warm device.
    const std::int64_t mem_frames = std::min(o.memory_frames, o.frames);
    double localize_s = 0, setup_s = 0, read_pinned_s = 0;
    std::int64_t mem_candidates = 0;
    // The engines, as many per GPU as fit2d's pipeline uses (or --engines-per-gpu), for the localizer alone and the
    // pipeline.
    const auto make_engines = [&] {
      return make_localize_engines(dev.device, LocalizeSettings{settings.detect, settings.fit, settings.regions, {}, settings.recenter_px},
                                   engines_per_gpu);
    };
    if (mem_frames > 0) {
      const auto t_setup = Clock::now();
      const auto localizers = make_engines();  // sharing the chunks out as the pipeline does
      std::vector<LocalizeEngine*> engines;
      for (const auto& l : localizers) engines.push_back(l.get());
      setup_s = seconds_since(t_setup);
      const auto frame_px = static_cast<std::size_t>(info.pixels_per_frame());
      HostBuffer pixels = engines.front()->allocate_host(static_cast<std::size_t>(mem_frames) * frame_px * 2);
      reader->read_raw(0, mem_frames, pixels.get());
      auto chunk_at = [&](std::int64_t first) {
        return ChunkPixels{static_cast<const std::uint16_t*>(pixels.get()) + static_cast<std::size_t>(first) * frame_px,
                           PixelType::u16, first, std::min(o.chunk_frames, mem_frames - first),
                           static_cast<int>(info.width), static_cast<int>(info.height)};
      };
      LocalizeDispatcher dispatcher(engines);
      const auto t_first = Clock::now();
      for (std::size_t e = 0; e < engines.size(); ++e) dispatcher.submit(chunk_at(0));  // warm-up: buffers grow once
      while (dispatcher.in_flight() > 0) dispatcher.take();
      setup_s += seconds_since(t_first);
      const auto t1 = Clock::now();
      for (std::int64_t f = 0; f < mem_frames; f += o.chunk_frames) {
        if (dispatcher.in_flight() == dispatcher.capacity())
          mem_candidates += static_cast<std::int64_t>(dispatcher.take().candidates.size());
        dispatcher.submit(chunk_at(f));
      }
      while (dispatcher.in_flight() > 0) mem_candidates += static_cast<std::int64_t>(dispatcher.take().candidates.size());
      localize_s = seconds_since(t1);
      // (d) The pipeline's reading alone once more, into this device's pinned chunk buffers (made before the
      // clock, handed out in turn) instead of plain memory: the destination the pipeline reads into.
      const std::size_t chunk_bytes = static_cast<std::size_t>(o.chunk_frames) * frame_px * 2;
      std::vector<HostBuffer> pool;  // FrameSource takes prefetch (2) + hold (1) buffers
      for (int b = 0; b < 4; ++b) pool.push_back(engines.front()->allocate_host(chunk_bytes));
      const auto one_pass = [&] {
        std::size_t next = 0;
        const auto lend = [&](std::size_t bytes) {
          if (next >= pool.size() || bytes > chunk_bytes) throw std::logic_error("bench localize: pinned pool too small");
          return HostBuffer(pool[next++].get(), [](void*) {});  // the pool keeps it
        };
        return time_frame_source(stack.string(), o.chunk_frames, PixelType::u16, 2, threads, nullptr, lend);
      };
      read_pinned_s = best_of_passes(stack.string(), false, 3, one_pass).seconds;
    }
    // The upload ceiling: every frame crosses PCIe once, so no localizer of these GPUs beats this rate.
    const auto frame_bytes = static_cast<std::size_t>(info.pixels_per_frame()) * 2;  // uint16
    const double upload_bytes_per_s =
        measure_upload_bandwidth(dev.device, static_cast<std::size_t>(o.chunk_frames) * frame_bytes).value_or(0.0);
    const double upload_frames_per_s = upload_bytes_per_s / static_cast<double>(frame_bytes);

    // (b) the whole pipeline to a Picasso HDF5 file, from the page cache (a
    // read pass first: a cold pass before may have emptied it), then cold.
    const LocWriterContext wctx = writer_context(info, settings.camera);
    const fs::path output = tree.path / ("locs_" + std::to_string(doc["cells"].size()) + ".hdf5");
    std::int64_t written = 0;
    auto run_pipeline = [&](double& seconds) {
      const auto t0 = Clock::now();
      auto writer = create_localization_writer(output.string(), "", wctx);
      const auto pipeline_localizers = make_engines();
      std::vector<LocalizeEngine*> localizers;
      for (const auto& l : pipeline_localizers) localizers.push_back(l.get());
      const double engines_s = seconds_since(t0);
      const PipelineSummary s =
          run_localization(*reader, FrameRange::Resolved{0, info.frames}, localizers, settings,
                           [&](std::span<const Localization> locs) { writer->append(locs); });
      const auto t_finish = Clock::now();
      writer->finish();
      seconds = seconds_since(t0);
      if (stage_profile_enabled())  // beside run_localization's own profile line
        std::fprintf(stderr, "bench localize run: %.3f s; writer and engines made in %.3f, writer finished in %.3f s\n",
                     seconds, engines_s, seconds_since(t_finish));
      written = writer->counts().written;
      return s;
    };
    time_frame_source(stack.string(), o.chunk_frames, PixelType::u16, 2, o.read_threads);
    // Best of three warm runs, as the read alone is the best of three passes: one statistic on both sides of the
    // ratio (a single run against the best pass overstated pipeline / read by the host's pass-to-pass spread).
    double pipeline_s = 1e300;
    std::vector<double> pipeline_runs, reads_beside;
    PipelineSummary summary;
    for (int run = 0; run < kPipelineRuns; ++run) {
      reads_beside.push_back(time_frame_source(stack.string(), o.chunk_frames, PixelType::u16, 2, o.read_threads));
      double seconds = 0;
      summary = run_pipeline(seconds);
      pipeline_runs.push_back(seconds);
      pipeline_s = std::min(pipeline_s, seconds);
    }
    // The floor of the warm pipeline on this host: the same pipeline (reader, engines per GPU, hand-over) with
    // engines that only upload each chunk. Every frame must be read and cross PCIe once, so where this is
    // slower than reading alone, no detection or fit can bring pipeline / read below its ratio.
    double uploads_only_s = 0;
    if (dev.device.kind == DeviceKind::cuda) {
      uploads_only_s = 1e300;
      for (int run = 0; run < kPipelineRuns; ++run) {
        const auto t0 = Clock::now();
        const auto uploaders = make_upload_only_engines(dev.device, engines_per_gpu);
        std::vector<LocalizeEngine*> engines;
        for (const auto& u : uploaders) engines.push_back(u.get());
        run_localization(*reader, FrameRange::Resolved{0, info.frames}, engines, settings,
                         [](std::span<const Localization>) {});
        uploads_only_s = std::min(uploads_only_s, seconds_since(t0));
      }
    }
    json cold_cell;
    if (o.cold) {
      const CacheDrop drop = drop_file_cache(stack.string());
      double cold_s = 0;
      const PipelineSummary cold = run_pipeline(cold_s);
      cold_cell = {{"pipeline_s", cold_s},
                   {"frames_per_s", static_cast<double>(cold.frames) / cold_s},
                   {"reader_thread_s", cold.read_seconds},
                   {"pipeline_over_read", cold_s / cold_n->seconds},
                   {"drop_method", drop.method},
                   {"resident_after", drop.resident_after}};
    }

    json cell = {{"device", dev.label},
                 // The GPUs a cuda:all row used ("cuda:all (0,1)"), else the engine's own name.
                 {"device_name", dev.device.gpus.size() > 1 ? device_label(dev.device) : summary.device},
                 {"gpus", dev.device.kind == DeviceKind::cuda ? dev.device.gpus.size() : 0},
                 {"frames", summary.frames},
                 {"candidates", summary.candidates},
                 {"localizations", summary.localizations},
                 {"written", written},
                 {"rejected", summary.rejected},
                 {"median_precision_nm", summary.median_precision_nm},
                 {"pipeline_s", pipeline_s},
                 {"pipeline_runs_s", pipeline_runs},
                 {"reader_thread_s", summary.read_seconds},
                 {"read_pinned_frames_per_s", read_pinned_s > 0 ? static_cast<double>(o.frames) / read_pinned_s : 0.0},
                 {"frames_per_s", static_cast<double>(summary.frames) / pipeline_s},
                 {"localizations_per_s", static_cast<double>(summary.localizations) / pipeline_s},
                 {"pipeline_over_read", pipeline_s / read_s},
                 {"read_beside_runs_s", reads_beside},
                 {"pipeline_over_read_paired", median_paired_ratio(pipeline_runs, reads_beside)},
                 {"uploads_only_frames_per_s", uploads_only_s > 0 ? static_cast<double>(o.frames) / uploads_only_s : 0.0},
                 {"uploads_only_over_read", uploads_only_s > 0 ? uploads_only_s / read_s : 0.0},
                 {"read_threads", threads},
                 {"memory_frames", mem_frames},
                 {"memory_candidates", mem_candidates},
                 {"localize_only_s", localize_s},
                 {"setup_s", setup_s},
                 {"localize_only_frames_per_s", localize_s > 0 ? static_cast<double>(mem_frames) / localize_s : 0.0},
                 {"upload_gb_per_s", upload_bytes_per_s / 1e9},
                 {"upload_bound_frames_per_s", upload_frames_per_s}};
    // Against the first one-GPU row: what the further GPUs add end to end.
    for (const auto& c : doc["cells"])
      if (c["gpus"] == 1 && cell["gpus"].get<std::size_t>() >= 1) {
        cell["speedup_vs_one_gpu"] = cell["frames_per_s"].get<double>() / c["frames_per_s"].get<double>();
        cell["localize_only_speedup_vs_one_gpu"] =
            c["localize_only_frames_per_s"].get<double>() > 0
                ? cell["localize_only_frames_per_s"].get<double>() / c["localize_only_frames_per_s"].get<double>()
                : 0.0;
        break;
      }
    if (cell["gpus"] == 1 && !cell.contains("speedup_vs_one_gpu")) {
      cell["speedup_vs_one_gpu"] = 1.0;
      cell["localize_only_speedup_vs_one_gpu"] = 1.0;
    }
    if (o.cold) cell["cold"] = cold_cell;
    doc["cells"].push_back(cell);
    std::error_code ec;
    fs::remove(output, ec);
    fs::remove(fs::path(output).replace_extension(".yaml"), ec);  // the .hdf5's sidecar (Picasso's name)
  }

  const auto read_line = [&](const TimedPasses& one, const TimedPasses& n) {
    const auto rate = [&](const TimedPasses& t) {
      return fmt(static_cast<double>(o.frames) / t.seconds, 4) + " frames/s (" + fmt(file_mb / t.seconds, 4) +
             " MB/s)";
    };
    return "1 thread " + rate(one) + ", " + std::to_string(threads) + " threads " + rate(n);
  };
  out << "## fit2d end to end: " << o.frames << " frames of " << o.size << "x" << o.size << " uint16, ~" << o.spots
      << " spots/frame, chunks of " << o.chunk_frames << ", " << threads << " read threads, "
      << engines_per_gpu << " localize engine(s) per GPU\n\n"
      << "Read alone as the pipeline reads (FrameSource, 2 chunks ahead), page cache warm, best of three passes: "
      << read_line(read_1, read_n) << "\n"
      << "The pipeline (warm): the best of " << kPipelineRuns << " runs\n";
  if (o.cold)
    out << "Read alone, cold file (" << cold_n->drop_method << "; at most "
        << fmt(100 * std::max(cold_1->resident_after, cold_n->resident_after)) << " % of it still cached): "
        << read_line(*cold_1, *cold_n) << "\n";
  out << "\n| device | candidates | localizations | pipeline s | frames/s | locs/s | pipeline / read | reader thread s "
         "| localizer alone frames/s | upload ceiling frames/s (GB/s) | localizer setup s | × one GPU (pipeline, alone) "
         "|\n"
      << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& c : doc["cells"])
    out << "| " << c["device_name"].get<std::string>() << " | " << c["candidates"] << " | " << c["localizations"]
        << " | " << fmt(c["pipeline_s"].get<double>()) << " | " << fmt(c["frames_per_s"].get<double>(), 4) << " | "
        << fmt(c["localizations_per_s"].get<double>(), 4) << " | " << fmt(c["pipeline_over_read"].get<double>())
        << " | " << fmt(c["reader_thread_s"].get<double>()) << " | "
        << fmt(c["localize_only_frames_per_s"].get<double>(), 4) << " | "
        << (c["upload_gb_per_s"].get<double>() > 0 ? fmt(c["upload_bound_frames_per_s"].get<double>(), 4) + " (" +
                                                         fmt(c["upload_gb_per_s"].get<double>(), 3) + ")"
                                                   : std::string("–"))
        << " | " << fmt(c["setup_s"].get<double>()) << " | "
        << (c.contains("speedup_vs_one_gpu") ? fmt(c["speedup_vs_one_gpu"].get<double>()) + ", " +
                                                   fmt(c["localize_only_speedup_vs_one_gpu"].get<double>())
                                             : std::string("–"))
        << " |\n";
  for (const auto& c : doc["cells"])
    if (c["read_pinned_frames_per_s"].get<double>() > 0)
      out << "\nRead alone into " << c["device_name"].get<std::string>()
          << "'s pinned chunk buffers (what the pipeline reads into), warm, best of three passes: "
          << fmt(c["read_pinned_frames_per_s"].get<double>(), 4) << " frames/s (into plain memory, above: "
          << fmt(doc["read_only"]["frames_per_s"].get<double>(), 4) << ")\n";
  for (const auto& c : doc["cells"])
    if (c["uploads_only_frames_per_s"].get<double>() > 0)
      out << "\nThe same pipeline on " << c["device_name"].get<std::string>()
          << " with engines that only upload each chunk (no detection or fit; the floor that reading and PCIe set on "
             "this host), warm, best of three: "
          << fmt(c["uploads_only_frames_per_s"].get<double>(), 4) << " frames/s, pipeline / read "
          << fmt(c["uploads_only_over_read"].get<double>()) << " (the full pipeline: "
          << fmt(c["pipeline_over_read"].get<double>()) << ")\n";
  for (const auto& c : doc["cells"]) {
    out << "\nEach warm pipeline run on " << c["device_name"].get<std::string>()
        << " against a read-alone pass just before it: pipeline / read "
        << fmt(c["pipeline_over_read_paired"].get<double>()) << " (the median of " << kPipelineRuns << " pairs; runs";
    for (const auto& t : c["pipeline_runs_s"]) out << " " << fmt(t.get<double>());
    out << " s, reads";
    for (const auto& t : c["read_beside_runs_s"]) out << " " << fmt(t.get<double>());
    out << " s)\n";
  }
  if (o.cold) {
    out << "\nCold file (its cached pages dropped before the pass):\n\n"
        << "| device | pipeline s | frames/s | read alone frames/s (" << threads << " threads) | pipeline / read |\n"
        << "|---|---|---|---|---|\n";
    for (const auto& c : doc["cells"])
      out << "| " << c["device_name"].get<std::string>() << " | " << fmt(c["cold"]["pipeline_s"].get<double>()) << " | "
          << fmt(c["cold"]["frames_per_s"].get<double>(), 4) << " | "
          << fmt(static_cast<double>(o.frames) / cold_n->seconds, 4) << " | "
          << fmt(c["cold"]["pipeline_over_read"].get<double>()) << " |\n";
  }
  out << "\nMachine: " << doc["machine"]["cpu"].get<std::string>() << " (" << doc["machine"]["cpu_threads"]
      << " threads)";
  for (const auto& g : doc["machine"]["gpus"]) out << "; GPU " << g["index"] << ": " << g["name"].get<std::string>();
  out << "\n";
  if (!o.json.empty()) write_file_atomically(o.json, doc.dump(2) + "\n");
}

}  // namespace nanoscopy
