// eSRRF's per-pixel math, written once for the CPU reference and the CUDA
// kernels (NANOSCOPY_HD). Definitions as published (Laine et al., Nature
// Methods 2023) and implemented in NanoJ-eSRRF / NanoPyx (eSRRF_ST):
//
//  1. The frame is magnified by Catmull-Rom interpolation: output pixel (i, j)
//     of the magnified grid samples the frame at (i / M, j / M) in coordinates
//     where input pixel k spans [k, k + 1) (its centre at k + 1/2).
//  2. Robert's cross gradients of the frame: with (r0, c0) = (r - 1, c - 1)
//     clamped to 0, Gc = I[r0,c] - I[r,c0] + I[r,c] - I[r0,c0] and
//     Gr = -I[r0,c] + I[r,c0] + I[r,c] - I[r0,c0].
//  3. The gradients magnified by 2M (Catmull-Rom). The radial gradient
//     convergence (RGC) only reads them on the half-pixel lattice v = k / 2, so we
//     interpolate that lattice only. Robert's cross of pixel (r, c) lies on the
//     pixel corner (r, c), so the lattice reads the gradient image at k / 2 + 1/2
//     in the coordinates above: the gradient where it lies, as NanoJ-eSRRF's
//     vxy_offset = 0.5 / vxy_ArrayShift = 1 do. (NanoPyx's port reads it at k / 2,
//     half a pixel off, so its RGC peaks half a pixel from a spot; we follow NanoJ.)
//  4. RGC at output pixel (xM, yM): centre xc = (xM + 1/2) / M; the lattice points
//     v = (floor(2 xc) + i) / 2, |i| <= floor(2 R) (R = radius, the "fwhm"), inside
//     0 < v <= (magnified size - 1) and at distance 0 < d <= 2 sigma + 1 from the
//     centre (sigma = R / 2.355) each add the weight w = (d exp(-d^2 / (2 sigma^2)))^4
//     to the weight sum and, where the gradient points towards the centre
//     (G . (v - c) < 0), w (1 - |G x (v - c)| / (|G| d)) to the convergence;
//     RGC = sum / weight sum, raised to the sensitivity where it is >= 0 and the
//     sensitivity is > 1 (below 0: 0); times the magnified intensity (intensity
//     weighting). An output pixel within floor(R M) of the border is 0 (no padding).
//  5. Temporal analysis per output pixel over the frames of a time point: AVG
//     (mean), VAR (population variance, lag 0), TAC2 (mean over t of the lag-1
//     products of the mean-subtracted maps, n - 1 terms) — streamed as sums of
//     x - K, K the time point's first value (no cancellation across long runs).
//
// The distances of step 4 depend only on the output pixel's phase (xM mod M,
// yM mod M) and the lattice offset, so their weights are tabulated once per
// problem (EsrrfTable) in double and stored in float; CPU and GPU read the same table.
#pragma once

#include <cmath>
#include <cstdint>

#include "nanoscopy/core/hd.hpp"

namespace nanoscopy::esrrf_math {

// The Catmull-Rom kernel (a = 1/2).
NANOSCOPY_HD float cr_cubic(float v) {
  const float a = 0.5f;
  if (v < 0) v = -v;
  if (v < 1) return v * v * (v * (-a + 2) + (a - 3)) + 1;
  if (v < 2) return -a * v * v * v + 5 * a * v * v - 8 * a * v + 4 * a;
  return 0.0f;
}

// Catmull-Rom interpolation of `image` (rows x cols, row-major) at (r, c),
// pixel k centred at k + 1/2; 0 outside [0, rows) x [0, cols); neighbours
// outside the image count as 0 (NanoPyx's _c_interpolate).
NANOSCOPY_HD float cr_interpolate(const float* image, std::int64_t rows, std::int64_t cols, float r, float c) {
  if (r < 0 || r >= static_cast<float>(rows) || c < 0 || c >= static_cast<float>(cols)) return 0.0f;
  const std::int64_t r_int = static_cast<std::int64_t>(floorf(r - 0.5f));
  const std::int64_t c_int = static_cast<std::int64_t>(floorf(c - 0.5f));
  float q = 0.0f;
  for (int j = 0; j < 4; ++j) {
    const std::int64_t cn = c_int - 1 + j;
    if (cn < 0 || cn >= cols) continue;
    float p = 0.0f;
    for (int i = 0; i < 4; ++i) {
      const std::int64_t rn = r_int - 1 + i;
      if (rn < 0 || rn >= rows) continue;
      p += image[rn * cols + cn] * cr_cubic(r - (static_cast<float>(rn) + 0.5f));
    }
    q += p * cr_cubic(c - (static_cast<float>(cn) + 0.5f));
  }
  return q;
}

// Robert's cross gradients at pixel (r, c): *gc (along columns, x), *gr (along rows, y).
NANOSCOPY_HD void roberts_cross(const float* image, std::int64_t cols, std::int64_t r, std::int64_t c, float* gc,
                                float* gr) {
  const std::int64_t c0 = c > 0 ? c - 1 : 0, r0 = r > 0 ? r - 1 : 0;
  const float i01 = image[r0 * cols + c], i10 = image[r * cols + c0], i00 = image[r0 * cols + c0],
              i11 = image[r * cols + c];
  *gc = i01 - i10 + i11 - i00;
  *gr = -i01 + i10 + i11 - i00;
}

// The coordinate (in input pixels, pixel k centred at k + 1/2) at which lattice
// index k of the gradient images is interpolated: the corner-centred gradients
// read at v = k / 2 (see step 3 above).
NANOSCOPY_HD float lattice_coordinate(std::int64_t k) { return static_cast<float>(k + 1) * 0.5f; }

// One lattice sample of the RGC table: offset (di, dj) from the phase's base
// lattice point, the vector v - c (dx, dy), the distance weight w and 1/d.
struct RgcTap {
  int di = 0, dj = 0;  // column (x) and row (y) lattice offsets
  float dx = 0, dy = 0, weight = 0, inv_distance = 0;
};

// The view the kernels read: taps of phase (py, px) are taps[offset[py * M + px]
// .. offset[py * M + px + 1]); base lattice index of output pixel xM:
// 2 (xM / M) + (2 (xM % M) + 1) / M (integer division), the same for yM.
struct RgcTableView {
  const RgcTap* taps = nullptr;
  const int* offset = nullptr;  // M * M + 1
  int magnification = 1;
  int margin = 0;          // output pixels within this of the border are 0
  float sensitivity = 1;
  bool intensity_weighting = true;
};

NANOSCOPY_HD std::int64_t lattice_base(std::int64_t xm, int magnification) {
  return 2 * (xm / magnification) + (2 * (xm % magnification) + 1) / magnification;
}

// The RGC of output pixel (xm, ym) of one frame from its half-pixel gradient
// lattices g2c, g2r ((2 rows + 1) x (2 cols + 1)); `intensity` is the magnified
// intensity at the pixel (used with intensity weighting). rows, cols: the input frame.
NANOSCOPY_HD float rgc_pixel(const RgcTableView& t, const float* g2c, const float* g2r, std::int64_t rows,
                             std::int64_t cols, std::int64_t xm, std::int64_t ym, float intensity) {
  const int m = t.magnification;
  const std::int64_t rows_m = rows * m, cols_m = cols * m;
  if (xm < t.margin || ym < t.margin || xm >= cols_m - t.margin || ym >= rows_m - t.margin) return 0.0f;
  const std::int64_t lc = 2 * cols + 1;
  const std::int64_t bx = lattice_base(xm, m), by = lattice_base(ym, m);
  const int phase = static_cast<int>((ym % m) * m + (xm % m));
  // 0 < v <= magnified size - 1, v = k / 2: 1 <= k <= 2 (size_m - 1).
  const std::int64_t kx_max = 2 * (cols_m - 1), ky_max = 2 * (rows_m - 1);
  float rgc = 0.0f, weight_sum = 0.0f;
  for (int n = t.offset[phase]; n < t.offset[phase + 1]; ++n) {
    const RgcTap tap = t.taps[n];
    const std::int64_t kx = bx + tap.di, ky = by + tap.dj;
    if (kx < 1 || ky < 1 || kx > kx_max || ky > ky_max) continue;
    // Past the lattice's end (reads beyond the last pixel): its last point, which is 0 (outside the image).
    const std::int64_t sx = kx < 2 * cols ? kx : 2 * cols, sy = ky < 2 * rows ? ky : 2 * rows;
    const float gx = g2c[sy * lc + sx], gy = g2r[sy * lc + sx];
    weight_sum += tap.weight;
    const float g_dot_r = gx * tap.dx + gy * tap.dy;
    if (g_dot_r < 0) {
      // |G x r| / |G| is the distance of the centre from the gradient's line; g_dot_r < 0 means |G| > 0.
      const float dk = 1.0f - fabsf(gy * tap.dx - gx * tap.dy) / sqrtf(gx * gx + gy * gy) * tap.inv_distance;
      rgc += dk * tap.weight;
    }
  }
  rgc = weight_sum > 0 ? rgc / weight_sum : 0.0f;
  if (rgc >= 0 && t.sensitivity > 1)
    rgc = powf(rgc, t.sensitivity);
  else if (rgc < 0)
    rgc = 0.0f;
  return t.intensity_weighting ? rgc * intensity : rgc;
}

// The magnified intensity at output pixel (xm, ym): CR(frame, ym / M, xm / M).
NANOSCOPY_HD float magnified_intensity(const float* frame, std::int64_t rows, std::int64_t cols, int m,
                                       std::int64_t xm, std::int64_t ym) {
  return cr_interpolate(frame, rows, cols, static_cast<float>(ym) / static_cast<float>(m),
                        static_cast<float>(xm) / static_cast<float>(m));
}

// The lattice gradients at lattice point (kx, ky): CR of the Robert's cross
// images at (lattice_coordinate(ky), lattice_coordinate(kx)).
NANOSCOPY_HD void lattice_gradient(const float* gc, const float* gr, std::int64_t rows, std::int64_t cols, int m,
                                   std::int64_t kx, std::int64_t ky, float* out_c, float* out_r) {
  (void)m;
  const float r = lattice_coordinate(ky), c = lattice_coordinate(kx);
  *out_c = cr_interpolate(gc, rows, cols, r, c);
  *out_r = cr_interpolate(gr, rows, cols, r, c);
}

// ---------------------------------------------------------------- temporal sums
// Per output pixel and time point: K (the first value), s1 = sum (x - K),
// s2 = sum (x - K)^2, p = sum of lag-1 products of consecutive (x - K), last = the
// latest x - K. Five planes of one time-point slot, plane-major (EsrrfSlotState).
struct TemporalState {
  float k, s1, s2, p, last;
};

NANOSCOPY_HD void temporal_add(TemporalState& s, float x, bool first) {
  if (first) {
    s.k = x;
    s.s1 = s.s2 = s.p = s.last = 0.0f;
    return;
  }
  const float d = x - s.k;
  s.p += d * s.last;
  s.s1 += d;
  s.s2 += d * d;
  s.last = d;
}

enum class Temporal { avg = 0, var = 1, tac2 = 2 };

// The time point's value from its sums over n frames.
inline double temporal_value(const TemporalState& s, std::int64_t n, Temporal kind) {
  if (n < 1) return 0.0;
  const double m = static_cast<double>(s.s1) / static_cast<double>(n);
  switch (kind) {
    case Temporal::avg: return static_cast<double>(s.k) + m;
    case Temporal::var: return static_cast<double>(s.s2) / static_cast<double>(n) - m * m;
    case Temporal::tac2:
      if (n < 2) return 0.0;
      return (static_cast<double>(s.p) - m * (2.0 * s.s1 - s.last) + static_cast<double>(n - 1) * m * m) /
             static_cast<double>(n - 1);
  }
  return 0.0;
}

}  // namespace nanoscopy::esrrf_math
