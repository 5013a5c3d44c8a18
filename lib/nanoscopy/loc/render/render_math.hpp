// Rendering math written once for the CPU engine (T = double) and the CUDA
// kernels (T = float) (core/hd.hpp): where a localization's mass goes.
#pragma once

#include <cmath>
#include <cstdint>

#include "nanoscopy/core/hd.hpp"

namespace nanoscopy::render_math {

// One localization in rendered pixels from the field's corner (pixel i covers
// [i, i + 1)); engines leave out a point outside the field (inside() false:
// the driver marks a localization outside with u = −1); sigma_* its Gaussian's σ in rendered pixels
// (≥ 0.5, set by the driver); z in nm (the z colour's channel, else 0). Float:
// a 2^31-pixel picture is at most 46,341 px a side, so a position keeps 2^-8 px.
struct RenderPoint {
  float u = 0, v = 0;
  float sigma_u = 0, sigma_v = 0;
  float z = 0;
};

// The Gaussian is spread over ±kFootprintSigmas σ; beyond it lies 6e-5 of its mass.
constexpr float kFootprintSigmas = 4.0f;

template <typename T>
NANOSCOPY_HD T erf_of(T x) {
  if constexpr (sizeof(T) == sizeof(float)) return erff(x); else return erf(x);
}
template <typename T>
NANOSCOPY_HD T erfc_of(T x) {
  if constexpr (sizeof(T) == sizeof(float)) return erfcf(x); else return erfc(x);
}

// The share of a unit Gaussian (centre, σ) on [a, b]. Written with erfc on the
// side of a tail, where erf(b) − erf(a) of two values near ±1 would cancel (in
// float, the outer pixels' shares would keep only a few bits).
template <typename T>
NANOSCOPY_HD T pixel_share(T a, T b, T centre, T sigma) {
  const T k = T(0.70710678118654752440) / sigma;
  const T lo = (a - centre) * k, hi = (b - centre) * k;
  if (lo >= T(0)) return T(0.5) * (erfc_of(lo) - erfc_of(hi));
  if (hi <= T(0)) return T(0.5) * (erfc_of(-hi) - erfc_of(-lo));
  return T(0.5) * (erf_of(hi) - erf_of(lo));
}

NANOSCOPY_HD bool inside(const RenderPoint& p, std::int64_t width, std::int64_t height) {
  return p.u >= 0.0f && p.v >= 0.0f && p.u < static_cast<float>(width) && p.v < static_cast<float>(height);
}

// The pixels [x0, x1] x [y0, y1] a point's Gaussian covers on a width x height picture.
struct Footprint {
  std::int64_t x0 = 0, x1 = -1, y0 = 0, y1 = -1;
};

NANOSCOPY_HD std::int64_t clamp_index(float x, std::int64_t n) {
  // Compared as float first: no out-of-range float reaches the integer conversion.
  if (!(x >= 0.0f)) return 0;
  if (x >= static_cast<float>(n - 1)) return n - 1;
  return static_cast<std::int64_t>(x);
}

NANOSCOPY_HD Footprint footprint(const RenderPoint& p, std::int64_t width, std::int64_t height) {
  Footprint f;
  f.x0 = clamp_index(floorf(p.u - kFootprintSigmas * p.sigma_u), width);
  f.x1 = clamp_index(floorf(p.u + kFootprintSigmas * p.sigma_u), width);
  f.y0 = clamp_index(floorf(p.v - kFootprintSigmas * p.sigma_v), height);
  f.y1 = clamp_index(floorf(p.v + kFootprintSigmas * p.sigma_v), height);
  return f;
}

// The histogram's pixel of a point inside the field.
NANOSCOPY_HD std::int64_t histogram_index(const RenderPoint& p, std::int64_t width, std::int64_t height) {
  return clamp_index(floorf(p.v), height) * width + clamp_index(floorf(p.u), width);
}

}  // namespace nanoscopy::render_math
