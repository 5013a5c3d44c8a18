// fit2d's parameters made into a run: the pipeline's settings (detection, fit,
// filter, regions), the camera in effect (the user's values, else the movie's own,
// else the defaults), what the localization file records, and the fingerprint that
// ties a part file to the parameters it was made with.
#pragma once

#include <string>
#include <vector>

#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/loc/pipeline.hpp"
#include "nanoscopy/loc/track/track.hpp"
#include "nanoscopy/params/params.hpp"

namespace nanoscopy {

struct Fit2dSetup {
  PipelineSettings settings;
  std::vector<std::string> camera_from_movie;  // the camera keys the movie gave (for the summary)
  std::string movie_files;                     // "movie.tif" or "movie.tif, movie.yaml"
  std::string estimator_reason;                // why --estimator auto chose what it chose (empty: the user's)
};

// UsageError for an even box; the camera is validated; --regions is read;
// --calibration is read (InputError naming it) and a --z-range it does not
// cover is a UsageError; --estimator auto is resolved.
Fit2dSetup fit2d_setup(const Params& p, const StackInfo& info, const std::string& regions_file, bool quiet);

// What the localization file records besides the rows: the movie, the camera and every parameter.
LocWriterContext fit2d_writer_context(const Params& p, const StackInfo& info, const PipelineSettings& settings);

// Output/format as create_localization_writer takes it ("" for auto: by the extension).
std::string output_format(const Params& p);

// The Tracking section (fit2d --track, fit2d undrift --method fiducial|combined); UsageError naming it.
TrackSettings fit2d_track_settings(const Params& p);

// What shapes the localizations (not where they are written): parts made with
// different values must not be merged.
std::string fit2d_parameter_fingerprint(const Params& p, const Camera& camera, const std::string& regions_file);

}  // namespace nanoscopy
