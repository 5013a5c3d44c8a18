// sofi --undrift, the estimate: the stage drift of a stack from the mean images
// of consecutive blocks of frames (a blinking stack's block mean is its
// widefield image, sharp enough to correlate and free of the blinking).
//
//   1. Each block mean, minus its own mean value and tapered to zero over a
//      4-pixel cosine edge (so the frame's border is no edge to lock onto), is placed in a grid
//      padded by the search radius (no wrap-around within it) and handed to a
//      CorrelationEngine (loc/undrift/engine.hpp: FFTW on the CPU), which keeps
//      its spectrum: memory = blocks × grid × 8 bytes.
//   2. Pairs of blocks are correlated, each peak fitted to sub-pixel
//      (loc/undrift/peak_fit.hpp: a Gaussian, log-quadratic), and the shifts
//      d_j − d_i solved for the block drifts in least squares with outlier
//      rejection (loc/undrift/rcc_solve.hpp: redundant cross-correlation, Wang
//      et al. 2014). Every pair when there are at most 48 blocks, else the pairs
//      at most 24 blocks apart: the redundancy that rejects a bad pair, at a
//      cost linear in the blocks.
//   3. The block drifts, at the blocks' centre frames, are interpolated to every
//      frame (loc/undrift/drift_model.hpp: a natural cubic spline, the end
//      pieces' lines continued) and shifted so that the range's first frame has
//      drift 0: the corrected image is registered to the first frame (an
//      extrapolation over half a block, so that constant carries the first
//      block's error; the image is then shifted as a whole, not blurred).
// Accuracy (tests/test_sofi_drift.cpp, 64 x 64, 120 emitters, 3,000 frames,
// blocks of 200, up to 2.5 px of drift): below 0.05 px rms for exponential
// blinking (dyes); 0.12 px rms for power-law quantum dots, whose block means
// differ in which emitters dominate, so overlapping emitters pull the peak.
// Drift here is where the sample appears: frame t shows the sample of frame 0
// moved by (dx, dy); the correction samples frame t at (x + dx, y + dy).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "nanoscopy/loc/undrift/engine.hpp"

namespace nanoscopy {

struct SofiDriftSettings {
  double max_drift_px = 0;  // search radius between any two blocks, px; 0: a quarter of the smaller frame side
  double max_error_px = 0;  // pairs' residual limit (rcc_solve.hpp); <= 0: automatic
};

// The correlation grid for w x h frames (padded, FFT-friendly); UsageError naming
// --max-drift when the radius does not fit the frame.
CorrelationGeometry sofi_drift_geometry(std::int64_t width, std::int64_t height, const SofiDriftSettings& settings);

// Takes the block means one at a time (as the first pass finishes them) into
// the engine; solve() then does steps 2 and 3.
class SofiDriftEstimator {
 public:
  SofiDriftEstimator(std::int64_t width, std::int64_t height, std::unique_ptr<CorrelationEngine> engine,
                     const SofiDriftSettings& settings);
  // One block's mean image (width * height) and its centre frame (relative to the range's first frame).
  void add_block(std::span<const float> mean, double centre_frame);

  struct Result {
    std::vector<double> block_time, block_dx, block_dy;  // per block, px; block_dx[0] = 0
    std::vector<bool> block_solved;
    std::vector<double> dx, dy;  // per frame of the range, px; 0 at frame 0
    std::int64_t pairs = 0, dropped = 0;
    double rms_residual_px = 0;  // of the pairs kept
    double correlation_seconds = 0;  // spectra and pairs (the share of the first pass the FFTs take)
    std::string engine;
    // Whether the pairs agree on one drift: a stack with structure registers to hundredths or tenths of a
    // pixel (the pairs' residual; tests/test_sofi_drift.cpp: 0.008 px on dyes, 0.07 px on quantum dots), while block
    // means without fixed structure (noise, a sample that changes) give peaks anywhere: residuals of
    // pixels to tens of pixels, and many pairs dropped. Unreliable: residual above max_reliable_residual_px,
    // or more than half of the pairs dropped as outliers. sofi warns; the correction is still applied.
    static constexpr double max_reliable_residual_px = 1.0;
    bool reliable() const { return rms_residual_px <= max_reliable_residual_px && 2 * dropped <= pairs; }
  };
  // InputError naming `source` with fewer than 2 blocks, or when no two blocks correlate.
  Result solve(std::int64_t frames, const std::string& source);

 private:
  std::int64_t width_, height_;
  std::unique_ptr<CorrelationEngine> engine_;
  SofiDriftSettings settings_;
  std::vector<float> window_x_, window_y_, grid_;
  std::vector<double> times_;
  double seconds_ = 0;
};

}  // namespace nanoscopy
