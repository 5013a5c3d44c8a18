// Per-pixel math of spot detection, written once for the CPU reference and the
// CUDA kernels. Every floating operation that decides a candidate is an IEEE
// single operation rounded to nearest (no fused multiply-add, no approximate
// division, even under nvcc --use_fast_math), in the same order on both
// backends: given the same frames they find the same candidates, bit for bit.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "nanoscopy/core/hd.hpp"
#include "nanoscopy/loc/detect/detect_types.hpp"

namespace nanoscopy::detect_detail {

NANOSCOPY_HD float mul(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
NANOSCOPY_HD float add(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
NANOSCOPY_HD float sub(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
NANOSCOPY_HD float div(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
NANOSCOPY_HD bool finite(float v) {
#ifdef __CUDA_ARCH__
  return isfinite(v);
#else
  return std::isfinite(v);
#endif
}

// Index i folded into [0, n) by half-sample symmetric reflection (… 1 0 | 0 1 … n−1 | n−1 n−2 …),
// for any i (a kernel wider than the frame reflects repeatedly).
NANOSCOPY_HD int reflect(int i, int n) {
  if (i >= 0 && i < n) return i;  // inside: no division (the GPU's DoG calls this for every pixel it loads)
  const int period = 2 * n;
  int m = i % period;
  if (m < 0) m += period;
  return m < n ? m : period - 1 - m;
}

// The box × box ROI around (x, y), shifted inside a width × height frame (width, height ≥ box).
NANOSCOPY_HD RoiOrigin roi_origin(int x, int y, int box, int width, int height) {
  const int half = box / 2;
  int x0 = x - half, y0 = y - half;
  x0 = x0 < 0 ? 0 : (x0 > width - box ? width - box : x0);
  y0 = y0 < 0 ? 0 : (y0 > height - box ? height - box : y0);
  return RoiOrigin{x0, y0};
}

// An unsigned key with the order of the floats (−0 just below +0), for radix selection.
NANOSCOPY_HD std::uint32_t order_key(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
NANOSCOPY_HD float from_order_key(std::uint32_t k) {
  const std::uint32_t b = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// Rank of the (lower) median among n values.
NANOSCOPY_HD std::int64_t median_rank(std::int64_t n) {
  return (n - 1) / 2;
}

// Noise sd from the median absolute deviation (Gaussian consistency factor), and the detection level.
// Rounded through double as they always were, so both backends find the same candidates as before: on the GPU
// these are noise_kernel's only FP64 instructions, once per frame in one thread (scripts/sass-fp64 lists them).
NANOSCOPY_HD float noise_sd_from_mad(float mad) {
  return static_cast<float>(1.4826 * static_cast<double>(mad));
}
NANOSCOPY_HD float detection_level(double threshold, float noise_sd) {
  return static_cast<float>(threshold * static_cast<double>(noise_sd));
}
NANOSCOPY_HD float detection_score(float peak, float noise_sd) {
  return noise_sd > 0.f ? div(peak, noise_sd) : INFINITY;
}

template <typename Raw>
NANOSCOPY_HD float value(const Raw* p, std::int64_t i) {
  return static_cast<float>(p[i]);
}

// Whether (x, y) of a filtered frame is a candidate: its value is finite and
// above `level`; it is the maximum of the box × box window around it
// (within the frame), ties going to the first pixel in raster order, so two
// candidates are always more than box/2 apart (Chebyshev); every filtered value
// in that window and every raw pixel of its (shifted) ROI is finite; and it is
// at least `border` px from the edge.
template <typename Raw>
NANOSCOPY_HD bool is_candidate(const float* filtered, const Raw* raw, int width, int height, int x, int y, int box,
                               int border, float level) {
  const float v = filtered[static_cast<std::int64_t>(y) * width + x];
  if (!(v > level) || !finite(v)) return false;
  if (x < border || y < border || x >= width - border || y >= height - border) return false;
  const int half = box / 2;
  for (int dy = -half; dy <= half; ++dy) {
    const int yy = y + dy;
    if (yy < 0 || yy >= height) continue;
    for (int dx = -half; dx <= half; ++dx) {
      const int xx = x + dx;
      if (xx < 0 || xx >= width || (dx == 0 && dy == 0)) continue;
      const float q = filtered[static_cast<std::int64_t>(yy) * width + xx];
      if (!finite(q) || q > v) return false;
      if (q == v && (dy < 0 || (dy == 0 && dx < 0))) return false;
    }
  }
  const RoiOrigin o = roi_origin(x, y, box, width, height);
  for (int j = 0; j < box; ++j)
    for (int i = 0; i < box; ++i)
      if (!finite(value(raw, static_cast<std::int64_t>(o.y0 + j) * width + o.x0 + i))) return false;
  return true;
}

// The components of the unit vectors towards the centre of a box (edge ≤ 31):
// t[a][b] = a/√(a² + b²) for offsets 0 ≤ a, b ≤ 15, computed in double and
// rounded once to float, on the host. −dy/dist = −sign(dy)·t[|dy|][|dx|]
// exactly (negation and the swap of a and b are exact), so a kernel reads the
// table and does no double arithmetic, with the bits of the former per-pixel
// double computation.
inline constexpr int kMaxNetGradientHalf = 15;
struct NetGradientUnits {
  float t[kMaxNetGradientHalf + 1][kMaxNetGradientHalf + 1];
};

inline NetGradientUnits net_gradient_units() {
  NetGradientUnits u{};
  for (int a = 0; a <= kMaxNetGradientHalf; ++a)
    for (int b = 0; b <= kMaxNetGradientHalf; ++b) {
      const double dist = std::sqrt(static_cast<double>(a * a + b * b));
      u.t[a][b] = a == 0 ? 0.f : static_cast<float>(a / dist);
    }
  return u;
}

// −d/dist along the offset d (the other offset e), from the table.
NANOSCOPY_HD float toward_centre(const NetGradientUnits& u, int d, int e) {
  const float m = u.t[d < 0 ? -d : d][e < 0 ? -e : e];
  return d > 0 ? -m : m;
}

// Picasso's net gradient: Σ over the box around (x, y), centre excluded, of the
// raw central-difference gradient (f[k+1] − f[k−1], no ½) projected on the unit
// vector towards the centre. Terms whose difference would leave the frame count 0.
template <typename Raw>
NANOSCOPY_HD float net_gradient(const Raw* raw, int width, int height, int x, int y, int box,
                                const NetGradientUnits& units) {
  const int half = box / 2;
  float ng = 0.f;
  for (int dy = -half; dy <= half; ++dy) {
    const int k = y + dy;
    if (k < 1 || k >= height - 1) continue;
    for (int dx = -half; dx <= half; ++dx) {
      const int m = x + dx;
      if (m < 1 || m >= width - 1 || (dx == 0 && dy == 0)) continue;
      const std::int64_t c = static_cast<std::int64_t>(k) * width + m;
      const float gy = sub(value(raw, c + width), value(raw, c - width));
      const float gx = sub(value(raw, c + 1), value(raw, c - 1));
      const float uy = toward_centre(units, dy, dx);
      const float ux = toward_centre(units, dx, dy);
      ng = add(ng, add(mul(gy, uy), mul(gx, ux)));
    }
  }
  return ng;
}

// DetectSettings::min_net_gradient's rule, one for the CPU and the CUDA detector: 0 keeps every
// candidate (a negative net gradient included), else the net gradient must exceed the minimum
// (strictly, as Picasso's identify keeps ng > Min. Net Gradient). In float, so that the detection
// kernel has no FP64: `below` = net_gradient_floor(minimum), the largest float ≤ the minimum, and a
// float ng exceeds the minimum exactly when it exceeds `below` (no float lies between them).
inline float net_gradient_floor(double min_net_gradient) {
  auto below = static_cast<float>(min_net_gradient);
  if (static_cast<double>(below) > min_net_gradient) below = std::nextafter(below, -INFINITY);
  return below;
}

NANOSCOPY_HD bool passes_net_gradient(float ng, float below) {
  return !(below > 0.0f) || ng > below;
}

}  // namespace nanoscopy::detect_detail
