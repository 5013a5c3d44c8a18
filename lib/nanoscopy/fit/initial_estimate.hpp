// The paper's initial estimate of a spot, written once for the CPU loop and
// the CUDA kernel: the centre at the maximum of the 3×3 moving average, σ from
// the number of pixels above α·e^(−½) + β (β = min, α = max − min).
#pragma once

#include <math.h>

#include "nanoscopy/core/hd.hpp"
#include "nanoscopy/fit/real.hpp"

namespace nanoscopy::fit_detail {

// Partial state of the estimate over a subset of pixels; the GPU combines the
// lanes' partials, the CPU scans all pixels into one.
template <class T>
struct InitScan {
  T best_avg;      // highest 3×3 moving average (window clipped to the ROI)
  int best_index;  // its pixel index (ties: the lowest index)
  T min, max;      // raw pixel extremes
  T sum, sum2;     // Σg, Σg²
  int nonfinite;   // count of NaN/inf pixels
};

template <class T>
NANOSCOPY_HD InitScan<T> init_scan_identity() {
  InitScan<T> s;
  s.best_avg = -Limits<T>::max;
  s.best_index = 0x7fffffff;
  s.min = Limits<T>::max;
  s.max = -Limits<T>::max;
  s.sum = s.sum2 = 0;
  s.nonfinite = 0;
  return s;
}

// Adds pixel (c, r) of the ROI `g` (row-major, width w, height hgt).
template <class real, typename Pixel>
NANOSCOPY_HD void init_scan_pixel(InitScan<real>& s, const Pixel* g, int w, int hgt, int c, int r) {
  const real v = static_cast<real>(g[r * w + c]);
  if (!finite(v)) {
    ++s.nonfinite;
    return;
  }
  s.min = fmin(s.min, v);
  s.max = fmax(s.max, v);
  s.sum += v;
  s.sum2 += v * v;
  const int r0 = r > 0 ? r - 1 : 0, r1 = r + 1 < hgt ? r + 1 : hgt - 1;
  const int c0 = c > 0 ? c - 1 : 0, c1 = c + 1 < w ? c + 1 : w - 1;
  real box = 0;
  for (int rr = r0; rr <= r1; ++rr)
    for (int cc = c0; cc <= c1; ++cc) box += static_cast<real>(g[rr * w + cc]);
  const real avg = box / static_cast<real>((r1 - r0 + 1) * (c1 - c0 + 1));
  const int index = r * w + c;
  const bool better = avg > s.best_avg || (avg == s.best_avg && index < s.best_index);
  s.best_avg = better ? avg : s.best_avg;
  s.best_index = better ? index : s.best_index;
}

template <class T>
NANOSCOPY_HD InitScan<T> init_scan_combine(const InitScan<T>& a, const InitScan<T>& b) {
  InitScan<T> s;
  const bool take_b = b.best_avg > a.best_avg || (b.best_avg == a.best_avg && b.best_index < a.best_index);
  s.best_avg = take_b ? b.best_avg : a.best_avg;
  s.best_index = take_b ? b.best_index : a.best_index;
  s.min = fmin(a.min, b.min);
  s.max = fmax(a.max, b.max);
  s.sum = a.sum + b.sum;
  s.sum2 = a.sum2 + b.sum2;
  s.nonfinite = a.nonfinite + b.nonfinite;
  return s;
}

// Threshold α·e^(−½) + β of the σ estimate, with β = min and α = max − β.
template <class T>
NANOSCOPY_HD T init_threshold(const InitScan<T>& s) {
  return s.min + (s.max - s.min) * T(0.60653065971263342360);
}

// σ₀ = √(M/π) from the number M of raw pixels above the threshold.
template <class T>
NANOSCOPY_HD T init_sigma(int above) {
  return sqrt(static_cast<T>(above) * T(0.31830988618379067154));
}

}  // namespace nanoscopy::fit_detail
