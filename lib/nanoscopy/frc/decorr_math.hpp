// The per-coefficient math of decorrelation analysis (decorr.hpp), written once
// for the CPU reference (decorr_engine_cpu.cpp, double) and the CUDA kernels
// (kernels/frc/decorr_kernels.cu, float), so both put every Fourier coefficient
// in the same radius bin with the same high-pass weight by construction.
//
// Normalised frequency (ImDecorr's getDcorr grid): a coefficient with signed
// integer frequencies (kx, ky) of a W x H transform has
//   R = sqrt((kx / floor(W/2))^2 + (ky / floor(H/2))^2),
// R = 1 at Nyquist along each axis (an ellipse for non-square images, as
// ImDecorr's meshgrid(linspace(-1, 1, W), linspace(-1, 1, H)) on its odd-sized
// crop). Only R < 1 is analysed (ImDecorr's mask0).
//
// Mask radii r_k = r_min + k step, k = 0 .. Nr-1; mask k holds R < r_k. A
// coefficient belongs to mask k iff k >= radius_bin(R): the curves are prefix
// sums of per-bin histograms.
#pragma once

#include <cmath>
#include <cstdint>

#include "nanoscopy/core/hd.hpp"

namespace nanoscopy::decorr_math {

// R^2 of frequency (kx, ky); hx = floor(W/2), hy = floor(H/2) (both >= 1).
template <typename T>
NANOSCOPY_HD T radius2(std::int64_t kx, std::int64_t ky, T inv_hx, T inv_hy) {
  const T x = static_cast<T>(kx) * inv_hx, y = static_cast<T>(ky) * inv_hy;
  return x * x + y * y;
}

// The first mask k with r_k > r (so R < r_k): 0 below r_min, else floor((r - r_min) / step) + 1;
// a value >= Nr means no mask holds the coefficient.
template <typename T>
NANOSCOPY_HD int radius_bin(T r, T r_min, T inv_step, int nr) {
  if (r < r_min) return 0;
  const T t = (r - r_min) * inv_step;
  if (!(t < static_cast<T>(nr))) return nr;
  if constexpr (sizeof(T) == sizeof(float))
    return static_cast<int>(floorf(t)) + 1;
  else
    return static_cast<int>(floor(t)) + 1;
}

// ImDecorr's Fourier Gaussian high-pass weight 1 - exp(-2 g^2 R^2), given
// two_g2 = 2 g^2; two_g2 < 0 stands for "no filter" (the d0 curve): weight 1.
template <typename T>
NANOSCOPY_HD T highpass_weight(T two_g2, T r2) {
  if (two_g2 < 0) return 1;
  if constexpr (sizeof(T) == sizeof(float))
    return 1 - expf(-two_g2 * r2);
  else
    return 1 - exp(-two_g2 * r2);
}

// Column c of a real-to-complex half spectrum stands for itself and its mirror
// W - c: weight 2, except c = 0 and, for even W, c = W/2.
NANOSCOPY_HD int half_weight(std::int64_t c, std::int64_t w) {
  return (c == 0 || 2 * c == w) ? 1 : 2;
}

}  // namespace nanoscopy::decorr_math
