#include "nanoscopy/fit2d/calibrate_spline.hpp"
#include "nanoscopy/core/keys_cubic.hpp"

#include <fftw3.h>

#include <algorithm>
#include <array>
#include <complex>
#include <cmath>
#include <numbers>
#include <string>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/spline_psf_build.hpp"
#include "nanoscopy/io/image_png.hpp"

namespace nanoscopy {
namespace {

constexpr int kMargin = 2;  // px cut around the spline's box on each side, for the lateral shifts

double quantile(std::vector<float> v, double q) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

double robust_sigma(std::vector<float> v) {
  if (v.empty()) return 0;
  const double med = quantile(v, 0.5);
  for (auto& x : v) x = static_cast<float>(std::abs(x - med));
  return 1.4826 * quantile(std::move(v), 0.5);
}

// A stack of n × n × frames, x fastest, sampled with Keys' cubic convolution; indices clamped to the edges.
struct Cube {
  const float* data;
  std::int64_t n, frames;
  float at(std::int64_t i, std::int64_t j, std::int64_t k) const {
    i = std::clamp<std::int64_t>(i, 0, n - 1);
    j = std::clamp<std::int64_t>(j, 0, n - 1);
    k = std::clamp<std::int64_t>(k, 0, frames - 1);
    return data[(k * n + j) * n + i];
  }
  double sample(double x, double y, double z) const {
    const double fx = std::floor(x), fy = std::floor(y), fz = std::floor(z);
    double wx[4], wy[4], wz[4];
    keys_cubic_weights(x - fx, wx);
    keys_cubic_weights(y - fy, wy);
    keys_cubic_weights(z - fz, wz);
    const auto ix = static_cast<std::int64_t>(fx) - 1, iy = static_cast<std::int64_t>(fy) - 1,
               iz = static_cast<std::int64_t>(fz) - 1;
    double v = 0;
    for (int c = 0; c < 4; ++c) {
      double plane = 0;
      for (int b = 0; b < 4; ++b) {
        double row = 0;
        for (int a = 0; a < 4; ++a) row += wx[a] * at(ix + a, iy + b, iz + c);
        plane += wy[b] * row;
      }
      v += wz[c] * plane;
    }
    return v;
  }
};

// Every n × n slice of `stack` (x fastest) moved so that out(i, j) = in(i + sx, j + sy): a phase ramp on its
// 2D FFT (exact for the band-limited PSF on a camera that samples it at Nyquist or finer, as a bead stack's does;
// the slice is periodic, which the cut's background-free border makes harmless). Cubic convolution would blur a
// sharp in-focus slice by a few % of its peak.
void fourier_shift_xy(std::vector<float>& stack, std::int64_t n, std::int64_t frames, double sx, double sy) {
  if (sx == 0 && sy == 0) return;
  const auto count = static_cast<std::size_t>(n * n);
  auto* a = static_cast<fftw_complex*>(fftw_malloc(sizeof(fftw_complex) * count));
  auto* b = static_cast<fftw_complex*>(fftw_malloc(sizeof(fftw_complex) * count));
  const fftw_plan forward = fftw_plan_dft_2d(static_cast<int>(n), static_cast<int>(n), a, b, FFTW_FORWARD, FFTW_ESTIMATE);
  const fftw_plan backward = fftw_plan_dft_2d(static_cast<int>(n), static_cast<int>(n), b, a, FFTW_BACKWARD, FFTW_ESTIMATE);
  std::vector<std::complex<double>> ramp_x(static_cast<std::size_t>(n)), ramp_y(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t f = 2 * k < n ? k : k - n;
    const double px = 2 * std::numbers::pi * static_cast<double>(f) * sx / static_cast<double>(n);
    const double py = 2 * std::numbers::pi * static_cast<double>(f) * sy / static_cast<double>(n);
    // The Nyquist bin of an even n is its own negative: its real part only.
    ramp_x[static_cast<std::size_t>(k)] = 2 * k == n ? std::complex<double>(std::cos(px), 0) : std::polar(1.0, px);
    ramp_y[static_cast<std::size_t>(k)] = 2 * k == n ? std::complex<double>(std::cos(py), 0) : std::polar(1.0, py);
  }
  for (std::int64_t t = 0; t < frames; ++t) {
    float* slice = stack.data() + static_cast<std::size_t>(t) * count;
    for (std::size_t k = 0; k < count; ++k) a[k][0] = slice[k], a[k][1] = 0;
    fftw_execute(forward);
    for (std::int64_t ky = 0; ky < n; ++ky)
      for (std::int64_t kx = 0; kx < n; ++kx) {
        const auto k = static_cast<std::size_t>(ky * n + kx);
        const std::complex<double> v = std::complex<double>(b[k][0], b[k][1]) * ramp_x[static_cast<std::size_t>(kx)] *
                                       ramp_y[static_cast<std::size_t>(ky)];
        b[k][0] = v.real();
        b[k][1] = v.imag();
      }
    fftw_execute(backward);
    for (std::size_t k = 0; k < count; ++k) slice[k] = static_cast<float>(a[k][0] / static_cast<double>(count));
  }
  fftw_destroy_plan(forward);
  fftw_destroy_plan(backward);
  fftw_free(a);
  fftw_free(b);
}

// The stack moved along z so that out(k) = in(k + sz), Keys' cubic convolution (the z step oversamples the PSF).
std::vector<float> shift_z(const std::vector<float>& stack, std::int64_t n, std::int64_t frames, double sz) {
  std::vector<float> out(stack.size());
  const Cube c{stack.data(), n, frames};
  for (std::int64_t t = 0; t < frames; ++t) {
    const double z = static_cast<double>(t) + sz, fz = std::floor(z);
    double w[4];
    keys_cubic_weights(z - fz, w);
    const auto iz = static_cast<std::int64_t>(fz) - 1;
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) {
        double v = 0;
        for (int q = 0; q < 4; ++q) v += w[q] * c.at(i, j, iz + q);
        out[static_cast<std::size_t>((t * n + j) * n + i)] = static_cast<float>(v);
      }
  }
  return out;
}

// The volume (n × n × frames, x fastest) on a grid `factor` times finer in x and y: (n − 1)·factor + 1 samples a
// side, fine sample (i·factor + a, j·factor + b) = the volume at (i + a/factor, j + b/factor) by the Fourier phase
// ramp (exact for the band-limited PSF, as the alignment's shifts). Negative values are set to 0 where `clip`.
std::vector<float> refine_xy(const std::vector<float>& volume, std::int64_t n, std::int64_t frames, int factor, bool clip) {
  if (factor <= 1) return volume;
  const std::int64_t nf = (n - 1) * factor + 1;
  std::vector<float> fine(static_cast<std::size_t>(nf * nf * frames));
  for (int b = 0; b < factor; ++b)
    for (int a = 0; a < factor; ++a) {
      std::vector<float> moved = volume;
      fourier_shift_xy(moved, n, frames, static_cast<double>(a) / factor, static_cast<double>(b) / factor);
      for (std::int64_t k = 0; k < frames; ++k)
        for (std::int64_t j = 0; j * factor + b < nf; ++j)
          for (std::int64_t i = 0; i * factor + a < nf; ++i) {
            const float v = moved[static_cast<std::size_t>((k * n + j) * n + i)];
            fine[static_cast<std::size_t>((k * nf + j * factor + b) * nf + i * factor + a)] = clip ? std::max(v, 0.0f) : v;
          }
    }
  return fine;
}

// The vertex of the parabola through (−1, a), (0, b), (1, c), within ±0.5 (0 where b is no maximum).
double parabola_peak(double a, double b, double c) {
  const double d = a - 2 * b + c;
  if (!(d < 0)) return 0;
  return std::clamp(0.5 * (a - c) / d, -0.5, 0.5);
}

struct Candidate {
  std::int64_t x, y;
  double amplitude, width;
  std::string dropped;
};

}  // namespace

void smooth_lines(std::vector<float>& data, std::int64_t n, std::int64_t stride, const std::vector<std::int64_t>& starts,
                  double period_samples) {
  if (n < 3 || !(period_samples > 2)) return;
  // λ at most 1e10 (a period of ≈ 2000 samples, the line's least-squares straight line for any stack):
  // beyond it I + λDᵀD (D's null space: straight lines) is too ill-conditioned for the factorisation.
  const double lambda = std::min(1e10, std::pow(period_samples / (2 * std::numbers::pi), 4));
  // A = I + λ DᵀD (D: second differences), symmetric pentadiagonal, positive definite (eigenvalues ≥ 1):
  // its banded Cholesky factor L (diagonal, first and second subdiagonal) exists and is finite.
  std::vector<double> a0(static_cast<std::size_t>(n), 1), a1(static_cast<std::size_t>(n), 0),
      a2(static_cast<std::size_t>(n), 0);
  for (std::int64_t r = 0; r + 2 < n; ++r) {  // row r of D: [1, −2, 1] at r, r+1, r+2
    const double d[3] = {1, -2, 1};
    for (int p = 0; p < 3; ++p)
      for (int q = 0; q < 3; ++q) {
        const std::int64_t i = r + p, j = r + q;
        if (i == j) a0[static_cast<std::size_t>(i)] += lambda * d[p] * d[q];
        else if (i - j == 1) a1[static_cast<std::size_t>(i)] += lambda * d[p] * d[q];
        else if (i - j == 2) a2[static_cast<std::size_t>(i)] += lambda * d[p] * d[q];
      }
  }
  std::vector<double> l0(static_cast<std::size_t>(n)), l1(static_cast<std::size_t>(n)), l2(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const auto u = static_cast<std::size_t>(i);
    l2[u] = i >= 2 ? a2[u] / l0[u - 2] : 0;
    l1[u] = i >= 1 ? (a1[u] - (i >= 2 ? l2[u] * l1[u - 1] : 0)) / l0[u - 1] : 0;
    l0[u] = std::sqrt(std::max(1e-12, a0[u] - l1[u] * l1[u] - l2[u] * l2[u]));
  }
  std::vector<double> y(static_cast<std::size_t>(n));
  for (const std::int64_t s : starts) {
    for (std::int64_t i = 0; i < n; ++i) y[static_cast<std::size_t>(i)] = data[static_cast<std::size_t>(s + i * stride)];
    for (std::int64_t i = 0; i < n; ++i) {  // L z = y
      const auto u = static_cast<std::size_t>(i);
      double v = y[u];
      if (i >= 1) v -= l1[u] * y[u - 1];
      if (i >= 2) v -= l2[u] * y[u - 2];
      y[u] = v / l0[u];
    }
    for (std::int64_t i = n - 1; i >= 0; --i) {  // Lᵀ f = z
      const auto u = static_cast<std::size_t>(i);
      double v = y[u];
      if (i + 1 < n) v -= l1[u + 1] * y[u + 1];
      if (i + 2 < n) v -= l2[u + 2] * y[u + 2];
      y[u] = v / l0[u];
    }
    bool finite = true;
    for (const double v : y) finite = finite && std::isfinite(v) && std::abs(v) < 3e38;
    if (!finite) continue;  // never: the line is left as it was rather than made NaN
    for (std::int64_t i = 0; i < n; ++i) data[static_cast<std::size_t>(s + i * stride)] = static_cast<float>(y[static_cast<std::size_t>(i)]);
  }
}

SplineCalibrationResult calibrate_spline(const std::vector<float>& input, std::int64_t width, std::int64_t height,
                                         std::int64_t frames, const SplineCalibrationSettings& st,
                                         const std::string& source) {
  if (frames < 6)
    throw InputError(source, std::to_string(frames) + " frame" + (frames == 1 ? "" : "s") +
                                 ": a calibration needs a bead z-stack of at least 6 frames");
  if (st.box < 7 || st.box % 2 == 0) throw UsageError("--box", "the spline's box must be odd and at least 7 px");
  if (!(st.z_step_nm > 0) || !std::isfinite(st.z_step_nm)) throw UsageError("--z-step", "must be a positive number of nm");
  const int box = st.box, cut = box + 2 * kMargin;
  if (width < cut || height < cut)
    throw InputError(source, std::to_string(width) + "x" + std::to_string(height) + " frames are smaller than a bead's " +
                                 std::to_string(cut) + "x" + std::to_string(cut) + " px cut (--box " +
                                 std::to_string(box) + " + 2 x 2)");
  const std::int64_t plane = width * height;
  SplineCalibrationResult result;
  std::vector<float> s(input.begin(), input.begin() + plane * frames);
  // Non-finite pixels (a broken frame) count as the frame's median.
  for (std::int64_t t = 0; t < frames; ++t) {
    float* f = s.data() + t * plane;
    std::vector<float> finite;
    for (std::int64_t k = 0; k < plane; ++k)
      if (std::isfinite(f[k])) finite.push_back(f[k]);
    const auto med = static_cast<float>(finite.empty() ? 0.0 : quantile(finite, 0.5));
    for (std::int64_t k = 0; k < plane; ++k)
      if (!std::isfinite(f[k])) f[k] = med;
  }
  const auto px = [&](std::int64_t t, std::int64_t x, std::int64_t y) -> float& {
    return s[static_cast<std::size_t>(t * plane + y * width + x)];
  };

  // 1. Hot pixels.
  {
    std::vector<float> excess;  // pixel − median of its 8 neighbours, in a few frames: the noise
    const std::int64_t every = std::max<std::int64_t>(1, frames / 16);
    float nb[8];
    for (std::int64_t t = 0; t < frames; t += every)
      for (std::int64_t y = 1; y + 1 < height; ++y)
        for (std::int64_t x = 1; x + 1 < width; ++x) {
          int c = 0;
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx)
              if (dx || dy) nb[c++] = px(t, x + dx, y + dy);
          std::nth_element(nb, nb + 4, nb + 8);
          excess.push_back(px(t, x, y) - nb[4]);
        }
    const double noise = std::max(robust_sigma(std::move(excess)), 1e-6);
    std::vector<std::uint8_t> hot(static_cast<std::size_t>(plane), 0);
    for (std::int64_t y = 0; y < height; ++y)
      for (std::int64_t x = 0; x < width; ++x) {
        std::int64_t above = 0;
        for (std::int64_t t = 0; t < frames; ++t) {
          float top = -INFINITY;
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
              const std::int64_t u = x + dx, v = y + dy;
              if ((dx || dy) && u >= 0 && v >= 0 && u < width && v < height) top = std::max(top, px(t, u, v));
            }
          if (px(t, x, y) - top > 6 * noise) ++above;
        }
        if (above * 4 >= frames * 3) hot[static_cast<std::size_t>(y * width + x)] = 1;
      }
    for (std::int64_t y = 0; y < height; ++y)
      for (std::int64_t x = 0; x < width; ++x) {
        if (!hot[static_cast<std::size_t>(y * width + x)]) continue;
        ++result.hot_pixels;
        for (std::int64_t t = 0; t < frames; ++t) {
          std::vector<float> around;
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
              const std::int64_t u = x + dx, v = y + dy;
              if ((dx || dy) && u >= 0 && v >= 0 && u < width && v < height && !hot[static_cast<std::size_t>(v * width + u)])
                around.push_back(px(t, u, v));
            }
          if (!around.empty()) px(t, x, y) = static_cast<float>(quantile(around, 0.5));
        }
      }
  }

  // 2. Beads in the maximum projection of the 3×3-mean frames.
  std::vector<float> proj(static_cast<std::size_t>(plane), -INFINITY);
  for (std::int64_t t = 0; t < frames; ++t)
    for (std::int64_t y = 0; y < height; ++y)
      for (std::int64_t x = 0; x < width; ++x) {
        double sum = 0;
        int c = 0;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            const std::int64_t u = x + dx, v = y + dy;
            if (u >= 0 && v >= 0 && u < width && v < height) sum += px(t, u, v), ++c;
          }
        auto& p = proj[static_cast<std::size_t>(y * width + x)];
        p = std::max(p, static_cast<float>(sum / c));
      }
  const double bg = quantile(proj, 0.5);
  const double spread = std::max(robust_sigma(proj), 1e-6 * std::max(1.0, std::abs(bg)));
  std::vector<Candidate> candidates;
  constexpr int peak_half = 3;
  for (std::int64_t y = 1; y + 1 < height; ++y)
    for (std::int64_t x = 1; x + 1 < width; ++x) {
      const float v = proj[static_cast<std::size_t>(y * width + x)];
      if (!(v > bg + 10 * spread)) continue;
      bool peak = true;
      for (int dy = -peak_half; dy <= peak_half && peak; ++dy)
        for (int dx = -peak_half; dx <= peak_half && peak; ++dx) {
          const std::int64_t u = x + dx, w = y + dy;
          if ((dx || dy) && u >= 0 && w >= 0 && u < width && w < height) {
            const float o = proj[static_cast<std::size_t>(w * width + u)];
            // Ties go to the first in raster order.
            if (o > v || (o == v && (w < y || (w == y && u < x)))) peak = false;
          }
        }
      if (!peak) continue;
      double m0 = 0, m2 = 0;
      for (int dy = -4; dy <= 4; ++dy)
        for (int dx = -4; dx <= 4; ++dx) {
          const std::int64_t u = x + dx, w = y + dy;
          if (u < 0 || w < 0 || u >= width || w >= height) continue;
          const double a = std::max(0.0, proj[static_cast<std::size_t>(w * width + u)] - bg);
          m0 += a;
          m2 += a * (dx * dx + dy * dy);
        }
      candidates.push_back({x, y, v - bg, m0 > 0 ? std::sqrt(0.5 * m2 / m0) : 0.0, ""});
    }
  if (candidates.empty())
    throw InputError(source, "no bead found: nothing in the maximum projection stands 10 sigma above its background");
  std::vector<float> amplitudes;
  for (const auto& c : candidates) amplitudes.push_back(static_cast<float>(c.amplitude));
  std::sort(amplitudes.begin(), amplitudes.end(), std::greater<>());
  amplitudes.resize(std::min<std::size_t>(amplitudes.size(), 5));
  const double typical = quantile(amplitudes, 0.5);
  std::vector<float> widths;
  for (auto& c : candidates) {
    if (c.amplitude < 0.2 * typical) c.dropped = "dim";
    else if (c.width < 0.5) c.dropped = "a single-pixel spike";
    else widths.push_back(static_cast<float>(c.width));
  }
  const double typical_width = quantile(widths, 0.5);
  for (auto& c : candidates)
    if (c.dropped.empty() && c.width > 2.5 * typical_width) c.dropped = "wider than a bead";
  const std::int64_t half = cut / 2;
  for (auto& c : candidates) {
    if (c.dropped == "dim" || c.dropped == "a single-pixel spike") continue;
    for (const auto& o : candidates)
      if (&o != &c && o.dropped != "dim" && std::max(std::abs(o.x - c.x), std::abs(o.y - c.y)) < cut)
        c.dropped = c.dropped.empty() ? "too close to another bead" : c.dropped;
    if (c.dropped.empty() && (c.x - half < 0 || c.y - half < 0 || c.x + half >= width || c.y + half >= height))
      c.dropped = "too close to the edge";
  }

  // 3. Each bead's stack, background-free and of unit sum.
  const std::int64_t cube = cut * cut * frames;
  std::vector<std::vector<float>> stacks;
  std::vector<std::size_t> bead_of;  // index into result.beads
  for (const auto& c : candidates) {
    SplineBead bead;
    bead.x = static_cast<double>(c.x);
    bead.y = static_cast<double>(c.y);
    bead.dropped = c.dropped;
    if (c.dropped.empty()) {
      std::vector<float> b(static_cast<std::size_t>(cube));
      std::vector<float> border;
      for (std::int64_t t = 0; t < frames; ++t)
        for (std::int64_t j = 0; j < cut; ++j)
          for (std::int64_t i = 0; i < cut; ++i) {
            const float v = px(t, c.x - half + i, c.y - half + j);
            b[static_cast<std::size_t>((t * cut + j) * cut + i)] = v;
            if (i == 0 || j == 0 || i == cut - 1 || j == cut - 1) border.push_back(v);
          }
      const auto background = static_cast<float>(quantile(border, 0.5));
      double sum = 0;
      for (std::int64_t t = 0; t < frames; ++t)
        for (std::int64_t j = kMargin; j < cut - kMargin; ++j)
          for (std::int64_t i = kMargin; i < cut - kMargin; ++i)
            sum += std::max(0.0f, b[static_cast<std::size_t>((t * cut + j) * cut + i)] - background);
      if (sum > 0) {
        for (auto& v : b) v = static_cast<float>((v - background) / sum);
        stacks.push_back(std::move(b));
        bead_of.push_back(result.beads.size());
      } else {
        bead.dropped = "no signal above its background";
      }
    }
    result.beads.push_back(bead);
  }
  if (stacks.empty()) {
    std::string why;
    int dim = 0, close = 0, edge = 0, other = 0;
    for (const auto& b : result.beads)
      (b.dropped == "dim" ? dim : b.dropped == "too close to another bead" ? close
                                  : b.dropped == "too close to the edge"   ? edge
                                                                           : other)++;
    throw InputError(source, "no bead to calibrate with: " + std::to_string(result.beads.size()) +
                                 " spots found, " + std::to_string(dim) + " dim, " + std::to_string(close) +
                                 " too close to another (closer than --box + 4 px), " + std::to_string(edge) +
                                 " at the edge, " + std::to_string(other) + " not bead-shaped");
  }

  // 4. Alignment against a reference on the box × box × frames grid.
  const std::int64_t vox = static_cast<std::int64_t>(box) * box * frames;
  std::vector<float> reference(static_cast<std::size_t>(vox));
  {
    // The brightest bead first (candidates are in raster order: pick by its in-focus peak).
    std::size_t best = 0;
    double best_peak = -1;
    for (std::size_t b = 0; b < stacks.size(); ++b) {
      const auto& c = candidates[bead_of[b]];
      if (c.amplitude > best_peak) best_peak = c.amplitude, best = b;
    }
    for (std::int64_t t = 0; t < frames; ++t)
      for (std::int64_t j = 0; j < box; ++j)
        for (std::int64_t i = 0; i < box; ++i)
          reference[static_cast<std::size_t>((t * box + j) * box + i)] =
              stacks[best][static_cast<std::size_t>((t * cut + j + kMargin) * cut + i + kMargin)];
  }
  const auto z_search = static_cast<std::int64_t>(
      std::clamp(std::ceil(st.z_search_nm / st.z_step_nm), 1.0, static_cast<double>(frames / 3)));
  const auto correlate = [&](const std::vector<float>& b, std::int64_t dx, std::int64_t dy, std::int64_t dz) {
    // The plain cross-correlation (zero beyond the stack): a mean over the overlap would favour shifts
    // that leave out the wide, dim ends of the stack.
    double sum = 0;
    for (std::int64_t t = std::max<std::int64_t>(0, -dz); t < frames && t + dz < frames; ++t)
      for (std::int64_t j = 0; j < box; ++j) {
        const float* r = reference.data() + (t * box + j) * box;
        const float* q = b.data() + ((t + dz) * cut + j + kMargin + dy) * cut + kMargin + dx;
        for (std::int64_t i = 0; i < box; ++i) sum += static_cast<double>(r[i]) * q[i];
      }
    return sum;
  };
  std::vector<std::array<double, 3>> shifts(stacks.size());
  std::vector<std::vector<float>> aligned(stacks.size(), std::vector<float>(static_cast<std::size_t>(vox)));
  std::vector<float> average(static_cast<std::size_t>(vox));
  const auto resample_and_average = [&](const std::vector<std::size_t>& use) {
    std::fill(average.begin(), average.end(), 0.0f);
    for (const std::size_t b : use) {
      std::vector<float> moved_bead = shift_z(stacks[b], cut, frames, shifts[b][2]);
      fourier_shift_xy(moved_bead, cut, frames, shifts[b][0], shifts[b][1]);
      for (std::int64_t t = 0; t < frames; ++t)
        for (std::int64_t j = 0; j < box; ++j)
          for (std::int64_t i = 0; i < box; ++i) {
            const auto k = static_cast<std::size_t>((t * box + j) * box + i);
            aligned[b][k] = moved_bead[static_cast<std::size_t>((t * cut + j + kMargin) * cut + i + kMargin)];
            average[k] += aligned[b][k] / static_cast<float>(use.size());
          }
    }
  };
  std::vector<std::size_t> use(stacks.size());
  for (std::size_t b = 0; b < use.size(); ++b) use[b] = b;
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t b = 0; b < stacks.size(); ++b) {
      const auto& bead = stacks[b];
      double c[5][5];
      std::int64_t bx = 0, by = 0;
      // x, y: the z projections' correlation (dz 0 is the sum over all slices of the 3D correlation).
      for (int dy = -2; dy <= 2; ++dy)
        for (int dx = -2; dx <= 2; ++dx) c[dy + 2][dx + 2] = correlate(bead, dx, dy, 0);
      for (int dy = -2; dy <= 2; ++dy)
        for (int dx = -2; dx <= 2; ++dx)
          if (c[dy + 2][dx + 2] > c[by + 2][bx + 2]) bx = dx, by = dy;
      std::int64_t bz = 0;
      double best = correlate(bead, bx, by, 0);
      for (std::int64_t dz = -z_search; dz <= z_search; ++dz) {
        const double v = correlate(bead, bx, by, dz);
        if (v > best) best = v, bz = dz;
      }
      const auto at = [&](std::int64_t dx, std::int64_t dy, std::int64_t dz) {
        if (std::abs(dx) > kMargin || std::abs(dy) > kMargin || std::abs(dz) >= frames) return -static_cast<double>(INFINITY);
        return correlate(bead, dx, dy, dz);
      };
      const double c0 = at(bx, by, bz);
      const auto refine = [&](double lo, double hi) { return std::isfinite(lo) && std::isfinite(hi) ? parabola_peak(lo, c0, hi) : 0.0; };
      shifts[b] = {static_cast<double>(bx) + refine(at(bx - 1, by, bz), at(bx + 1, by, bz)),
                   static_cast<double>(by) + refine(at(bx, by - 1, bz), at(bx, by + 1, bz)),
                   static_cast<double>(bz) + refine(at(bx, by, bz - 1), at(bx, by, bz + 1))};
    }
    // The average is the mean bead: shifts relative to their mean.
    std::array<double, 3> mean{0, 0, 0};
    for (const auto& sh : shifts)
      for (int a = 0; a < 3; ++a) mean[static_cast<std::size_t>(a)] += sh[static_cast<std::size_t>(a)] / static_cast<double>(shifts.size());
    for (auto& sh : shifts)
      for (int a = 0; a < 3; ++a) sh[static_cast<std::size_t>(a)] -= mean[static_cast<std::size_t>(a)];
    resample_and_average(use);
    reference = average;
  }
  // Outliers: a bead unlike the others (a cluster, a bead that moved) is dropped.
  std::vector<double> residual(stacks.size());
  const auto residuals = [&] {
    double norm = 0;
    for (const float v : average) norm += static_cast<double>(v) * v;
    norm = std::sqrt(norm / static_cast<double>(vox));
    for (std::size_t b = 0; b < stacks.size(); ++b) {
      double r = 0;
      for (std::size_t k = 0; k < average.size(); ++k) r += std::pow(aligned[b][k] - average[k], 2);
      residual[b] = norm > 0 ? std::sqrt(r / static_cast<double>(vox)) / norm : 0;
    }
  };
  residuals();
  if (stacks.size() >= 3) {
    std::vector<float> r(residual.begin(), residual.end());
    const double med = quantile(r, 0.5);
    std::vector<std::size_t> keep;
    for (std::size_t b = 0; b < stacks.size(); ++b)
      if (residual[b] <= 3 * med) keep.push_back(b);
      else result.beads[bead_of[b]].dropped = "unlike the other beads (residual " + std::to_string(residual[b]) + ")";
    if (keep.size() < stacks.size()) {
      use = keep;
      resample_and_average(use);
      residuals();
    }
  }
  // The slices every used bead covers.
  double low = 0, high = 0;
  for (const std::size_t b : use) low = std::min(low, shifts[b][2]), high = std::max(high, shifts[b][2]);
  const auto first = static_cast<std::int64_t>(std::ceil(-low - 1e-9));
  const auto last = frames - 1 - static_cast<std::int64_t>(std::ceil(high - 1e-9));
  const std::int64_t nz = last - first + 1;
  if (nz < 4)
    throw InputError(source, "the beads' z offsets leave fewer than 4 slices they all cover (" + std::to_string(frames) +
                                 " frames)");

  // 5. The volume: smoothed, non-negative.
  std::vector<float> volume(static_cast<std::size_t>(box) * box * static_cast<std::size_t>(nz));
  std::copy(average.begin() + first * box * box, average.begin() + (last + 1) * box * box, volume.begin());
  {
    std::vector<std::int64_t> starts;
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(box) * box; ++k) starts.push_back(k);
    smooth_lines(volume, nz, static_cast<std::int64_t>(box) * box, starts, st.smooth_z_nm / st.z_step_nm);
    if (st.smooth_xy_px > 0) {
      starts.clear();
      for (std::int64_t k = 0; k < nz; ++k)
        for (std::int64_t j = 0; j < box; ++j) starts.push_back((k * box + j) * box);
      smooth_lines(volume, box, 1, starts, st.smooth_xy_px);
      starts.clear();
      for (std::int64_t k = 0; k < nz; ++k)
        for (std::int64_t i = 0; i < box; ++i) starts.push_back(k * box * box + i);
      smooth_lines(volume, box, box, starts, st.smooth_xy_px);
    }
  }
  for (auto& v : volume) v = std::isfinite(v) ? std::max(v, 0.0f) : 0.0f;

  // 6. Focus and centre: the focal slice's centroid moved onto the middle voxel (SMAP's and DECODE's
  // x0 is one index for x and y), twice (the centroid of the moved slice is then within 0.01 px).
  const double centre_frame = st.z0_nm ? -*st.z0_nm / st.z_step_nm : 0.5 * static_cast<double>(frames - 1);
  const double focus = std::clamp(centre_frame - static_cast<double>(first), 0.0, static_cast<double>(nz - 1));
  const auto k0 = std::min<std::int64_t>(static_cast<std::int64_t>(focus), nz - 2);
  const double f = focus - static_cast<double>(k0);
  const double mid = 0.5 * (box - 1);
  double m0 = 0;
  std::array<double, 2> moved{0, 0};
  for (int pass = 0; pass < 3; ++pass) {
    double mx = 0, my = 0;
    m0 = 0;
    for (std::int64_t j = 0; j < box; ++j)
      for (std::int64_t i = 0; i < box; ++i) {
        const double v = (1 - f) * volume[static_cast<std::size_t>((k0 * box + j) * box + i)] +
                         f * volume[static_cast<std::size_t>(((k0 + 1) * box + j) * box + i)];
        m0 += v;
        mx += v * static_cast<double>(i);
        my += v * static_cast<double>(j);
      }
    if (!(m0 > 0) || pass == 2) break;
    const double dx = std::clamp(mx / m0 - mid, -2.0, 2.0), dy = std::clamp(my / m0 - mid, -2.0, 2.0);
    if (std::abs(dx) < 1e-3 && std::abs(dy) < 1e-3) break;
    moved[0] += dx;
    moved[1] += dy;
    fourier_shift_xy(volume, box, nz, dx, dy);
    for (auto& v : volume) v = std::max(v, 0.0f);
  }
  const double cx = mid, cy = mid;
  const double scale = m0 > 0 ? 1.0 / m0 : 1.0;
  for (auto& v : volume) v = static_cast<float>(v * scale);

  // 7. The spline's lateral grid: `oversample` voxels per camera pixel. The PSF at 100 nm pixels is sampled barely
  // above Nyquist (λ/(4 NA) ≈ 124 nm at 660 nm, NA 1.33): a cubic between the pixel-spaced samples misses the narrow
  // axis of an astigmatic spot by enough to move z by up to 30 nm at sub-pixel positions; half-pixel voxels (the
  // samples between from the same band-limited Fourier interpolation) leave ≈ 2 nm.
  const int os = std::max(1, st.oversample);
  const std::int64_t nf = (static_cast<std::int64_t>(box) - 1) * os + 1;
  volume = refine_xy(volume, box, nz, os, true);
  result.psf = spline_from_volume(volume, static_cast<int>(nf), static_cast<int>(nf), static_cast<int>(nz), 1.0 / os,
                                  st.z_step_nm, cx * os, cy * os, focus, st.pixel_size_nm);
  if (os > 1) {
    // spline_from_volume makes the focal plane's fine samples sum to 1 per pixel area (Σ/os² = 1); the model's α is
    // the photons of the pixels, the samples one pixel apart, whose focal sum the scale above made 1: back to it (the
    // two differ by the box's cut edge and the clipped ringing, a few %).
    double fine_sum = 0;
    for (std::int64_t k = 0; k < nf * nf; ++k)
      fine_sum += (1 - f) * volume[static_cast<std::size_t>(k0 * nf * nf + k)] +
                  f * volume[static_cast<std::size_t>((k0 + 1) * nf * nf + k)];
    fine_sum /= static_cast<double>(os) * os;
    for (auto& c : result.psf.coefficients) c = static_cast<float>(c * fine_sum);
  }
  result.volume = std::move(volume);
  result.nx = result.ny = static_cast<int>(nf);
  result.nz = static_cast<int>(nz);
  result.first_frame = first;
  for (std::size_t b = 0; b < stacks.size(); ++b) {
    auto& bead = result.beads[bead_of[b]];
    bead.shift_x = shifts[b][0];
    bead.shift_y = shifts[b][1];
    bead.shift_z = shifts[b][2];
    bead.residual = residual[b];
    bead.used = std::find(use.begin(), use.end(), b) != use.end();
    if (!bead.used) continue;
    std::vector<float> d(static_cast<std::size_t>(box) * box * static_cast<std::size_t>(nz));
    for (std::size_t k = 0; k < d.size(); ++k) {
      const std::size_t src = k + static_cast<std::size_t>(first * box * box);
      d[k] = static_cast<float>((aligned[b][src] - average[src]) * scale);
    }
    fourier_shift_xy(d, box, nz, moved[0], moved[1]);
    result.aligned.push_back(refine_xy(d, box, nz, os, false));
  }
  return result;
}

void write_spline_calibration_png(const std::string& path, const SplineCalibrationResult& r) {
  const int nx = r.nx, nz = r.nz, gap = 2;
  const auto cy = static_cast<int>(std::lround(r.psf.centre_y)), cx = static_cast<int>(std::lround(r.psf.centre_x));
  const int panels = 2 + static_cast<int>(r.aligned.size());
  const std::int64_t width = static_cast<std::int64_t>(panels) * (nx + gap) - gap, height = nz;
  std::vector<float> image(static_cast<std::size_t>(width * height), 1.0f);
  float peak = 0;
  for (const float v : r.volume) peak = std::max(peak, v);
  if (!(peak > 0)) peak = 1;
  const auto put = [&](int panel, int i, int k, float value) {
    image[static_cast<std::size_t>(k * width + panel * (nx + gap) + i)] = std::clamp(value, 0.0f, 1.0f);
  };
  for (int k = 0; k < nz; ++k)
    for (int i = 0; i < nx; ++i) {
      // xz through the centre row, yz through the centre column; z increases downwards.
      put(0, i, k, std::sqrt(r.volume[static_cast<std::size_t>((k * r.ny + cy) * nx + i)] / peak));
      put(1, i, k, std::sqrt(r.volume[static_cast<std::size_t>((k * r.ny + i) * nx + cx)] / peak));
      for (std::size_t b = 0; b < r.aligned.size(); ++b)
        put(2 + static_cast<int>(b), i, k,
            0.5f + 5.0f * r.aligned[b][static_cast<std::size_t>((k * r.ny + cy) * nx + i)] / peak);
    }
  // Twice the size: a 21-voxel-wide section is small on a screen.
  std::vector<float> big(static_cast<std::size_t>(4 * width * height));
  for (std::int64_t y = 0; y < 2 * height; ++y)
    for (std::int64_t x = 0; x < 2 * width; ++x)
      big[static_cast<std::size_t>(y * 2 * width + x)] = image[static_cast<std::size_t>((y / 2) * width + x / 2)];
  big[0] = 0;  // the gray scale's ends: 0 and 1, so the mapping is the values themselves
  big[1] = 1;
  write_gray_png(path, 2 * width, 2 * height, big, 0, 100);
}

}  // namespace nanoscopy
