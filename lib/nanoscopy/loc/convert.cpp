#include "nanoscopy/loc/convert.hpp"

#include <cmath>
#include <numbers>

namespace nanoscopy {

Localization to_localization(const FitResult& fit, std::int64_t frame, int x0, int y0, const Camera& camera,
                             ShapeModel model, double net_gradient, Estimator estimator) {
  Localization loc;
  loc.frame = frame;
  loc.x = x0 + static_cast<double>(fit.x);
  loc.y = y0 + static_cast<double>(fit.y);
  loc.sigma = fit.sigma;
  const bool three_d = model == ShapeModel::astigmatic;
  if (model == ShapeModel::elliptical || three_d) loc.sigma_y = fit.sigma_y;
  const double integrated_adu = model == ShapeModel::sampled
                                    ? static_cast<double>(fit.amplitude) * 2.0 * std::numbers::pi * fit.sigma * fit.sigma
                                    : static_cast<double>(fit.amplitude);
  loc.photons = integrated_adu * camera.photons_per_adu();
  loc.background = (static_cast<double>(fit.background) - camera.baseline) * camera.photons_per_adu();
  if (estimator == Estimator::lsq && !three_d) {
    loc.lpx = loc.lpy = mortensen_precision(loc.sigma, loc.photons, loc.background, camera.excess_noise());
    if (model == ShapeModel::elliptical)
      loc.lpy = mortensen_precision(loc.sy(), loc.photons, loc.background, camera.excess_noise());
  } else {
    // The Poisson CRLB at the estimate (every 3D fit has one: Mortensen's formula is 2D);
    // EM gain doubles the variance (excess-noise factor 2).
    const double f = std::sqrt(camera.excess_noise());
    loc.lpx = static_cast<double>(fit.crlb_x) * f;
    loc.lpy = static_cast<double>(fit.crlb_y) * f;
  }
  if (three_d) {
    loc.z = fit.z;
    loc.lpz = static_cast<double>(fit.crlb_z) * std::sqrt(camera.excess_noise());
  }
  if (estimator == Estimator::mle) loc.likelihood = fit.log_likelihood;
  loc.chi2 = fit.chi2;
  loc.net_gradient = net_gradient;
  loc.iterations = fit.iterations;
  loc.status = fit.status;
  return loc;
}

bool accept(const Localization& loc, const LocFilter& filter, const Camera& camera) {
  if (!converged(loc.status)) return false;
  if (!std::isfinite(loc.x) || !std::isfinite(loc.y) || !std::isfinite(loc.lpx) || !std::isfinite(loc.lpy))
    return false;
  if (loc.sigma < filter.min_sigma || loc.sigma > filter.max_sigma) return false;
  if (loc.sy() < filter.min_sigma || loc.sy() > filter.max_sigma) return false;
  if (loc.photons < filter.min_photons || !(loc.photons > 0)) return false;
  if (filter.max_precision_nm > 0 && loc.lpx * camera.pixel_size_nm > filter.max_precision_nm) return false;
  return true;
}

}  // namespace nanoscopy
