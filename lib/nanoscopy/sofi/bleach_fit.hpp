// sofi --bleach-correction exponential: the decay of a stack's mean intensity
// per frame, I(t) = A exp(-t / tau) + C (t in frames from the range's first),
// fitted in least squares, and the per-frame correction that undoes it:
//   F'(t) = C + (F(t) - C) * exp(t / tau),
// i.e. the part above the constant level C (the camera baseline and a
// background that does not bleach) is scaled back to its level at the first
// frame. This is the "Exponential Fit" of Fiji's Bleach Correction (Miura 2020,
// which divides the whole frame by the fitted curve: the same for C = 0; with a
// camera baseline, dividing the baseline too would turn it into a rising
// trend). The gain is capped at kMaxBleachGain: frames whose emitters are
// nearly all bleached would otherwise be mostly amplified noise.
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
  // The correction's gain at frame t (1 when it does not decay), at most kMaxBleachGain.
  double gain(double t) const;
};

// Least squares over tau (a log-spaced search from 1/3 frame to 100 times the
// trace, then golden-section refinement), A and C in closed form for each tau.
// Needs at least 3 values (std::invalid_argument otherwise).
BleachFit fit_exponential_decay(std::span<const double> trace);

}  // namespace nanoscopy
