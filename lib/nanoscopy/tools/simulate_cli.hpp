// `bench simulate movie`: options and the run, kept out of main.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "nanoscopy/sim/movie.hpp"

namespace nanoscopy {

struct MovieCliOptions {
  MovieSettings settings;
  std::string output = "movie.tif";
};

void add_movie_options(CLI::App& cmd, MovieCliOptions& options);

// Writes the movie and <stem>_truth.csv beside it; prints a one-line summary.
void run_simulate_movie(MovieCliOptions options, std::uint64_t seed, bool quiet);

}  // namespace nanoscopy
