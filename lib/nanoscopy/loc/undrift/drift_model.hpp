// From drift samples to a drift per frame (fit2d undrift):
//   - segment drifts (RCC) at the segments' centres → every frame, by a natural
//     cubic spline (linear between two centres); beyond the first and last
//     centre the end piece's line is continued. Continued, not held: the frames
//     outside the centres are at most half a segment (plus the remainder)
//     away, and a held value would leave a steady drift's v·S/2 there;
//   - a noisy per-frame trace (fiducial markers) → a smooth one, by a robust
//     local linear regression (LOESS): for each frame, a straight line fitted
//     to the frames within ±window/2, tricube weights in time times each frame's
//     own weight (its number of markers), then three rounds of bisquare
//     robustness weights (6 median absolute residuals), so a frame where a
//     marker was lost or mislinked does not pull its neighbours. Linear, not
//     quadratic: a steady drift is followed without bias, and a line over N
//     frames has the smaller variance. Noise of σ per frame falls to about
//     σ·1.2/√N (tricube's efficiency).
// Drift traces are in camera px, applied as x −= dx[frame] (track/drift.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nanoscopy/loc/track/drift.hpp"

namespace nanoscopy {

// The values at frames 0 … frames−1 of the curve through (t[k], v[k]) (t
// strictly increasing; one point: constant).
std::vector<double> interpolate_samples(std::span<const double> t, std::span<const double> v, std::int64_t frames);

// The smoothed values per frame; frames with weight 0 carry no data. Where the
// window holds no data the result is NaN (fill_gaps). window ≥ 3 frames.
std::vector<double> robust_smooth(std::span<const double> values, std::span<const double> weights,
                                  std::int64_t window);

// NaN values filled linearly between the nearest finite ones, held beyond the
// first and last; all NaN: zeros.
void fill_gaps(std::vector<double>& values);

// Shifts the trace so its mean over all frames is zero (the free constant of
// every drift estimate; our fiducial tracks use the same convention).
void zero_mean(DriftTrace& trace);

}  // namespace nanoscopy
