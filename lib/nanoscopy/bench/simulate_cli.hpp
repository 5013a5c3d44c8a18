// `bench simulate movie` and `bench simulate blinking`: options and the runs, kept out of main.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nanoscopy/sim/blinking.hpp"
#include "nanoscopy/sim/movie.hpp"

namespace nanoscopy {

struct MovieCliOptions {
  MovieSettings settings;
  std::string output = "movie.tif";
  std::optional<double> sensitivity;  // --sensitivity; else 0.5 e⁻/ADU (emccd: 10)
  std::string camera_maps;            // --camera-maps: the sCMOS maps to use instead of simulated ones
  bool astigmatic = false;            // --astigmatic: 3D with the built-in calibration
  std::string calibration;            // --calibration: 3D with this one
  std::optional<double> z_min, z_max, z_step;
  std::optional<int> beads;
  // --psf pupil: the scalar pupil-function PSF (sim/pupil_psf.hpp), 3D; its optics and aberrations.
  std::string psf = "gaussian";
  PupilPsfSettings pupil = astigmatic_pupil_settings();
  std::string zernike;  // --zernike "6:0.12,8:0.03,11:0.04" (Noll:waves RMS) or "none"; empty: the default pupil's
};

// "6:0.12,8:0.03" (Noll index:amplitude in wavelengths RMS, comma separated) or "none"; UsageError naming
// `option` for anything else.
std::vector<ZernikeTerm> parse_zernike_list(const std::string& text, const std::string& option);

void add_movie_options(CLI::App& cmd, MovieCliOptions& options);

// Writes the movie, its camera (<stem>.yaml, Picasso's movie info with Baseline,
// Sensitivity, Gain, Pixelsize) and <stem>_truth.csv (ThunderSTORM conventions)
// beside it; an sCMOS movie also its maps (<stem>_maps.h5, named in the .yaml as
// "Camera maps"), an astigmatic one its calibration (<stem>_astig.json, named as
// "Astigmatic calibration") and z in the truth ("z [nm]"); a pupil-PSF movie (--psf pupil) z in
// the truth and its optics in the .yaml ("Simulation.PSF: pupil", NA, wavelength, indices, Zernike
// terms). Prints a one-line summary.
void run_simulate_movie(MovieCliOptions options, std::uint64_t seed, bool quiet);

struct BlinkingCliOptions {
  BlinkingSettings settings;
  std::string output = "blinking.tif";
  std::int64_t size = 0;  // --size: square frames of this edge (overrides the defaults of --width/--height)
};

void add_blinking_options(CLI::App& cmd, BlinkingCliOptions& options);

// Writes the SOFI stack and its truth (<stem>_emitters.csv, _truth.tif,
// _mean.tif); prints a one-line summary on stdout.
void run_simulate_blinking(BlinkingCliOptions options, std::uint64_t seed, bool quiet);

}  // namespace nanoscopy
