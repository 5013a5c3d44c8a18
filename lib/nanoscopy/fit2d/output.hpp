// Where fit2d's localizations go, in frame order: the localization file and,
// with --track, the fiducial tracker and its drift files. Shared by a single
// run, rank 0 of an MPI run, and fit2d merge, so all three write the same files.
#pragma once

#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/fit2d/settings.hpp"
#include "nanoscopy/io/table_writer.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/loc/median_histogram.hpp"
#include "nanoscopy/loc/track/track.hpp"
#include "nanoscopy/params/params.hpp"

namespace nanoscopy {

// Declares every file a fit2d run on its localizations `output` writes to the run's plan
// (core/run_files.hpp): the localizations and their .yaml, with `track` the drift and track files,
// and the --undrift/--link/--render chain's files.
void plan_fit2d_outputs(const std::string& output, const std::string& format, bool track,
                        const struct Fit2dPostprocess& post);

class Fit2dOutput {
 public:
  // Opens the outputs (checking their directories) before any work. With `track`,
  // the tracking parameters come from `p` and the drift files sit beside `output`.
  Fit2dOutput(const std::string& output, const std::string& format, const LocWriterContext& context, bool track,
              const Params& p, const std::string& where);
  ~Fit2dOutput();

  void append(std::span<const Localization> locs);
  // Solves the drift (with --track), then commits every file.
  void finish();

  const LocalizationWriter& writer() const { return *writer_; }
  // "a_drift.txt, a_drift.csv, a_tracks.csv (3 markers)", or "" without --track.
  const std::string& drift_files() const { return drift_files_; }
  // The median localization precision (lpx, nm) of the rows appended.
  double median_precision_nm() const { return precisions_nm_.median(); }

 private:
  std::string output_;
  double pixel_size_nm_;
  std::unique_ptr<LocalizationWriter> writer_;
  std::unique_ptr<TableWriter> track_writer_;
  std::unique_ptr<FiducialTracker> tracker_;
  std::string drift_files_;
  MedianHistogram precisions_nm_;
};

// "  camera: baseline ... (Sensitivity from movie.yaml)": the camera in effect and which values the movie gave.
void print_camera(std::ostream& out, const Camera& camera, const std::vector<std::string>& from_movie,
                  const std::string& movie_metadata);

// "  fit: mle (auto: camera data), astigmatic model (3D: astig.json, z -600 to 600 nm)": what was fitted.
void print_fit(std::ostream& out, const Fit2dSetup& setup, const Params& p);

// "  localizations: ... output: ..." lines of fit2d's summary, after the first line.
void print_fit2d_outputs(std::ostream& out, const Fit2dOutput& output, std::int64_t candidates, std::int64_t rejected,
                         double median_precision_nm, double pixel_size_nm);

}  // namespace nanoscopy
