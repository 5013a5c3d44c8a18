// Per-frame corrections applied to a frame before its cumulants (sofi --undrift,
// --bleach-correction exponential), written once for the CPU engine and the CUDA
// kernel (NANOSCOPY_HD):
//   corrected(x, y) = offset + gain * (F(x + dx, y + dy) - offset)
// with F sampled bilinearly (reads outside the frame clamped to the edge pixel).
//
// Why bilinear and not a Fourier shift: it is local (no wrap-around of the
// frame's edges into the opposite side, which a non-periodic camera frame would
// need apodizing against), its weights are non-negative (no ringing: a Fourier
// shift of a bright spot puts negative side lobes into every pixel of the row,
// which the higher-order cumulants raise to the n-th power), and it costs four
// reads per pixel on the CPU and the GPU alike instead of two FFTs per frame.
// Its price is a small low-pass that depends on the sub-pixel fraction f: each
// output mixes at most 2 x 2 pixels with weights (1 - f), f. It mixes pixels of
// ONE frame, so noise stays independent between frames and the lagged
// auto-cumulants stay free of shot noise; zero-lag cross-cumulants of
// neighbouring pixels (--cross) see a little shared noise from the mixing.
//
// Everything is float: camera values (< 2^16) and weights in [0, 1] keep about
// 7 significant digits, far below the shot noise; the cumulant sums that follow
// are double as before. Every multiply-add is an explicit fmaf, which nvcc does
// not re-contract: the CPU engine and the CUDA kernel compute bit-identical
// corrected frames (tests/gpu compares them at the double-rounding tolerance).
#pragma once

#include <cmath>
#include <cstdint>

#include "nanoscopy/core/hd.hpp"

namespace nanoscopy {

// One frame's correction. The identity is {0, 0, 1, 0}.
struct SofiFrameCorrection {
  float dx = 0, dy = 0;  // px: the frame is sampled at (x + dx, y + dy), i.e. moved back by its drift
  float gain = 1;        // bleaching: the fluctuating part is scaled by gain
  float offset = 0;      // ... around this constant level (camera baseline + background that does not bleach)
};

namespace sofi_math {

NANOSCOPY_HD std::int64_t clamp_pixel(std::int64_t v, std::int64_t n) { return v < 0 ? 0 : (v >= n ? n - 1 : v); }

// a + t (b - a), fused.
NANOSCOPY_HD float lerp(float a, float b, float t) { return fmaf(t, b - a, a); }

// Frame T (uint16 or float) of w x h pixels, row-major; output pixel (x, y).
template <typename T>
NANOSCOPY_HD float corrected_pixel(const T* frame, std::int64_t w, std::int64_t h, std::int64_t x, std::int64_t y,
                                   const SofiFrameCorrection& c) {
  const float fx = static_cast<float>(x) + c.dx, fy = static_cast<float>(y) + c.dy;
  const float x0f = floorf(fx), y0f = floorf(fy);
  const float ax = fx - x0f, ay = fy - y0f;
  const auto x0 = static_cast<std::int64_t>(x0f), y0 = static_cast<std::int64_t>(y0f);
  const std::int64_t xa = clamp_pixel(x0, w), xb = clamp_pixel(x0 + 1, w);
  const std::int64_t ya = clamp_pixel(y0, h) * w, yb = clamp_pixel(y0 + 1, h) * w;
  const float top = lerp(static_cast<float>(frame[ya + xa]), static_cast<float>(frame[ya + xb]), ax);
  const float bottom = lerp(static_cast<float>(frame[yb + xa]), static_cast<float>(frame[yb + xb]), ax);
  return fmaf(c.gain, lerp(top, bottom, ay) - c.offset, c.offset);
}

}  // namespace sofi_math
}  // namespace nanoscopy
