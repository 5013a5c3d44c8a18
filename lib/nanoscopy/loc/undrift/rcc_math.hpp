// RCC math written once for the CPU engine and the CUDA kernels (core/hd.hpp):
// a segment's bilinear histogram and the Gaussian blur's transfer function.
#pragma once

#include <cmath>
#include <cstdint>

#include "nanoscopy/core/hd.hpp"

namespace nanoscopy::rcc_math {

// One localization on the correlation grid: grid px, pixel (i, j) centred at (i, j)
// in the sense that a point at (i, j) gives pixel (i, j) all of its unit mass.
// Float: a grid is at most 32,768 px a side, so a position keeps 2^-9 px or better
// (2^-14 px on the default 1,024 grid), far below the peak fit's precision.
struct GridPoint {
  float u = 0, v = 0;
};

// The four pixels and weights of a point's bilinear deposit: (i, j), (i+1, j),
// (i, j+1), (i+1, j+1) with weights w[0..3] summing to 1. False where the four
// pixels are not all on the width x height grid (the point is then left out).
struct BilinearDeposit {
  std::int64_t i = 0, j = 0;
  float w[4] = {0, 0, 0, 0};
};

NANOSCOPY_HD bool bilinear_deposit(GridPoint p, std::int64_t width, std::int64_t height, BilinearDeposit& d) {
  const float fi = floorf(p.u), fj = floorf(p.v);
  // Compared as floats first, so that NaN and huge values never reach the integer conversion.
  if (!(fi >= 0.0f && fj >= 0.0f && fi + 1.0f < static_cast<float>(width) && fj + 1.0f < static_cast<float>(height)))
    return false;
  d.i = static_cast<std::int64_t>(fi);
  d.j = static_cast<std::int64_t>(fj);
  const float fu = p.u - fi, fv = p.v - fj;
  d.w[0] = (1.0f - fu) * (1.0f - fv);
  d.w[1] = fu * (1.0f - fv);
  d.w[2] = (1.0f - fu) * fv;
  d.w[3] = fu * fv;
  return true;
}

// The index of circular shift s (−n < s < n) on an axis of n samples.
NANOSCOPY_HD std::int64_t wrap(std::int64_t s, std::int64_t n) { return ((s % n) + n) % n; }

}  // namespace nanoscopy::rcc_math
