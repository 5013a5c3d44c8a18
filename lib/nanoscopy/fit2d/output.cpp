#include "nanoscopy/fit2d/output.hpp"

#include <algorithm>
#include <iomanip>
#include <ostream>

#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/core/sibling_path.hpp"
#include "nanoscopy/core/spline_psf.hpp"
#include "nanoscopy/fit/engine.hpp"
#include "nanoscopy/fit2d/postprocess.hpp"
#include "nanoscopy/loc/track/drift.hpp"

namespace nanoscopy {

void plan_fit2d_outputs(const std::string& output, const std::string& format, bool track,
                        const Fit2dPostprocess& post) {
  plan_localization_output(output, format, "the localizations (-o)");
  if (track) {
    plan_output(sibling_path(output, "_tracks.csv"), "the marker tracks (--track)");
    plan_output(sibling_path(output, "_drift.txt"), "the drift table (--track, _drift.txt)");
    plan_output(sibling_path(output, "_drift.csv"), "the drift table (--track, _drift.csv)");
  }
  plan_fit2d_postprocess(post, output, format);
}

Fit2dOutput::Fit2dOutput(const std::string& output, const std::string& format, const LocWriterContext& context,
                         bool track, const Params& p, const std::string& where)
    : output_(output), pixel_size_nm_(context.camera.pixel_size_nm) {
  writer_ = create_localization_writer(output, format, context);
  if (!track) return;
  const TrackSettings ts = fit2d_track_settings(p);
  track_writer_ = create_marker_track_writer(sibling_path(output, "_tracks.csv"));
  tracker_ = std::make_unique<FiducialTracker>(ts, context.frames, where, marker_track_sink(*track_writer_));
}

Fit2dOutput::~Fit2dOutput() = default;

void Fit2dOutput::append(std::span<const Localization> locs) {
  writer_->append(locs);
  if (tracker_) tracker_->add(locs);
  for (const auto& l : locs) precisions_nm_.add(l.lpx * pixel_size_nm_);
}

void Fit2dOutput::finish() {
  OutputGroup outputs;  // localizations, tracks and drift appear together
  if (tracker_) {
    const DriftTrace drift = tracker_->finish();
    write_picasso_drift(sibling_path(output_, "_drift.txt"), drift);
    write_drift_csv(sibling_path(output_, "_drift.csv"), drift, pixel_size_nm_);
    track_writer_->finish();
    drift_files_ = sibling_path(output_, "_drift.txt") + ", " + sibling_path(output_, "_drift.csv") + ", " +
                   sibling_path(output_, "_tracks.csv") + " (" + std::to_string(tracker_->summary().markers) +
                   " markers)";
  }
  writer_->finish();
  outputs.commit();
}

void print_camera(std::ostream& out, const Camera& camera, const std::vector<std::string>& from_movie,
                  const std::string& movie_metadata) {
  out << "  camera:             baseline " << camera.baseline << " ADU, " << camera.sensitivity << " e-/ADU, EM gain "
      << camera.em_gain << ", pixel " << camera.pixel_size_nm << " nm";
  if (!from_movie.empty()) {
    out << " (";
    for (std::size_t i = 0; i < from_movie.size(); ++i) out << (i ? ", " : "") << from_movie[i];
    out << " from the movie: " << movie_metadata << ")";
  }
  out << "\n";
}

void print_fit(std::ostream& out, const Fit2dSetup& setup, const Params& p) {
  const FitSettings& fit = setup.settings.fit;
  out << "  fit:                " << to_string(fit.estimator);
  if (!setup.estimator_reason.empty()) out << " (" << setup.estimator_reason << ")";
  out << ", " << to_string(fit.model) << " model";
  if (fit.model == ShapeModel::astigmatic)
    out << " (3D: " << p.get_string("Fit/calibration") << ", z " << fit.astigmatism.z_min << " to "
        << fit.astigmatism.z_max << " nm)";
  if (fit.model == ShapeModel::spline && fit.spline)
    out << " (3D: " << p.get_string("Fit/calibration") << ", z " << fit.spline->z_min_nm() * fit.z_factor << " to "
        << fit.spline->z_max_nm() * fit.z_factor << " nm, z factor " << fit.z_factor << ")";
  out << "\n";
}

void print_fit2d_outputs(std::ostream& out, const Fit2dOutput& output, std::int64_t candidates, std::int64_t rejected,
                         double median_precision_nm, double pixel_size_nm) {
  const LocalizationWriter& writer = output.writer();
  const auto& counts = writer.counts();
  out << "  localizations:      " << counts.written << " written (" << candidates << " candidates, " << rejected
      << " rejected by the filter";
  if (counts.dropped() > 0) out << ", " << counts.dropped() << " dropped by " << loc_format_name(writer.format()) << "'s rules";
  out << ")\n"
      << "  median precision:   " << std::setprecision(3) << median_precision_nm << " nm (pixel size " << pixel_size_nm
      << " nm)\n";
  out << "  output:             ";
  for (std::size_t i = 0; i < writer.files().size(); ++i) out << (i ? ", " : "") << writer.files()[i];
  out << "\n";
  if (!output.drift_files().empty()) out << "  drift:              " << output.drift_files() << "\n";
}

}  // namespace nanoscopy
