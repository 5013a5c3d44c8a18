// The ring geometry of FRC and each coefficient's terms, written once for the
// CPU reference (engine_cpu.cpp) and the CUDA kernels (kernels/frc), so that
// both put every Fourier coefficient in the same ring, with the same terms, by
// construction.
//
// An image of W x H pixels is transformed at its own size (no padding). The
// smaller side N = min(W, H) sets the rings: a coefficient with signed integer
// frequencies (kx, ky), -W/2 <= kx < W/2 ... , has the normalized radius
//   |k| = N sqrt((kx/W)^2 + (ky/H)^2)
// (the plain sqrt(kx^2 + ky^2) for a square image), and lies in ring
// r = floor(|k|); rings 0 .. N/2 are used, coefficients beyond N/2 (the corners)
// are left out.
//
// Frequency axis (issue 19): ring r holds r <= |k| < r + 1, so labelling it r/N
// puts every ring half a ring too low and biased the resolution pessimistically
// by about 0.5 / r_c. Each ring is labelled at the mean radius of the
// coefficients it holds, rbar_r = mean |k| over the ring (frc_ring_radii,
// engine.hpp; about r + 1/2 away from the centre, exactly 0 for ring 0 of a
// square image), i.e. at rbar_r / N cycles per pixel; for a correlation that
// is linear in |k| across a ring with even power, the ring's FRC is exactly
// the correlation at rbar_r. The crossing is interpolated between these
// frequencies (frc.hpp).
//
// The ring index is computed in integers, never by flooring a floating-point
// square root: |k|^2 = S / M^2 with S = kx^2 H^2 + ky^2 W^2 and M = max(W, H),
// so r = floor(sqrt(S) / M) = isqrt(S) / M exactly. S fits in 64 bits for any
// image of fewer than 2^32 pixels (S <= (W H)^2 / 2).
#pragma once

#include <cmath>
#include <cstdint>

#include "nanoscopy/core/hd.hpp"

namespace nanoscopy::frc_math {

// Signed frequency of FFT index i of a transform of length n: i, or i - n above n/2.
NANOSCOPY_HD std::int64_t signed_frequency(std::int64_t i, std::int64_t n) {
  return 2 * i <= n ? i : i - n;
}

// floor(sqrt(s)), exact for every 64-bit s (a floating-point guess, then corrected).
NANOSCOPY_HD std::uint64_t isqrt(std::uint64_t s) {
  auto r = static_cast<std::uint64_t>(sqrt(static_cast<double>(s)));
  while (r > 0 && r * r > s) --r;
  while ((r + 1) * (r + 1) <= s) ++r;
  return r;
}

// Ring of frequency (kx, ky) of a W x H image; a value above last_ring(W, H)
// means the coefficient lies outside the rings.
NANOSCOPY_HD std::int64_t ring_index(std::int64_t kx, std::int64_t ky, std::int64_t w, std::int64_t h) {
  const auto ukx = static_cast<std::uint64_t>(kx < 0 ? -kx : kx), uky = static_cast<std::uint64_t>(ky < 0 ? -ky : ky);
  const auto uw = static_cast<std::uint64_t>(w), uh = static_cast<std::uint64_t>(h);
  const std::uint64_t s = ukx * ukx * uh * uh + uky * uky * uw * uw;
  const std::uint64_t m = uw > uh ? uw : uh;
  return static_cast<std::int64_t>(isqrt(s) / m);
}

// The normalized radius |k| = sqrt(S) / M of frequency (kx, ky) (ring_index's S
// and M), in double: the ring's label is the mean of this over its coefficients.
NANOSCOPY_HD double radius(std::int64_t kx, std::int64_t ky, std::int64_t w, std::int64_t h) {
  const double x = static_cast<double>(kx) * static_cast<double>(h), y = static_cast<double>(ky) * static_cast<double>(w);
  return sqrt(x * x + y * y) / static_cast<double>(w > h ? w : h);
}

// The last ring, N/2 with N = min(W, H).
NANOSCOPY_HD std::int64_t last_ring(std::int64_t w, std::int64_t h) {
  return (w < h ? w : h) / 2;
}

// A real image's spectrum is Hermitian, F(-k) = conj F(k), so a real-to-complex
// transform keeps columns kx = 0 .. W/2 only. Column c stands for itself and
// its mirror W - c (same ring, same Re F1 F2*, same |F|^2): weight 2, except
// c = 0 and, for even W, c = W/2, whose mirrors are in the same column.
NANOSCOPY_HD double half_spectrum_weight(std::int64_t c, std::int64_t w) {
  return (c == 0 || 2 * c == w) ? 1.0 : 2.0;
}

// The window's weight at pixel (x, y): wx[x] wy[y], the separable Tukey
// window (engine.hpp: tukey_window) of both images.
NANOSCOPY_HD double window_weight(const double* wx, const double* wy, std::int64_t x, std::int64_t y) {
  return wy[y] * wx[x];
}

// What one coefficient of the half spectra, (re1, im1) of image 1 and
// (re2, im2) of image 2, adds to its ring's sums, times its weight
// (half_spectrum_weight): Re F1 F2*, |F1|^2, |F2|^2.
struct RingTerms {
  double cross, power1, power2;
};

NANOSCOPY_HD RingTerms ring_terms(double re1, double im1, double re2, double im2, double weight) {
  return {weight * (re1 * re2 + im1 * im2), weight * (re1 * re1 + im1 * im1), weight * (re2 * re2 + im2 * im2)};
}

}  // namespace nanoscopy::frc_math
