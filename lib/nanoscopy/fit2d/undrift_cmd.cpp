#include "nanoscopy/fit2d/undrift_cmd.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <ostream>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/core/sibling_path.hpp"
#include "nanoscopy/fit2d/settings.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/loc/undrift/drift_files.hpp"
#include "nanoscopy/loc/undrift/fiducial.hpp"
#include "nanoscopy/loc/undrift/rcc.hpp"
#include "nanoscopy/loc/undrift/segment_choice.hpp"

namespace nanoscopy {
namespace {

double rms_nm(const std::vector<double>& v, double pixel_nm) {
  double s = 0;
  for (double d : v) s += d * d;
  return v.empty() ? 0.0 : std::sqrt(s / static_cast<double>(v.size())) * pixel_nm;
}

// "auto" → 0, or a whole number ≥ 1 of frames.
std::int64_t segment_value(const Params& p) {
  const std::string text = p.get_string("Undrift/segment");
  if (text == "auto") return 0;
  std::int64_t v = 0;
  std::size_t used = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || used == 0 || v < 1)
    throw UsageError(p.source("Undrift/segment").named("--segment"),
                     "'" + text + "' is not a segment: auto, or frames per segment (a whole number >= 1)");
  return v;
}

// How the user gave `path`: the option as typed ("--undrift-pixel"), the file's line, or `fallback` (default).
RccOption rcc_option(const Params& p, const std::string& path, const std::string& fallback) {
  const ParamSource& source = p.source(path);
  return {source.named(fallback), source.file != "default"};
}

}  // namespace

UndriftStepSettings undrift_step_settings(const Params& p) {
  UndriftStepSettings s;
  s.method = p.get_string("Undrift/method");
  s.segment = segment_value(p);
  s.grid_pixel_nm = p.get_real("Undrift/pixel");
  s.max_grid = p.get_int("Undrift/max grid");
  s.max_drift_nm = p.get_real("Undrift/max drift");
  s.max_error_nm = p.get_real("Undrift/max error");
  s.smooth = p.get_int("Undrift/smooth");
  s.rcc_options.pixel = rcc_option(p, "Undrift/pixel", "--pixel");
  s.rcc_options.max_grid = rcc_option(p, "Undrift/max grid", "--max-grid");
  s.rcc_options.max_drift = rcc_option(p, "Undrift/max drift", "--max-drift");
  // The schema's ranges hold these already; the checks here name the source for a caller that built Params
  // by other means.
  if (s.method != "rcc" && s.method != "fiducial" && s.method != "combined")
    throw UsageError(p.source("Undrift/method").describe(), "'" + s.method + "': rcc, fiducial or combined");
  if (s.smooth < 3)
    throw UsageError(p.source("Undrift/smooth").describe(), "the smoothing window must be at least 3 frames");
  if (s.markers()) s.track = fit2d_track_settings(p);
  return s;
}

UndriftStepSettings resolve_undrift_segment(UndriftStepSettings settings, std::int64_t frames,
                                            std::int64_t localizations, std::string& why) {
  why.clear();
  if (settings.segment > 0) return settings;
  const RccSegmentChoice choice = choose_rcc_segment(frames, localizations);
  settings.segment = choice.segment_frames;
  why = choice.why;
  return settings;
}

RccSettings rcc_step_settings(const UndriftStepSettings& us, double pixel_size_nm, bool quiet) {
  RccSettings s;
  s.segment_frames = us.segment;
  s.pixel_px = us.grid_pixel_nm > 0 ? us.grid_pixel_nm / pixel_size_nm : 0.2;
  s.max_grid = us.max_grid;
  s.max_drift_px = us.max_drift_nm / pixel_size_nm;
  s.max_error_px = us.max_error_nm / pixel_size_nm;
  s.quiet = quiet;
  s.options = us.rcc_options;
  s.camera_px_nm = pixel_size_nm;
  s.validate();
  return s;
}

void check_undrift_frames(const UndriftStepSettings& settings, std::int64_t frames, const std::string& where) {
  if (!settings.rcc()) return;
  // auto: the localizations are not known yet, the shortest segments auto takes are.
  static_cast<void>(rcc_segments(frames, settings.segment > 0 ? settings.segment : kAutoMinFrames, where));
}

void plan_fit2d_undrift_outputs(const std::string& output, const std::string& format) {
  plan_localization_output(output, format, "the undrifted localizations");
  plan_output(sibling_path(output, "_drift.txt"), "the drift table (_drift.txt)");
  plan_output(sibling_path(output, "_drift.csv"), "the drift table (_drift.csv)");
  plan_output(sibling_path(output, "_drift.png"), "the drift plot (_drift.png)");
}

void run_fit2d_undrift(const Fit2dUndriftOptions& o, ToolContext& ctx, std::ostream& out) {
  UndriftStepSettings us = undrift_step_settings(ctx.params);
  const std::string& method = us.method;
  const bool rcc = us.rcc(), markers = us.markers();
  loc_format_for(o.output, o.format);  // an unknown format fails before the reading
  plan_localization_input(o.input);
  plan_fit2d_undrift_outputs(o.output, o.format);
  check_run_plan();

  LocReadOptions read;
  read.pixel_size_nm = o.pixel_size_nm;
  LocalizationFile file = read_localization_file(o.input, read);
  if (!(file.pixel_size_nm > 0)) throw UsageError(o.input, "the file does not say its pixel size: give --pixel-size");
  if (file.locs.empty()) throw InputError(o.input, "no localizations to undrift");
  if (file.locs.size() == 1) throw InputError(o.input, "one localization: a drift needs many");
  const double px = file.pixel_size_nm;
  std::int64_t frames = file.frames;
  for (const Localization& l : file.locs) frames = std::max(frames, l.frame + 1);
  std::string segment_why;
  us = resolve_undrift_segment(us, frames, static_cast<std::int64_t>(file.locs.size()), segment_why);
  if (rcc && !segment_why.empty() && !ctx.quiet) std::cerr << "fit2d undrift: " << o.input << ": " << segment_why << "\n";
  // The segments over these frames, named by the option that set them (as the pipeline checks them).
  check_undrift_frames(us, frames, o.input + ", " + ctx.params.source("Undrift/segment").named("--segment"));

  RccResult r;
  if (rcc) {
    r = undrift_rcc(file.locs, frames, rcc_step_settings(us, px, ctx.quiet), o.input,
                    [&](const CorrelationGeometry& g) { return make_correlation_engine(ctx.device, g); });
  }
  FiducialDrift f;
  if (markers) f = fiducial_drift(file.locs, frames, us.track, us.smooth, o.input);
  const DriftTrace drift = method == "rcc" ? r.trace : method == "fiducial" ? f.smooth : combine_drift(r.trace, f.raw, us.smooth);

  apply_drift(file.locs, drift);
  LocWriterContext context = writer_context(file, "nanoscopy fit2d undrift");
  context.frames = std::max(context.frames, frames);
  context.parameters = {{"Input file", o.input}, {"Undrift method", method}};
  if (rcc) context.parameters.push_back({"Undrift segmentation", std::to_string(us.segment)});
  if (rcc && !segment_why.empty()) context.parameters.push_back({"Undrift segment choice", segment_why});
  if (markers) context.parameters.push_back({"Undrift smoothing", std::to_string(us.smooth)});
  const std::string txt = sibling_path(o.output, "_drift.txt"), csv = sibling_path(o.output, "_drift.csv"),
                    png = sibling_path(o.output, "_drift.png");
  OutputGroup outputs;  // the localizations and the drift files appear together
  const LocWriteCounts counts = write_localizations(o.output, o.format, context, file.locs);
  write_picasso_drift(txt, drift);
  write_undrift_csv(csv, drift, px, markers);
  write_drift_plot(png, "fit2d undrift (" + method + "): " + std::filesystem::path(o.input).filename().string(),
                   drift, px, markers ? &f.raw : nullptr);
  outputs.commit();

  out << "fit2d undrift: " << o.input << ": " << file.locs.size() << " localizations in " << frames << " frames, "
      << method << "\n";
  if (rcc) {
    std::int64_t solved = 0;
    for (const RccSegment& s : r.segments) solved += s.solved ? 1 : 0;
    out << "  RCC:                " << r.segments.size() << " segments of ~" << us.segment << " frames (" << solved
        << " solved), " << r.pairs << " pairs (" << r.pairs_dropped << " dropped as outliers, residual RMS "
        << r.rms_residual_px * px << " nm, limit " << r.threshold_px * px << " nm)\n"
        << "  grid:               " << r.geometry.width << " x " << r.geometry.height << " pixels of "
        << r.grid_pixel_px * px << " nm, spectra " << static_cast<double>(r.spectrum_bytes) / 1048576.0 << " MB, "
        << r.engine << "\n";
  }
  if (markers)
    out << "  markers:            " << f.summary.markers << " (smoothed over " << us.smooth << " frames)\n";
  out << "  drift RMS:          x " << rms_nm(drift.dx, px) << " nm, y " << rms_nm(drift.dy, px) << " nm\n"
      << "  wrote:              " << counts.written << " to " << o.output;
  if (counts.dropped() > 0) out << " (" << counts.dropped() << " dropped by the format's rules)";
  out << "; " << txt << ", " << csv << ", " << png << "\n";
}

}  // namespace nanoscopy
