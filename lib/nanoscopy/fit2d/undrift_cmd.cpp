#include "nanoscopy/fit2d/undrift_cmd.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/sibling_path.hpp"
#include "nanoscopy/fit2d/output.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/loc/undrift/drift_files.hpp"
#include "nanoscopy/loc/undrift/fiducial.hpp"
#include "nanoscopy/loc/undrift/rcc.hpp"

namespace nanoscopy {
namespace {

double rms_nm(const std::vector<double>& v, double pixel_nm) {
  double s = 0;
  for (double d : v) s += d * d;
  return v.empty() ? 0.0 : std::sqrt(s / static_cast<double>(v.size())) * pixel_nm;
}

}  // namespace

void run_fit2d_undrift(const Fit2dUndriftOptions& o, ToolContext& ctx, std::ostream& out) {
  if (o.method != "rcc" && o.method != "fiducial" && o.method != "combined")
    throw UsageError("--method", "'" + o.method + "': rcc, fiducial or combined");
  const bool rcc = o.method != "fiducial", markers = o.method != "rcc";
  if (o.segment < 1) throw UsageError("--segment", "a segment must hold at least one frame");
  if (o.smooth < 3) throw UsageError("--smooth", "the smoothing window must be at least 3 frames");
  const TrackSettings track = markers ? tracking_settings(ctx.params) : TrackSettings{};
  loc_format_for(o.output, o.format);  // an unknown format fails before the reading

  LocReadOptions read;
  read.pixel_size_nm = o.pixel_size_nm;
  LocalizationFile file = read_localization_file(o.input, read);
  if (!(file.pixel_size_nm > 0)) throw UsageError(o.input, "the file does not say its pixel size: give --pixel-size");
  if (file.locs.empty()) throw InputError(o.input, "no localizations to undrift");
  if (file.locs.size() == 1) throw InputError(o.input, "one localization: a drift needs many");
  const double px = file.pixel_size_nm;
  std::int64_t frames = file.frames;
  for (const Localization& l : file.locs) frames = std::max(frames, l.frame + 1);

  RccResult r;
  if (rcc) {
    RccSettings s;
    s.segment_frames = o.segment;
    s.pixel_px = o.grid_pixel_nm > 0 ? o.grid_pixel_nm / px : 0.2;
    if (o.grid_pixel_nm < 0) throw UsageError("--pixel", "the grid pixel must be > 0 nm");
    s.max_grid = o.max_grid;
    s.max_drift_px = o.max_drift_nm / px;
    s.max_error_px = o.max_error_nm / px;
    s.quiet = ctx.quiet;
    s.validate();
    r = undrift_rcc(file.locs, frames, s, o.input,
                    [&](const CorrelationGeometry& g) { return make_correlation_engine(ctx.device, g); });
  }
  FiducialDrift f;
  if (markers) f = fiducial_drift(file.locs, frames, track, o.smooth, o.input);
  const DriftTrace drift = o.method == "rcc" ? r.trace : o.method == "fiducial" ? f.smooth : combine_drift(r.trace, f.raw, o.smooth);

  apply_drift(file.locs, drift);
  LocWriterContext context = writer_context(file, "nanoscopy fit2d undrift");
  context.frames = std::max(context.frames, frames);
  context.parameters = {{"Input file", o.input}, {"Undrift method", o.method}};
  if (rcc) context.parameters.push_back({"Undrift segmentation", std::to_string(o.segment)});
  if (markers) context.parameters.push_back({"Undrift smoothing", std::to_string(o.smooth)});
  const std::string txt = sibling_path(o.output, "_drift.txt"), csv = sibling_path(o.output, "_drift.csv"),
                    png = sibling_path(o.output, "_drift.png");
  OutputGroup outputs;  // the localizations and the drift files appear together
  const LocWriteCounts counts = write_localizations(o.output, o.format, context, file.locs);
  write_picasso_drift(txt, drift);
  write_undrift_csv(csv, drift, px, markers);
  write_drift_plot(png, "fit2d undrift (" + o.method + "): " + std::filesystem::path(o.input).filename().string(),
                   drift, px, markers ? &f.raw : nullptr);
  outputs.commit();

  out << "fit2d undrift: " << o.input << ": " << file.locs.size() << " localizations in " << frames << " frames, "
      << o.method << "\n";
  if (rcc) {
    std::int64_t solved = 0;
    for (const RccSegment& s : r.segments) solved += s.solved ? 1 : 0;
    out << "  RCC:                " << r.segments.size() << " segments of ~" << o.segment << " frames (" << solved
        << " solved), " << r.pairs << " pairs (" << r.pairs_dropped << " dropped as outliers, residual RMS "
        << r.rms_residual_px * px << " nm, limit " << r.threshold_px * px << " nm)\n"
        << "  grid:               " << r.geometry.width << " x " << r.geometry.height << " pixels of "
        << r.grid_pixel_px * px << " nm, spectra " << static_cast<double>(r.spectrum_bytes) / 1048576.0 << " MB, "
        << r.engine << "\n";
  }
  if (markers)
    out << "  markers:            " << f.summary.markers << " (smoothed over " << o.smooth << " frames)\n";
  out << "  drift RMS:          x " << rms_nm(drift.dx, px) << " nm, y " << rms_nm(drift.dy, px) << " nm\n"
      << "  wrote:              " << counts.written << " to " << o.output;
  if (counts.dropped() > 0) out << " (" << counts.dropped() << " dropped by the format's rules)";
  out << "; " << txt << ", " << csv << ", " << png << "\n";
}

}  // namespace nanoscopy
