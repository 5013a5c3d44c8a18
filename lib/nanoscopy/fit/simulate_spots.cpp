#include "nanoscopy/fit/simulate_spots.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/fit/model_list.hpp"

namespace nanoscopy {

SimulatedSpots simulate_spots(const SpotRecipe& recipe, std::int64_t count, std::uint64_t seed) {
  if (recipe.width < 1 || recipe.height < 1 || count < 0 || !(recipe.sigma_min > 0) ||
      recipe.sigma_max < recipe.sigma_min)
    throw UsageError("simulate_spots", "the spot recipe is not valid");
  SimulatedSpots out;
  out.width = recipe.width;
  out.height = recipe.height;
  out.count = count;
  const std::int64_t n = static_cast<std::int64_t>(recipe.width) * recipe.height;
  out.pixels.resize(static_cast<std::size_t>(count * n));
  out.pixels_u16.resize(out.pixels.size());
  out.truth.resize(static_cast<std::size_t>(count));

  std::mt19937_64 rng(seed);
  std::normal_distribution<double> unit_normal(0.0, 1.0);
  std::uniform_real_distribution<double> unit_uniform(0.0, 1.0);
  const double sd_x = recipe.centre_sd >= 0 ? recipe.centre_sd : recipe.width / 20.0;
  const double sd_y = recipe.centre_sd >= 0 ? recipe.centre_sd : recipe.height / 20.0;
  const double bg = recipe.background / static_cast<double>(n);
  std::vector<fit_detail::AxisTerm<double>> xs(recipe.width), ys(recipe.height);

  for (std::int64_t k = 0; k < count; ++k) {
    SpotTruth t;
    t.x = (recipe.width - 1) / 2.0 + sd_x * unit_normal(rng);
    t.y = (recipe.height - 1) / 2.0 + sd_y * unit_normal(rng);
    t.sigma = recipe.sigma_min + (recipe.sigma_max - recipe.sigma_min) * unit_uniform(rng);
    t.sigma_y = recipe.model == ShapeModel::elliptical
                    ? recipe.sigma_min + (recipe.sigma_max - recipe.sigma_min) * unit_uniform(rng)
                    : t.sigma;
    t.z = 0;
    if (recipe.model == ShapeModel::astigmatic) {
      t.z = recipe.z_min + (recipe.z_max - recipe.z_min) * unit_uniform(rng);
      t.sigma = recipe.astigmatism.x.sigma(t.z);
      t.sigma_y = recipe.astigmatism.y.sigma(t.z);
    }
    t.amplitude = recipe.model == ShapeModel::sampled ? recipe.signal / (2.0 * std::numbers::pi * t.sigma * t.sigma)
                                                      : recipe.signal;
    t.background = bg;
    out.truth[k] = t;
    fit_detail::dispatch_model(recipe.model, [&]<class M>(M) {
      const auto ax = M::make_axis(t.sigma), ay = M::make_axis(t.sigma_y);
      for (int c = 0; c < recipe.width; ++c) xs[c] = M::term(ax, c - t.x);
      for (int r = 0; r < recipe.height; ++r) ys[r] = M::term(ay, r - t.y);
    });
    for (int r = 0; r < recipe.height; ++r) {
      for (int c = 0; c < recipe.width; ++c) {
        double v = t.amplitude * xs[c].v * ys[r].v + bg;
        if (recipe.noise && recipe.poisson)
          v = static_cast<double>(std::poisson_distribution<std::int64_t>(v)(rng));
        else if (recipe.noise)
          v = std::max(0.0, std::round(v + std::sqrt(v) * unit_normal(rng)));
        const std::size_t i = static_cast<std::size_t>(k * n + r * recipe.width + c);
        out.pixels[i] = static_cast<float>(v);
        out.pixels_u16[i] = static_cast<std::uint16_t>(std::clamp(std::round(v), 0.0, 65535.0));
      }
    }
  }
  return out;
}

}  // namespace nanoscopy
