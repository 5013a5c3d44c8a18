#include "nanoscopy/smre/dykstra.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "nanoscopy/smre/smre_math.hpp"

namespace nanoscopy {

float project_square(std::span<float> eps, std::int64_t w, std::int64_t x0, std::int64_t y0, int edge, double c,
                     double sigma) {
  double sum = 0;
  for (int dy = 0; dy < edge; ++dy)
    for (int dx = 0; dx < edge; ++dx) {
      const double v = eps[(y0 + dy) * w + x0 + dx];
      sum += v * v;
    }
  const float f = smre_math::projection_scale(static_cast<float>(sum), static_cast<float>(c),
                                              static_cast<float>(sigma * sigma));
  if (f != 1.0f)
    for (int dy = 0; dy < edge; ++dy)
      for (int dx = 0; dx < edge; ++dx) eps[(y0 + dy) * w + x0 + dx] *= f;
  return f;
}

namespace {

bool sweep_done(int sweep, double change, double sigma, const DykstraControl& c) {
  if (c.fixed_sweeps > 0) return sweep >= c.fixed_sweeps;
  return change < c.tolerance * sigma || sweep >= c.max_sweeps;
}

// One Dykstra step on one square: y = eps - q, eps = P(y), q = eps - y.
void dykstra_square(float* eps, float* q, std::int64_t w, std::int64_t x0, std::int64_t y0, int e, float c,
                    float sigma2) {
  float sum = 0.0f;
  for (int dy = 0; dy < e; ++dy) {
    const std::int64_t row = (y0 + dy) * w + x0;
    for (int dx = 0; dx < e; ++dx) {
      const float y = eps[row + dx] - q[row + dx];
      sum += y * y;
    }
  }
  const float f = smre_math::projection_scale(sum, c, sigma2);
  for (int dy = 0; dy < e; ++dy) {
    const std::int64_t row = (y0 + dy) * w + x0;
    for (int dx = 0; dx < e; ++dx) {
      const smre_math::DykstraPixel d = smre_math::dykstra_pixel(eps[row + dx] - q[row + dx], f);
      eps[row + dx] = d.eps;
      q[row + dx] = d.q;
    }
  }
}

double mean_abs_change(std::span<const float> a, std::span<const float> b) {
  double s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static)
  for (std::size_t i = 0; i < a.size(); ++i) s += std::fabs(static_cast<double>(a[i]) - b[i]);
  return s / static_cast<double>(a.size());
}

}  // namespace

int project_exact_cpu(std::span<float> eps, const SetFamily& family, const Weights& w, double sigma,
                      const DykstraControl& control, std::vector<float>& q) {
  const std::int64_t W = family.width, H = family.height, n = W * H;
  const auto q_size = static_cast<std::size_t>(family.exact_tilings() * n);
  if (!control.warm_start || q.size() != q_size) {
    q.assign(q_size, 0.0f);
  } else {
    // eps = w + sum_s q_s; pixels outside every square of a tiling keep q = 0 there.
    const std::int64_t tilings = family.exact_tilings();
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      float sum = 0.0f;
      for (std::int64_t t = 0; t < tilings; ++t) sum += q[static_cast<std::size_t>(t * n + i)];
      eps[static_cast<std::size_t>(i)] += sum;
    }
  }
  const float sigma2 = static_cast<float>(sigma * sigma);
  std::vector<float> before(eps.size());
  int sweep = 0;
  for (;;) {
    std::copy(eps.begin(), eps.end(), before.begin());
    std::int64_t t = 0;
    for (int e : family.edges()) {
      const float c = static_cast<float>(w.c_for_edge(e));
      for (int sy = 0; sy < e; ++sy)
        for (int sx = 0; sx < e; ++sx, ++t) {
          float* qt = q.data() + t * n;
          const std::int64_t rows = (H - sy) / e, cols = (W - sx) / e;
#pragma omp parallel for schedule(static)
          for (std::int64_t b = 0; b < rows; ++b)
            for (std::int64_t a = 0; a < cols; ++a) dykstra_square(eps.data(), qt, W, sx + a * e, sy + b * e, e, c, sigma2);
        }
    }
    ++sweep;
    if (sweep_done(sweep, mean_abs_change(eps, before), sigma, control)) return sweep;
  }
}

int project_icd_cpu(std::span<float> eps, const SetFamily& family, const Weights& w, double sigma,
                    const DykstraControl& control, std::vector<float>& q_all) {
  constexpr int T = kIcdTile, P = T * T;
  const std::int64_t W = family.width, H = family.height, n = W * H;
  const auto q_size = static_cast<std::size_t>(kIcdPasses * kIcdScales * n);
  if (!control.warm_start || q_all.size() != q_size) q_all.assign(q_size, 0.0f);
  const float sigma2 = static_cast<float>(sigma * sigma);
  std::array<float, kIcdScales> c{};
  for (int s = 0; s < kIcdScales; ++s) c[s] = static_cast<float>(w.c_for_edge(1 << s));
  int most = 0;
  for (int pass = 0; pass < kIcdPasses; ++pass) {
    const int o = icd_pass_offset(pass);
    const std::int64_t tiles_x = (W - o) / T, tiles_y = (H - o) / T;
#pragma omp parallel for schedule(dynamic) reduction(max : most)
    for (std::int64_t tile = 0; tile < tiles_x * tiles_y; ++tile) {
      const std::int64_t x0 = o + (tile % tiles_x) * T, y0 = o + (tile / tiles_x) * T;
      // The tile's residual, its per-scale Dykstra memory and the sweep's start.
      std::array<float, P> e, start;
      std::array<std::array<float, P>, kIcdScales> q;
      // Pass `pass`, scale s: q_all[(pass * icd_scales + s) * n + pixel]; eps starts at w + sum_s q_s.
      auto q_at = [&](int s, int y, int x) -> float& {
        return q_all[static_cast<std::size_t>((pass * kIcdScales + s) * n + (y0 + y) * W + x0 + x)];
      };
      for (int y = 0; y < T; ++y)
        for (int x = 0; x < T; ++x) {
          float v = eps[(y0 + y) * W + x0 + x];
          for (int s = 0; s < kIcdScales; ++s) {
            q[s][y * T + x] = q_at(s, y, x);
            v += q[s][y * T + x];
          }
          e[y * T + x] = v;
        }
      int sweep = 0;
      for (;;) {
        start = e;
        for (int s = kIcdScales - 1; s >= pass; --s)
          for (int sy = 0; sy < T; sy += 1 << s)
            for (int sx = 0; sx < T; sx += 1 << s) dykstra_square(e.data(), q[s].data(), T, sx, sy, 1 << s, c[s], sigma2);
        ++sweep;
        double change = 0;
        for (int i = 0; i < P; ++i) change += std::fabs(e[i] - start[i]);
        if (sweep_done(sweep, change / P, sigma, control)) break;
      }
      most = std::max(most, sweep);
      for (int y = 0; y < T; ++y)
        for (int x = 0; x < T; ++x) {
          eps[(y0 + y) * W + x0 + x] = e[y * T + x];
          for (int s = 0; s < kIcdScales; ++s) q_at(s, y, x) = q[s][y * T + x];
        }
    }
  }
  return most;
}

}  // namespace nanoscopy
