// Fourier ring correlation of two images of the same sample with independent
// noise (notes/reference.md 6):
//   FRC(r) = Re sum_{k in ring r} F1 F2* / sqrt(sum |F1|^2 sum |F2|^2)
// The work "window, FFT, ring sums" is the engine's (engine.hpp: FrcEngine,
// the CPU reference with FFTW, cuFFT in kernels/frc); the curve, the threshold
// and the crossing are computed from the sums on the host (frc_from_sums).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nanoscopy/frc/engine.hpp"
#include "nanoscopy/frc/threshold.hpp"

namespace nanoscopy {

struct FrcPoint {
  std::int64_t ring = 0;
  double radius = 0;     // the ring's mean normalized radius |k| (frc_math.hpp), about ring + 1/2
  double frequency = 0;  // cycles per pixel: radius / N
  double frc = 0;        // 0 where a ring has no power in one of the images
  std::int64_t pixels = 0;
  double threshold = 0;
};

// Where the curve first falls below the threshold.
//  Rule: ring 0 (the mean and the window's own spectrum) is skipped; starting
//  at ring 1 the curve must first be at or above the threshold (k-sigma
//  thresholds exceed 1 in the first rings, where n_r is small), and the
//  crossing lies between the last ring r-1 at or above it and the first ring r
//  below it: with a = d(r-1) / (d(r-1) - d(r)), d = FRC - T, it is at the
//  frequency f_c = f(r-1) + a (f(r) - f(r-1)) (linear interpolation between the
//  rings' labels, their mean radii / N), and resolution = 1 / f_c pixels.
struct FrcCrossing {
  enum class Status {
    crossed,      // found at ring_c
    not_reached,  // the curve stays above the threshold up to N/2: resolution is the Nyquist limit, 2 px
    never_above,  // the curve never rises above the threshold: no resolution can be given
  };
  Status status = Status::never_above;
  double ring = 0;           // r - 1 + a (crossed: the ring index, interpolated), N/2 (not_reached), 0 (never_above)
  double frequency = 0;      // f_c cycles per pixel (crossed), 0.5 (not reached)
  double resolution_px = 0;  // 1 / f_c; 2 when not reached; 0 when never above
};
const char* to_string(FrcCrossing::Status status);  // "crossed", "not reached", "never above"

struct FrcResult {
  std::int64_t width = 0, height = 0, side = 0;  // side = N
  FrcThreshold threshold;
  std::vector<FrcPoint> curve;  // rings 0 .. N/2
  FrcCrossing crossing;
};

// The curve and the crossing from an engine's sums.
FrcResult frc_from_sums(const FrcRingSums& sums, const FrcGeometry& geometry, const FrcThreshold& threshold);
// The crossing of a curve (rule above; the points' frequencies are used).
FrcCrossing find_crossing(std::span<const FrcPoint> curve);

// One pair through an engine.
FrcResult compute_frc(FrcEngine& engine, std::span<const float> a, std::span<const float> b,
                      const FrcThreshold& threshold);
// One pair on the CPU reference.
FrcResult compute_frc(std::span<const float> a, std::span<const float> b, const FrcGeometry& geometry,
                      const FrcThreshold& threshold);

}  // namespace nanoscopy
