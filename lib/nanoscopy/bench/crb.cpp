#include "nanoscopy/bench/crb.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "nanoscopy/fit/model_list.hpp"

namespace nanoscopy {
namespace {

constexpr int kP = 5;
using Matrix = std::array<std::array<double, kP>, kP>;

// Inverse by Gauss–Jordan with partial pivoting (any P ≤ 6); NaN matrix when singular.
template <int P>
std::array<std::array<double, P>, P> invert(std::array<std::array<double, P>, P> a) {
  std::array<std::array<double, P>, P> inv{};
  for (int i = 0; i < P; ++i) inv[i][i] = 1;
  for (int c = 0; c < P; ++c) {
    int pivot = c;
    for (int r = c + 1; r < P; ++r)
      if (std::abs(a[r][c]) > std::abs(a[pivot][c])) pivot = r;
    if (std::abs(a[pivot][c]) < 1e-300) {
      for (auto& row : inv) row.fill(std::numeric_limits<double>::quiet_NaN());
      return inv;
    }
    std::swap(a[c], a[pivot]);
    std::swap(inv[c], inv[pivot]);
    const double d = a[c][c];
    for (int k = 0; k < P; ++k) {
      a[c][k] /= d;
      inv[c][k] /= d;
    }
    for (int r = 0; r < P; ++r) {
      if (r == c) continue;
      const double f = a[r][c];
      for (int k = 0; k < P; ++k) {
        a[r][k] -= f * a[c][k];
        inv[r][k] -= f * inv[c][k];
      }
    }
  }
  return inv;
}

}  // namespace

SpotCrb spot_crb(int width, int height, double x, double y, double sigma, double alpha, double beta) {
  Matrix fisher{};
  const double s2 = sigma * sigma;
  for (int r = 0; r < height; ++r) {
    for (int c = 0; c < width; ++c) {
      const double dx = c - x, dy = r - y;
      const double f = std::exp(-(dx * dx + dy * dy) / (2 * s2));
      const double mu = alpha * f + beta;
      const double v = mu + 1.0 / 12.0;
      const std::array<double, kP> d = {alpha * f * dx / s2, alpha * f * dy / s2,
                                       alpha * f * (dx * dx + dy * dy) / (s2 * sigma), f, 1.0};
      // Gaussian with mean μ(θ) and variance v(θ), dv/dθ = dμ/dθ.
      const double w = 1.0 / v + 1.0 / (2.0 * v * v);
      for (int j = 0; j < kP; ++j)
        for (int k = 0; k < kP; ++k) fisher[j][k] += w * d[j] * d[k];
    }
  }
  const Matrix inv = invert<kP>(fisher);
  return {std::sqrt(inv[0][0]), std::sqrt(inv[1][1]), std::sqrt(inv[2][2])};
}

namespace {

// The spot's shape parameters as the simulator forms it: (x, y, σx, σy) in px,
// or (x, y, z) with z in nm for the astigmatic model.
struct Shape {
  double x, y, sx, sy, z;
};

// f at every pixel (row-major) the way simulate_spots forms the truth image.
std::vector<double> spot_image(const SpotRecipe& r, const Shape& s) {
  double sx = s.sx, sy = s.sy;
  if (r.model == ShapeModel::astigmatic) {
    sx = r.astigmatism.x.sigma(s.z);
    sy = r.astigmatism.y.sigma(s.z);
  }
  std::vector<double> f(static_cast<std::size_t>(r.width * r.height));
  fit_detail::dispatch_model(r.model, [&]<class M>(M) {
    const auto ax = M::make_axis(sx), ay = M::make_axis(sy);
    for (int row = 0; row < r.height; ++row)
      for (int c = 0; c < r.width; ++c)
        f[static_cast<std::size_t>(row * r.width + c)] = M::term(ax, c - s.x).v * M::term(ay, row - s.y).v;
  });
  return f;
}

}  // namespace

SpotCrb poisson_spot_crb(const SpotRecipe& recipe, const SpotTruth& t) {
  // θ: x, y, then σ (round), σx and σy (elliptical) or z (astigmatic), then α, β.
  const bool two_widths = recipe.model == ShapeModel::elliptical;
  const bool three_d = recipe.model == ShapeModel::astigmatic;
  const int shape_params = two_widths ? 4 : 3;
  constexpr int P = 6;
  const int p = shape_params + 2;
  const Shape truth{t.x, t.y, t.sigma, t.sigma_y, t.z};
  const auto perturbed = [&](int j, double h) {
    Shape s = truth;
    if (j == 0) s.x += h;
    if (j == 1) s.y += h;
    if (j == 2 && three_d) s.z += h;
    if (j == 2 && !three_d) {
      s.sx += h;
      if (!two_widths) s.sy += h;  // one σ for both axes
    }
    if (j == 3) s.sy += h;
    return spot_image(recipe, s);
  };
  const auto f = spot_image(recipe, truth);
  std::vector<std::vector<double>> df(static_cast<std::size_t>(shape_params));
  for (int j = 0; j < shape_params; ++j) {
    const double h = j == 2 && three_d ? 1e-2 : 1e-5;
    const auto plus = perturbed(j, h), minus = perturbed(j, -h);
    df[static_cast<std::size_t>(j)].resize(f.size());
    for (std::size_t i = 0; i < f.size(); ++i) df[static_cast<std::size_t>(j)][i] = t.amplitude * (plus[i] - minus[i]) / (2 * h);
  }
  std::array<std::array<double, P>, P> fisher{};
  for (int j = p; j < P; ++j) fisher[static_cast<std::size_t>(j)][static_cast<std::size_t>(j)] = 1;  // unused rows
  for (std::size_t i = 0; i < f.size(); ++i) {
    const double mu = t.amplitude * f[i] + t.background;
    double d[P] = {};
    for (int j = 0; j < shape_params; ++j) d[j] = df[static_cast<std::size_t>(j)][i];
    d[shape_params] = f[i];
    d[shape_params + 1] = 1;
    for (int j = 0; j < p; ++j)
      for (int k = 0; k < p; ++k) fisher[static_cast<std::size_t>(j)][static_cast<std::size_t>(k)] += d[j] * d[k] / mu;
  }
  const auto inv = invert<P>(fisher);
  SpotCrb crb{std::sqrt(inv[0][0]), std::sqrt(inv[1][1]), std::sqrt(inv[2][2])};
  if (three_d) {
    crb.z = crb.sigma;
    crb.sigma = std::numeric_limits<double>::quiet_NaN();
  }
  return crb;
}

}  // namespace nanoscopy
