// `bench simulate movie` and `bench simulate blinking`: options and the runs, kept out of main.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "nanoscopy/sim/blinking.hpp"
#include "nanoscopy/sim/movie.hpp"

namespace nanoscopy {

struct MovieCliOptions {
  MovieSettings settings;
  std::string output = "movie.tif";
};

void add_movie_options(CLI::App& cmd, MovieCliOptions& options);

// Writes the movie, its camera (<stem>.yaml, Picasso's movie info with Baseline,
// Sensitivity, Gain, Pixelsize) and <stem>_truth.csv (ThunderSTORM conventions)
// beside it; prints a one-line summary.
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
