#include "nanoscopy/bench/spline_spots.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "nanoscopy/core/defocus_curve.hpp"
#include "nanoscopy/core/spline_psf_build.hpp"
#include "nanoscopy/fit/models/spline3d.hpp"

namespace nanoscopy {

SplinePsf astigmatic_spline_psf(int size_xy, int slices, double z_step_nm, double pixel_size_nm) {
  const AstigmaticPsf<double> curves = typical_astigmatic_psf();
  const double scale = 100.0 / pixel_size_nm;  // the curves' σ are in 100-nm pixels
  const double centre = (size_xy - 1) / 2.0, focus = (slices - 1) / 2.0;
  std::vector<float> volume(static_cast<std::size_t>(size_xy) * size_xy * slices);
  for (int k = 0; k < slices; ++k) {
    const double z = (k - focus) * z_step_nm;
    const double sx = curves.x.sigma(z) * scale, sy = curves.y.sigma(z) * scale;
    const double norm = 1.0 / (2 * M_PI * sx * sy);
    for (int j = 0; j < size_xy; ++j)
      for (int i = 0; i < size_xy; ++i) {
        const double dx = i - centre, dy = j - centre;
        volume[(static_cast<std::size_t>(k) * size_xy + j) * size_xy + i] =
            static_cast<float>(norm * std::exp(-0.5 * (dx * dx / (sx * sx) + dy * dy / (sy * sy))));
      }
  }
  return spline_from_volume(volume, size_xy, size_xy, slices, 1.0, z_step_nm, centre, centre, focus, pixel_size_nm);
}

SplineSpots simulate_spline_spots(const SplinePsf& psf, int width, int height, std::int64_t count, double photons,
                                  double background, double z_min, double z_max, std::uint64_t seed,
                                  double centre_range, bool noise) {
  using namespace fit_detail;
  const Spline3d model = make_spline_model(psf, 1.0, psf.coefficients.data());
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-centre_range, centre_range), uz(z_min, z_max);
  SplineSpots s;
  s.width = width;
  s.height = height;
  s.count = count;
  const std::size_t n = static_cast<std::size_t>(width) * height;
  s.pixels.resize(n * count);
  s.pixels_u16.resize(n * count);
  s.truth.resize(count);
  for (std::int64_t i = 0; i < count; ++i) {
    SplineSpotTruth t{(width - 1) / 2.0 + u(rng), (height - 1) / 2.0 + u(rng), z_min == z_max ? z_min : uz(rng),
                      photons, background};
    s.truth[i] = t;
    for (int r = 0; r < height; ++r)
      for (int c = 0; c < width; ++c) {
        const double mu = photons * std::max(0.0, model.value<double>(t.x, t.y, t.z, c, r)) + background;
        double v = mu;
        if (noise) v = static_cast<double>(std::poisson_distribution<std::int64_t>(mu)(rng));
        const std::size_t at = n * i + static_cast<std::size_t>(r) * width + c;
        s.pixels[at] = static_cast<float>(v);
        s.pixels_u16[at] = static_cast<std::uint16_t>(std::clamp(std::lround(v), 0L, 65535L));
      }
  }
  return s;
}

SplineCrb spline_crb(const SplinePsf& psf, int width, int height, const SplineSpotTruth& t) {
  using namespace fit_detail;
  const Spline3d model = make_spline_model(psf, 1.0, psf.coefficients.data());
  std::vector<double> zeros(static_cast<std::size_t>(width) * height, 0.0);
  SplineEvaluator<Mle, double, ArrayRoi<double>> eval{model, ArrayRoi<double>{zeros.data(), nullptr}, width, height};
  const double theta[5] = {t.x, t.y, t.z, t.photons, t.background};
  FitResult r;
  eval.finish(theta, r);
  return {r.crlb_x, r.crlb_y, r.crlb_z, r.crlb_photons, r.crlb_background};
}

}  // namespace nanoscopy
