// sofi --bleach-correction exponential: the decay of a stack's mean intensity
// per frame, f(t) = A exp(-t / tau) + C (t in frames from the range's first),
// fitted in least squares, and the per-frame correction that undoes it:
//   F'(t) = F(t) * f(0) / f(t),
// the "Exponential Fit" of Fiji's Bleach Correction (Miura 2020): every frame
// scaled so that its expected mean stays at the first frame's. We first scaled
// only the part above C (C + (F - C) e^(t/tau)), which restores each remaining
// emitter's contribution fully, but C cannot tell the camera baseline and
// background from emitters that do not bleach: on a stack that hardly bleaches
// the fit finds a tiny fast A, and the last frames were scaled by 100 (measured
// on tests/test_sofi_app.cpp's stack). The ratio is safe there (gain about 1).
// Its limits: the baseline is scaled too (a slow trend, which the per-block
// centring then removes but for a small ramp within each block), and a frame's
// fluctuations are scaled by the mean's ratio, not by the emitters' (Peeters et
// al. 2017: intensity normalization does not fully correct the cumulants). The
// gain is capped at kMaxBleachGain.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nanoscopy/sofi/frame_correction.hpp"

namespace nanoscopy {

constexpr double kMaxBleachGain = 100;

struct BleachFit {
  double amplitude = 0;   // A (same unit as the trace)
  double tau_frames = 0;  // tau
  double constant = 0;    // C
  double rms_residual = 0;
  bool decays = false;  // false: the trace does not fall (A <= 0): no correction
  // The correction's gain f(0) / f(t) at frame t (1 when it does not decay), at most kMaxBleachGain.
  double gain(double t) const;
};

// Least squares over tau (a log-spaced search from 1/3 frame to 100 times the
// trace, then golden-section refinement), A and C in closed form for each tau.
// Needs at least 3 values (std::invalid_argument otherwise).
BleachFit fit_exponential_decay(std::span<const double> trace);

}  // namespace nanoscopy
