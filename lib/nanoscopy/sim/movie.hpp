// Simulated single-molecule movies with known truth: emitters at random
// positions that blink (exponential on/off times), a pixel-integrated Gaussian
// PSF, uniform background, Poisson shot noise, then camera gain and baseline.
// Used by the README's demo, by tests and by bench.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nanoscopy {

struct MovieSettings {
  std::int64_t frames = 200;
  std::int64_t width = 64;
  std::int64_t height = 64;
  int emitters = 30;
  std::string structure = "random";  // "random" positions, or a "grid" (rows of evenly spaced emitters)
  double on_fraction = 0.1;    // mean fraction of frames an emitter is on
  double mean_on_frames = 3;   // mean length of an on period
  double photons = 1500;       // photons per frame while on
  double psf_sigma = 1.3;      // pixels
  double background = 20;      // photons per pixel per frame
  double baseline = 100;       // ADU
  double sensitivity = 0.5;    // e- per ADU
  double pixel_size_nm = 108;
  int markers = 0;             // fiducial markers: always on, `marker_brightness` × photons
  double marker_brightness = 3;
  double drift_x = 0;          // stage drift, px per frame: every emitter sits at (x + t·drift_x, y + t·drift_y)
  double drift_y = 0;
  std::uint64_t seed = 1;
};

struct EmitterTruth {
  std::int64_t frame;
  double x, y;     // pixels, centre of pixel i at i
  double photons;  // photons in this frame
};

// Writes the movie as uint16 TIFF (or HDF5 by extension) and returns the truth
// (one row per emitter per frame it was on, markers included, at their drifted
// positions). Streams in batches of frames, made in parallel.
std::vector<EmitterTruth> simulate_movie(const MovieSettings& settings, const std::string& path);

}  // namespace nanoscopy
