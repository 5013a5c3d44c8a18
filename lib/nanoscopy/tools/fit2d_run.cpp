#include "nanoscopy/tools/fit2d_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <iomanip>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/sibling_path.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/loc/loc_formats.hpp"
#include "nanoscopy/loc/pipeline.hpp"
#include "nanoscopy/loc/roi_tracker.hpp"
#include "nanoscopy/io/table_writer.hpp"
#include "nanoscopy/loc/track.hpp"

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

// The file's pixel size wins over the default, but not over a value the user set.
Camera camera(const Params& p, const StackInfo& info) {
  Camera c;
  c.baseline = p.get_real("Camera/Baseline");
  c.sensitivity = p.get_real("Camera/Sensitivity");
  c.em_gain = p.get_real("Camera/Gain");
  c.qe = p.get_real("Camera/Qe");
  c.pixel_size_nm = p.get_real("Camera/Pixelsize");
  if (p.source("Camera/Pixelsize").file == "default" && info.pixel_size_nm > 0) c.pixel_size_nm = info.pixel_size_nm;
  c.validate(p.source("Camera/Gain").describe());
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

}  // namespace

void run_fit2d(const Fit2dOptions& options, ToolContext& ctx, std::ostream& out) {
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
  settings.camera = camera(p, info);
  settings.filter = {p.get_real("Filter/min sigma"), p.get_real("Filter/max sigma"), p.get_real("Filter/min photons"),
                     p.get_real("Filter/max precision")};
  settings.chunk_frames = p.get_int("Input/chunk frames");
  if (!options.regions_file.empty()) settings.regions = parse_regions(options.regions_file, info.width, info.height);
  settings.quiet = ctx.quiet;

  const fs::path input_path(info.path);
  if (!options.roi_file.empty()) {
    const std::string output = options.output.empty() ? sibling_path(input_path, "_roi_drift.csv") : options.output;
    // With --stream the summary goes to stderr: stdout carries only the per-frame lines.
    run_roi_mode(options, ctx, *reader, range, settings.camera, settings.fit, settings.detect.box, output,
                 options.stream ? std::cerr : out);
    return;
  }
  const std::string output = options.output.empty() ? sibling_path(input_path, "_locs.hdf5") : options.output;
  const std::string format = p.get_string("Output/format") == "auto" ? "" : p.get_string("Output/format");
  LocWriterContext wctx = writer_context(info, settings.camera);
  wctx.parameters = provenance(p, info.path);
  // Outputs are opened (and their directories checked) before any work.
  auto writer = create_localization_writer(output, format, wctx);

  std::unique_ptr<TableWriter> track_writer;
  std::unique_ptr<FiducialTracker> tracker;
  const fs::path out_path(output);
  if (options.track) {
    TrackSettings ts;
    ts.radius = p.get_real("Tracking/radius");
    ts.max_gap = p.get_int("Tracking/max gap");
    ts.min_length = p.get_int("Tracking/min length");
    ts.min_presence = p.get_real("Tracking/min presence");
    ts.validate("Tracking");
    track_writer = create_marker_track_writer(sibling_path(out_path, "_tracks.csv"));
    tracker = std::make_unique<FiducialTracker>(ts, info.frames, info.path, marker_track_sink(*track_writer));
  }

  const auto summary = run_localization(*reader, range, ctx.device, settings, [&](std::span<const Localization> locs) {
    writer->append(locs);
    if (tracker) tracker->add(locs);
  });

  std::string drift_files;
  if (tracker) {
    const DriftTrace drift = tracker->finish();
    write_picasso_drift(sibling_path(out_path, "_drift.txt"), drift);
    write_drift_csv(sibling_path(out_path, "_drift.csv"), drift, settings.camera.pixel_size_nm);
    track_writer->finish();
    drift_files = sibling_path(out_path, "_drift.txt") + ", " + sibling_path(out_path, "_drift.csv") + ", " +
                  sibling_path(out_path, "_tracks.csv") + " (" + std::to_string(tracker->summary().markers) + " markers)";
  }
  writer->finish();

  const auto& counts = writer->counts();
  out << "fit2d: " << info.path << ": " << summary.frames << " frames (" << info.width << "x" << info.height << " "
      << to_string(info.type) << ") on " << summary.device << "\n"
      << "  localizations:      " << counts.written << " written (" << summary.candidates << " candidates, "
      << summary.rejected << " rejected by the filter";
  if (counts.dropped() > 0) out << ", " << counts.dropped() << " dropped by " << loc_format_name(writer->format()) << "'s rules";
  out << ")\n"
      << "  median precision:   " << std::setprecision(3) << summary.median_precision_nm << " nm (pixel size "
      << settings.camera.pixel_size_nm << " nm)\n"
      << "  time:               " << summary.seconds << " s, " << std::setprecision(4)
      << static_cast<double>(summary.frames) / summary.seconds << " frames/s (reading took " << std::setprecision(3)
      << summary.read_seconds << " s)\n"
      << "  output:             ";
  for (std::size_t i = 0; i < writer->files().size(); ++i) out << (i ? ", " : "") << writer->files()[i];
  out << "\n";
  if (!drift_files.empty()) out << "  drift:              " << drift_files << "\n";
}

}  // namespace nanoscopy
