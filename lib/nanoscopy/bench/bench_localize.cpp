#include "nanoscopy/bench/bench_localize.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/config.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/loc/localize_dispatch.hpp"
#include "nanoscopy/loc/localize_engine.hpp"
#include "nanoscopy/loc/pipeline.hpp"
#include "nanoscopy/sim/movie.hpp"
#include "nanoscopy/bench/bench_common.hpp"

namespace nanoscopy {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

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

// Reads every frame with read_raw in chunks; returns seconds.
double time_read(const fs::path& stack, std::int64_t chunk_frames) {
  auto reader = open_stack(stack.string());
  const StackInfo& info = reader->info();
  std::vector<std::uint16_t> buffer(static_cast<std::size_t>(chunk_frames * info.pixels_per_frame()));
  const auto t0 = Clock::now();
  for (std::int64_t f = 0; f < info.frames; f += chunk_frames)
    reader->read_raw(f, std::min(chunk_frames, info.frames - f), buffer.data());
  return seconds_since(t0);
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

  // (a) the read alone, page cache warm: one untimed pass first, then the best of three.
  time_read(stack, o.chunk_frames);
  double read_s = 1e300;
  for (int r = 0; r < 3; ++r) read_s = std::min(read_s, time_read(stack, o.chunk_frames));
  const double file_mb = static_cast<double>(fs::file_size(stack)) / 1e6;

  PipelineSettings settings;
  settings.camera.baseline = movie.baseline;
  settings.camera.sensitivity = movie.sensitivity;
  settings.camera.pixel_size_nm = movie.pixel_size_nm;
  settings.chunk_frames = o.chunk_frames;
  settings.quiet = true;

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
                       {"memory_frames", std::min(o.memory_frames, o.frames)},
                       {"box", settings.detect.box},
                       {"threshold", settings.detect.threshold},
                       {"seed", seed}};
  doc["stack"] = {{"file_mb", file_mb}, {"write_s", write_s}};
  doc["read_only"] = {{"seconds", read_s},
                      {"frames_per_s", static_cast<double>(o.frames) / read_s},
                      {"mb_per_s", file_mb / read_s}};
  doc["cells"] = json::array();

  for (const auto& dev : devices) {
    if (!quiet) std::cerr << "bench localize: " << dev.label << "\n";
    auto reader = open_stack(stack.string());
    const StackInfo& info = reader->info();
    // (c) the localizer alone, on frames already in its own host memory. It
    // runs first: its setup (the CUDA context, kernel loading, buffers) is
    // timed apart, and the pipeline after it starts on a warm device.
    const std::int64_t mem_frames = std::min(o.memory_frames, o.frames);
    double localize_s = 0, setup_s = 0;
    std::int64_t mem_candidates = 0;
    if (mem_frames > 0) {
      const auto t_setup = Clock::now();
      // One engine per GPU of cuda:all, sharing the chunks out as fit2d's pipeline does.
      const auto localizers =
          make_localize_engines(dev.device, LocalizeSettings{settings.detect, settings.fit, settings.regions});
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
    }

    // (b) the whole pipeline to a Picasso HDF5 file.
    const LocWriterContext wctx = writer_context(info, settings.camera);
    const fs::path output = tree.path / ("locs_" + std::to_string(doc["cells"].size()) + ".hdf5");
    const auto t0 = Clock::now();
    auto writer = create_localization_writer(output.string(), "", wctx);
    const auto pipeline_localizers =
        make_localize_engines(dev.device, LocalizeSettings{settings.detect, settings.fit, settings.regions});
    std::vector<LocalizeEngine*> localizers;
    for (const auto& l : pipeline_localizers) localizers.push_back(l.get());
    const PipelineSummary summary =
        run_localization(*reader, FrameRange::Resolved{0, info.frames}, localizers, settings,
                         [&](std::span<const Localization> locs) { writer->append(locs); });
    writer->finish();
    const double pipeline_s = seconds_since(t0);
    const std::int64_t written = writer->counts().written;

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
                 {"reader_thread_s", summary.read_seconds},
                 {"frames_per_s", static_cast<double>(summary.frames) / pipeline_s},
                 {"localizations_per_s", static_cast<double>(summary.localizations) / pipeline_s},
                 {"pipeline_over_read", pipeline_s / read_s},
                 {"memory_frames", mem_frames},
                 {"memory_candidates", mem_candidates},
                 {"localize_only_s", localize_s},
                 {"setup_s", setup_s},
                 {"localize_only_frames_per_s", localize_s > 0 ? static_cast<double>(mem_frames) / localize_s : 0.0}};
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
    doc["cells"].push_back(cell);
    std::error_code ec;
    fs::remove(output, ec);
    fs::remove(fs::path(output).replace_extension(".yaml"), ec);  // the .hdf5's sidecar (Picasso's name)
  }

  out << "## fit2d end to end: " << o.frames << " frames of " << o.size << "x" << o.size << " uint16, ~" << o.spots
      << " spots/frame, chunks of " << o.chunk_frames << "\n\n"
      << "Read alone (page cache warm, read_raw): " << fmt(read_s) << " s = "
      << fmt(static_cast<double>(o.frames) / read_s, 4) << " frames/s, " << fmt(file_mb / read_s, 4) << " MB/s\n\n"
      << "| device | candidates | localizations | pipeline s | frames/s | locs/s | pipeline / read | reader thread s "
         "| localizer alone frames/s | localizer setup s | × one GPU (pipeline, alone) |\n"
      << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& c : doc["cells"])
    out << "| " << c["device_name"].get<std::string>() << " | " << c["candidates"] << " | " << c["localizations"]
        << " | " << fmt(c["pipeline_s"].get<double>()) << " | " << fmt(c["frames_per_s"].get<double>(), 4) << " | "
        << fmt(c["localizations_per_s"].get<double>(), 4) << " | " << fmt(c["pipeline_over_read"].get<double>())
        << " | " << fmt(c["reader_thread_s"].get<double>()) << " | "
        << fmt(c["localize_only_frames_per_s"].get<double>(), 4) << " | " << fmt(c["setup_s"].get<double>()) << " | "
        << (c.contains("speedup_vs_one_gpu") ? fmt(c["speedup_vs_one_gpu"].get<double>()) + ", " +
                                                   fmt(c["localize_only_speedup_vs_one_gpu"].get<double>())
                                             : std::string("–"))
        << " |\n";
  out << "\nMachine: " << doc["machine"]["cpu"].get<std::string>() << " (" << doc["machine"]["cpu_threads"]
      << " threads)";
  for (const auto& g : doc["machine"]["gpus"]) out << "; GPU " << g["index"] << ": " << g["name"].get<std::string>();
  out << "\n";
  if (!o.json.empty()) write_file_atomically(o.json, doc.dump(2) + "\n");
}

}  // namespace nanoscopy
