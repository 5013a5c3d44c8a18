// Per-pixel SOFI math, written once for the CPU reference and the CUDA kernels
// (NANOSCOPY_HD): moments of subsets -> centred moments -> joint cumulant.
#pragma once

#include <cstdint>

#include "nanoscopy/core/hd.hpp"
#include "nanoscopy/sofi/problem.hpp"

namespace nanoscopy::sofi_math {

NANOSCOPY_HD std::int64_t clamp_index(std::int64_t v, std::int64_t n) { return v < 0 ? 0 : (v >= n ? n - 1 : v); }

// m[U] holds E[prod_{i in U} G_i] for every subset mask U of n variables (m[0] = 1).
// Rewrites it in place to E[prod_{i in U} (G_i - d_i)]: one variable at a time,
// m[U] -= d_i m[U \ i] for the U that contain i (m[U \ i] is untouched in that pass).
NANOSCOPY_HD void centre_moments(double* m, const double* d, int n) {
  const int subsets = 1 << n;
  for (int i = 0; i < n; ++i) {
    const int bit = 1 << i;
    for (int u = subsets - 1; u > 0; --u)
      if (u & bit) m[u] -= d[i] * m[u ^ bit];
  }
}

// The joint cumulant of all n variables from the moments m of every subset
// (notes/reference.md 5): m(S) = sum over T subset of S containing S's lowest
// variable of kappa(T) m(S \ T), solved for kappa in order of growing masks.
// `kappa` is scratch of 2^n doubles. Works for uncentred m too (singletons kept).
NANOSCOPY_HD double joint_cumulant(const double* m, int n, double* kappa) {
  const int subsets = 1 << n;
  for (int s = 1; s < subsets; ++s) {
    const int low = s & -s;
    double k = m[s];
    // proper subsets t of s that contain `low`: t = low | r, r a proper subset of s \ low
    const int rest = s ^ low;
    for (int r = (rest - 1) & rest;; r = (r - 1) & rest) {
      if (r != rest) k -= kappa[low | r] * m[rest ^ r];
      if (r == 0) break;
    }
    kappa[s] = k;
  }
  return kappa[subsets - 1];
}

// A block's part of the mean-frame sum at a pixel: K n + sum over its n frames
// of G = F - K (the frames' own sum, since the block stores G's sum). On the GPU
// the product and the sum stay apart (no fused multiply-add), so the value is
// rounded as on the CPU.
NANOSCOPY_HD double block_frame_total(float shift, double frames, double frame_sum) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(__dmul_rn(static_cast<double>(shift), frames), frame_sum);
#else
  return static_cast<double>(shift) * frames + frame_sum;
#endif
}

// One block's accumulated sums, as the finishing step reads them.
struct BlockView {
  const double* terms = nullptr;      // term-major: terms[t * width * height + y * width + x]
  const double* frame_sum = nullptr;  // sum over the block's frames of G = F - K, per pixel
  std::int64_t width = 0, height = 0;
  double frames = 0;      // frames of the block: a term of window L holds frames - L tuples
  double inv_frames = 0;  // 1 / frames summed into `frame_sum`
};

// The estimate of combination c at base pixel (x, y) of one block, times its
// distance factor. The definition (problem.hpp states it in full): the
// variables X_i(t) = F(p_i, t + l_i) - <F(p_i)>_block are centred on the mean
// of ALL the block's frames (Dertinger 2009, bSOFI, pysofi), their joint
// moments are means over the combination's own window of frames - L tuples
// (L = c.window, its largest lag), and the cumulant is the moment-cumulant sum
// over the partitions without singletons: the singletons' moments are set to
// zero, as for variables centred on their mean. So with lags 0, 1, 2:
//   AC_3 = <X_1 X_2 X_3>_W,
//   AC_4 = <X_1 X_2 X_3 X_4>_W - <X_1 X_2>_W <X_3 X_4>_W - <X_1 X_3>_W <X_2 X_4>_W
//          - <X_1 X_4>_W <X_2 X_3>_W,
// and nothing in the value depends on another combination's window. With
// `moments` the value is the block-centred moment <X_1 ... X_n>_W (mSOFI).
NANOSCOPY_HD double combo_value(const SofiCombo& c, const BlockView& b, std::int64_t x, std::int64_t y,
                                bool moments) {
  const int n = c.order;
  const std::int64_t pixels = b.width * b.height;
  const double inv_tuples = 1.0 / (b.frames - static_cast<double>(c.window));
  double d[kSofiMaxOrder];
  for (int i = 0; i < n; ++i) {
    const std::int64_t px = clamp_index(x + c.vars[i].dx, b.width);
    const std::int64_t py = clamp_index(y + c.vars[i].dy, b.height);
    d[i] = b.frame_sum[py * b.width + px] * b.inv_frames;  // block mean - K
  }
  double m[kSofiMaxSubsets];
  double kappa[kSofiMaxSubsets];
  m[0] = 1;
  for (int u = 1; u < (1 << n); ++u) {
    const std::int64_t px = clamp_index(x + c.subset_dx[u], b.width);
    const std::int64_t py = clamp_index(y + c.subset_dy[u], b.height);
    m[u] = b.terms[c.subset_term[u] * pixels + py * b.width + px] * inv_tuples;
  }
  centre_moments(m, d, n);  // m[U] = <prod_{i in U} X_i>_W
  if (moments) return m[(1 << n) - 1] * c.factor;
  for (int i = 0; i < n; ++i) m[1 << i] = 0;  // centred on the block mean: no singleton partitions
  return joint_cumulant(m, n, kappa) * c.factor;
}

// The value of output pixel (X, Y) of plane `plane`: the mean over its combos.
NANOSCOPY_HD double plane_value(const SofiPlane& plane, const SofiCombo* combos, const BlockView& b, std::int64_t X,
                                std::int64_t Y, bool moments) {
  const int up = plane.upsample;
  const std::int64_t x = X / up, y = Y / up;
  const int s = static_cast<int>((Y % up) * up + X % up);
  const int begin = plane.combo_begin[s], end = plane.combo_begin[s + 1];
  double sum = 0;
  for (int k = begin; k < end; ++k) sum += combo_value(combos[k], b, x, y, moments);
  return end > begin ? sum / (end - begin) : 0.0;
}

}  // namespace nanoscopy::sofi_math
