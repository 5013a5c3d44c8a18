#include "nanoscopy/fit2d/cli.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <iomanip>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

#include "nanoscopy/cluster/fingerprint.hpp"
#include "nanoscopy/cluster/mpi.hpp"
#include "nanoscopy/cluster/part_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/sibling_path.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/loc/loc_formats.hpp"
#include "nanoscopy/loc/pipeline.hpp"
#include "nanoscopy/loc/roi_tracker.hpp"
#include "nanoscopy/io/table_writer.hpp"
#include "nanoscopy/loc/track.hpp"
#include "nanoscopy/fit2d/output.hpp"
#include "nanoscopy/fit2d/partial.hpp"

namespace nanoscopy {
namespace {

namespace fs = std::filesystem;

FitSettings fit_settings(const Params& p) {
  FitSettings s;
  s.max_iterations = static_cast<int>(p.get_int("Fit/max iterations"));
  s.max_error = p.get_real("Fit/max error");
  s.min_delta = p.get_real("Fit/min delta");
  s.min_step = p.get_real("Fit/min step");
  s.model = p.get_string("Fit/model") == "sampled" ? ShapeModel::sampled : ShapeModel::integrated;
  return s;
}

// "movie.tif" or "movie.tif, movie.yaml": where the movie's own values come from.
std::string movie_files(const StackInfo& info) {
  return info.metadata_path.empty() ? info.path : info.path + ", " + info.metadata_path;
}

// The movie's own camera (its metadata .yaml: Baseline, Sensitivity, Gain, Qe;
// the pixel size from the image file or that .yaml) wins over the defaults, but
// not over a value the user set. `from_movie` lists the keys taken from the movie.
Camera camera(const Params& p, const StackInfo& info, std::vector<std::string>& from_movie) {
  const auto value = [&](const char* key) {
    const std::string path = std::string("Camera/") + key;
    double v = p.get_real(path);
    if (p.source(path).file != "default") return v;
    if (std::string(key) == "Pixelsize") {
      if (info.pixel_size_nm > 0) from_movie.push_back(key);
      return info.pixel_size_nm > 0 ? info.pixel_size_nm : v;
    }
    if (const auto m = info.metadata_number(key)) {
      from_movie.push_back(key);
      v = *m;
    }
    return v;
  };
  Camera c;
  c.baseline = value("Baseline");
  c.sensitivity = value("Sensitivity");
  c.em_gain = value("Gain");
  c.qe = value("Qe");
  c.pixel_size_nm = value("Pixelsize");
  c.validate(from_movie.empty() ? p.source("Camera/Gain").describe() : movie_files(info));
  return c;
}

// Every parameter in effect, flattened "Section/key" -> value, for the YAML.
std::vector<std::pair<std::string, std::string>> provenance(const Params& p, const std::string& input) {
  std::vector<std::pair<std::string, std::string>> out{{"Input file", input}};
  const nlohmann::json values = p.to_json();
  for (const auto& spec : p.schema().specs()) {
    const nlohmann::json* node = &values;
    std::string rest = spec.path;
    for (auto slash = rest.find('/'); slash != std::string::npos; slash = rest.find('/')) {
      node = &node->at(rest.substr(0, slash));
      rest = rest.substr(slash + 1);
    }
    const auto& leaf = node->at(rest);
    out.emplace_back(spec.path, leaf.is_string() ? leaf.get<std::string>() : leaf.dump());
  }
  return out;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(std::min<double>(static_cast<double>(v.size() - 1), q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

// --roi: the fixed marker ROIs fitted in every frame, warm-started; one drift
// row per frame (and, with --stream, one line on stdout as soon as it is known).
void run_roi_mode(const Fit2dOptions& options, ToolContext& ctx, StackReader& reader, FrameRange::Resolved range,
                  const Camera& cam, const FitSettings& fit, int box, const std::string& output, std::ostream& out) {
  const StackInfo& info = reader.info();
  auto rois = parse_roi_file(options.roi_file, info.width, info.height, box);
  auto backend = make_fit_backend(ctx.device, fit);
  RoiTracker tracker(std::move(rois), *backend, cam.pixel_size_nm, info.width, info.height);
  auto table = create_csv_writer(output, {{"frame", ColumnType::u32}, {"dx [nm]", ColumnType::f64},
                                          {"dy [nm]", ColumnType::f64}, {"markers", ColumnType::i32},
                                          {"status", ColumnType::i32}},
                                 CsvOptions{false});
  std::vector<double> latency_us;
  std::int64_t lost = 0;
  auto last = std::chrono::steady_clock::now();
  const auto start = last;
  track_rois(reader, range, tracker, [&](const RoiFrameResult& r) {
    const auto now = std::chrono::steady_clock::now();
    latency_us.push_back(std::chrono::duration<double, std::micro>(now - last).count());  // read + cut + fit
    last = now;
    if (r.status == RoiFrameStatus::lost) ++lost;
    const double row[] = {static_cast<double>(r.frame), r.dx_nm, r.dy_nm, static_cast<double>(r.markers),
                          static_cast<double>(static_cast<int>(r.status))};
    table->append(row);
    if (options.stream) std::cout << format_roi_line(r) << std::endl;  // flushed: a stage controller reads it now
  });
  table->finish();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out << "fit2d --roi: " << info.path << ": " << range.count() << " frames, " << tracker.rois().rois.size()
      << " marker ROIs of " << tracker.rois().width << "x" << tracker.rois().height << " on " << backend->name() << "\n"
      << "  per-frame latency:  p50 " << percentile(latency_us, 0.5) << " us, p99 " << percentile(latency_us, 0.99)
      << " us (read, cut, fit)\n"
      << "  frames lost:        " << lost << "\n"
      << "  time:               " << seconds << " s\n"
      << "  output:             " << output << " (frame, dx [nm], dy [nm], markers, status 0 ok 1 partial 2 lost)\n";
}


// What shapes the localizations (not where they are written): parts made with
// different values must not be merged.
std::string parameter_fingerprint(const Params& p, const Camera& camera, const std::string& regions_file) {
  Fnv f;
  for (const auto& [key, value] : provenance(p, ""))
    for (const char* section : {"Camera/", "Detection/", "Fit/", "Filter/"})
      if (key.rfind(section, 0) == 0) f.add(key + "=" + value + ";");
  f.add(camera.pixel_size_nm);
  f.add(file_fingerprint(regions_file));
  return f.hex();
}

// fit2d --frames A:B --partial part.h5: the localizations of A:B and where they came from.
void run_partial(const std::string& path, StackReader& reader, FrameRange::Resolved range, const Device& device,
                 const PipelineSettings& settings, const LocWriterContext& wctx, const std::string& parameters,
                 bool quiet, std::ostream& out) {
  const StackInfo& info = reader.info();
  PartOrigin origin;
  origin.stack_name = fs::path(info.path).filename().string();
  origin.stack_fingerprint = stack_fingerprint(reader);
  origin.parameter_fingerprint = parameters;
  origin.stack_frames = info.frames;
  origin.begin = range.first;
  origin.end = range.last;
  std::vector<double> rows;
  auto localizer = make_chunk_localizer(device, settings.detect, settings.fit);
  const auto summary = run_localization(reader, range, *localizer, settings, [&](std::span<const Localization> locs) {
    pack_localizations(locs, rows);
  });
  TextAttributes extra = writer_context_attributes(wctx);
  extra.insert(extra.end(), {{"input", info.path},
                             {"candidates", std::to_string(summary.candidates)},
                             {"rejected", std::to_string(summary.rejected)}});
  auto table = create_hdf5_table_writer(path, "locs", fit2d_part_columns(), part_attributes(kFit2dPartFormat, origin, extra));
  table->append(rows);
  table->finish();
  if (!quiet)
    out << "fit2d: frames " << range.first << ":" << range.last << " of " << info.path << ": "
        << summary.localizations << " localizations on " << summary.device << " -> " << path << " (merge with fit2d merge)\n";
}

}  // namespace

void run_fit2d_cli(const Fit2dOptions& options, ToolContext& ctx, std::ostream& out) {
  const auto start = std::chrono::steady_clock::now();
  if (options.input.empty()) throw UsageError("command line", "no input stack given (see fit2d --help)");
  const Params& p = ctx.params;
  auto reader = open_stack(options.input);
  const StackInfo& info = reader->info();
  const auto range = ctx.frames.resolve(info.frames, info.path);

  PipelineSettings settings;
  settings.detect.box = static_cast<int>(p.get_int("Detection/box"));
  if (settings.detect.box % 2 == 0)
    throw UsageError(p.source("Detection/box").describe(), "the box must be odd (3, 5, 7, ...), not " +
                                                              std::to_string(settings.detect.box));
  settings.detect.threshold = p.get_real("Detection/threshold");
  settings.fit = fit_settings(p);
  std::vector<std::string> camera_from_movie;
  settings.camera = camera(p, info, camera_from_movie);
  settings.filter = {p.get_real("Filter/min sigma"), p.get_real("Filter/max sigma"), p.get_real("Filter/min photons"),
                     p.get_real("Filter/max precision")};
  settings.chunk_frames = p.get_int("Input/chunk frames");
  if (!options.regions_file.empty()) settings.regions = parse_regions(options.regions_file, info.width, info.height);
  settings.quiet = ctx.quiet;

  const fs::path input_path(info.path);
  if (!options.roi_file.empty()) {
    if (!options.partial.empty() || mpi_world().size > 1)
      throw UsageError("--roi", "marker ROIs are followed frame by frame in one process (no --partial, no mpirun)");
    const std::string output = options.output.empty() ? sibling_path(input_path, "_roi_drift.csv") : options.output;
    // With --stream the summary goes to stderr: stdout carries only the per-frame lines.
    run_roi_mode(options, ctx, *reader, range, settings.camera, settings.fit, settings.detect.box, output,
                 options.stream ? std::cerr : out);
    return;
  }
  const std::string format = p.get_string("Output/format") == "auto" ? "" : p.get_string("Output/format");
  LocWriterContext wctx = writer_context(info, settings.camera);
  wctx.fit_diagnostics = p.get_bool("Output/fit diagnostics");
  // The camera in effect is written once, under Picasso's names (Pixelsize, Baseline, ...): the
  // Camera/ parameters are left out of the provenance so the two never disagree.
  for (auto& entry : provenance(p, info.path))
    if (entry.first.rfind("Camera/", 0) != 0) wctx.parameters.push_back(std::move(entry));
  const MpiWorld& world = mpi_world();
  if (!options.partial.empty()) {
    if (world.size > 1) throw UsageError("mpirun", "--partial writes one part per process; start it without mpirun");
    if (options.track) throw UsageError("--partial", "markers are tracked over the whole stack: give --track to fit2d merge");
    run_partial(options.partial, *reader, range, ctx.device, settings, wctx,
                parameter_fingerprint(p, settings.camera, options.regions_file), ctx.quiet, out);
    return;
  }
  const std::string output = options.output.empty() ? sibling_path(input_path, "_locs.hdf5") : options.output;
  // Outputs are opened (and their directories checked) before any work; under
  // mpirun only rank 0 writes.
  std::unique_ptr<Fit2dOutput> sink;
  if (world.rank == 0) {
    sink = std::make_unique<Fit2dOutput>(output, format, wctx, options.track, p, info.path);
    // movie.tif -o movie.csv would put the localizations' .yaml over the movie's own.
    for (const auto& file : sink->writer().files())
      if (!info.metadata_path.empty() && fs::weakly_canonical(file) == fs::weakly_canonical(info.metadata_path))
        throw UsageError(file, "is the movie's own metadata: name the localizations differently (e.g. " +
                                   sibling_path(input_path, "_locs" + fs::path(output).extension().string()) + ")");
  }

  PipelineSummary summary;
  if (world.size > 1) {
    // mpirun -n N: rank r localizes its share of the frames; rank 0 writes every rank's rows in rank order.
    std::vector<double> rows;
    auto localizer = make_chunk_localizer(device_for_rank(ctx.device, world), settings.detect, settings.fit);
    summary = run_localization(*reader, rank_frames(range, world), *localizer, settings,
                               [&](std::span<const Localization> locs) { pack_localizations(locs, rows); });
    rows.insert(rows.begin(), {static_cast<double>(summary.candidates), static_cast<double>(summary.rejected)});
    const auto all = mpi_gather(rows);
    if (world.rank != 0) {
      mpi_finish();
      return;
    }
    summary.candidates = summary.rejected = 0;
    for (const auto& rank_rows : all) {
      summary.candidates += static_cast<std::int64_t>(rank_rows.at(0));
      summary.rejected += static_cast<std::int64_t>(rank_rows.at(1));
      sink->append(unpack_localizations(std::span<const double>(rank_rows).subspan(2)));
    }
    summary.frames = range.count();
    summary.median_precision_nm = sink->median_precision_nm();
    summary.device += " (" + std::to_string(world.size) + " MPI ranks)";
    summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    auto localizer = make_chunk_localizer(ctx.device, settings.detect, settings.fit);
    summary = run_localization(*reader, range, *localizer, settings,
                               [&](std::span<const Localization> locs) { sink->append(locs); });
    // The engine's set-up counts, as it did when the pipeline built the engine itself.
    summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  sink->finish();
  out << "fit2d: " << info.path << ": " << summary.frames << " frames (" << info.width << "x" << info.height << " "
      << to_string(info.type) << ") on " << summary.device << "\n";
  print_camera(out, settings.camera, camera_from_movie, movie_files(info));
  print_fit2d_outputs(out, *sink, summary.candidates, summary.rejected, summary.median_precision_nm,
                      settings.camera.pixel_size_nm);
  out << "  time:               " << std::setprecision(3) << summary.seconds << " s, " << std::setprecision(4)
      << static_cast<double>(summary.frames) / summary.seconds << " frames/s (reading took " << std::setprecision(3)
      << summary.read_seconds << " s)\n";
  mpi_finish();
}

}  // namespace nanoscopy
