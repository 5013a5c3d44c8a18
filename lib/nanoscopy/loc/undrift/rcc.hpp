// Drift by redundant cross-correlation (RCC; Wang et al. 2014, as Picasso's
// undrift): fit2d undrift and any run that wants its localizations undrifted.
//
//   1. Segments: the frames are cut into n = round(frames / segment_frames)
//      segments of equal length (Picasso's rule: 1,500 frames with segments of
//      1,000 are 2 of 750); n < 2 is a UsageError. A segment's time is the mean
//      frame of its localizations.
//   2. Grid: the localizations' bounding box at `pixel_px` camera px per grid
//      pixel, padded by the search radius so that the circular correlation does
//      not wrap within it, rounded up to a size FFTW transforms fast; a grid
//      larger than max_grid a side takes a coarser pixel instead (said in the
//      result). Each segment's localizations go to the engine, one segment at a
//      time, as float grid positions; the engine renders them as a histogram
//      with bilinear weights (a localization's unit of mass shared by its four
//      nearest grid pixels: sub-pixel positions are kept, not rounded away;
//      on the GPU for the cuFFT engine) and keeps its spectrum: memory =
//      segments × grid × 8 bytes (RccResult::spectrum_bytes; device memory for
//      the cuFFT engine).
//   3. Pairs: every pair i < j is correlated (engine.hpp) and its peak fitted to
//      sub-pixel (peak_fit.hpp); the system r_ij = d_j − d_i is solved with
//      outlier rejection (rcc_solve.hpp).
//   4. Frames: the segment drifts are interpolated to every frame
//      (drift_model.hpp) and shifted to a zero mean over the frames.
// Memory besides the spectra: the localizations' segment index (8 bytes each)
// and one segment's grid positions (8 bytes each).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/loc/localization.hpp"
#include "nanoscopy/loc/track/drift.hpp"
#include "nanoscopy/loc/undrift/engine.hpp"

namespace nanoscopy {

// How the user gave one RCC setting, for errors: the option or the parameter file's line.
struct RccOption {
  std::string name;    // "--pixel", "--undrift-pixel" or "params.json:12"
  bool given = false;  // false: the default
};
struct RccOptions {
  RccOption pixel{"--pixel"}, max_grid{"--max-grid"}, max_drift{"--max-drift"};
};

// The most times the grid pixel grows beyond RccSettings::pixel_px to fit max_grid (1.1^60, about 304).
inline constexpr int kMaxGridCoarsenings = 60;

struct RccSettings {
  std::int64_t segment_frames = 1000;  // Picasso's default segmentation
  // Grid pixel, camera px. A fifth of a camera pixel (26 nm at 130 nm): the
  // correlation peak (the localization precision √2, blurred by blur_px) then
  // spans a few grid pixels, which the sub-pixel fit needs.
  double pixel_px = 0.2;
  std::int64_t max_grid = 1024;  // largest grid side; the pixel grows beyond it
  double max_drift_px = 20;      // search radius: the largest drift between two segments, camera px
  double blur_px = 1.0;          // σ of the Gaussian on the correlation, grid px
  double max_error_px = 0;       // pairs' residual limit, camera px; ≤ 0: 4 robust σ (rcc_solve.hpp)
  bool quiet = true;             // progress on stderr
  RccOptions options;            // the settings' names in errors
  double camera_px_nm = 0;       // nm per camera px, for errors in nm (0: they say camera px)
  // UsageError naming the option: segment_frames < 1, pixel ≤ 0, max_grid outside [64, 32768], max drift ≤ 0,
  // blur < 0. undrift_rcc also refuses, before any allocation or search, a pixel and max drift whose grid
  // cannot fit max_grid even at kMaxGridCoarsenings coarsenings (UsageError naming the option the user gave,
  // or InputError naming the file when only the localizations' extent is at fault).
  void validate() const;
};

struct RccSegment {
  std::int64_t first = 0, end = 0;  // frames [first, end)
  std::int64_t localizations = 0;
  double time = 0;                  // mean frame of its localizations (the centre when it has none)
  double dx = 0, dy = 0;            // camera px, zero-mean convention of the trace
  bool solved = false;              // correlated with the others (false: empty, or no usable pair)
};

struct RccResult {
  DriftTrace trace;  // camera px per frame; markers = 0
  std::vector<RccSegment> segments;
  CorrelationGeometry geometry;
  double grid_pixel_px = 0;  // the grid pixel used (≥ RccSettings::pixel_px)
  std::int64_t pairs = 0, pairs_used = 0, pairs_dropped = 0;
  double threshold_px = 0, rms_residual_px = 0;  // of the pairs' solve
  std::string engine;
  std::size_t spectrum_bytes = 0;
};

// Refuses, before any search or allocation, settings whose correlation grid cannot fit max_grid for
// localizations spanning `extent_px` camera px (0: the drift and the pixel alone), even at the coarsest
// pixel allowed: UsageError naming the option the user gave (RccSettings::options), or InputError naming
// `where` when the settings are defaults and the localizations' extent alone is at fault.
void check_rcc_grid(const RccSettings& settings, double extent_px, const std::string& where);

// Makes the engine for the grid the run chose (the registry's make_correlation_engine, or the CPU engine).
using CorrelationEngineFactory = std::function<std::unique_ptr<CorrelationEngine>(const CorrelationGeometry&)>;

// The drift of `locs` (frames 0 … frames−1; frames ≥ every frame + 1).
// `where` names the input in errors: InputError for fewer than 2 localizations
// with finite x, y or fewer than two segments that correlate; UsageError for
// fewer than 2 segments. An empty factory: the CPU engine on the machine's threads.
RccResult undrift_rcc(std::span<const Localization> locs, std::int64_t frames, const RccSettings& settings,
                      const std::string& where, const CorrelationEngineFactory& make_engine = {});

// The segments' frame ranges (step 1 above); UsageError naming `where` for fewer than 2.
std::vector<RccSegment> rcc_segments(std::int64_t frames, std::int64_t segment_frames, const std::string& where);

}  // namespace nanoscopy
