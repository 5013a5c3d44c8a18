#include "nanoscopy/loc/convert.hpp"

#include <cmath>
#include <numbers>

namespace nanoscopy {

Localization to_localization(const FitResult& fit, std::int64_t frame, int x0, int y0, const Camera& camera,
                             const FitSettings& settings, double net_gradient) {
  const ShapeModel model = settings.model;
  const Estimator estimator = settings.estimator;
  Localization loc;
  loc.frame = frame;
  loc.x = x0 + static_cast<double>(fit.x);
  loc.y = y0 + static_cast<double>(fit.y);
  loc.sigma = fit.sigma;
  const bool three_d = model == ShapeModel::astigmatic || model == ShapeModel::spline;
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
  if (estimator == Estimator::mle) {
    const double f = std::sqrt(camera.excess_noise());
    loc.log_likelihood = fit.log_likelihood;
    loc.photons_unc = static_cast<double>(fit.crlb_photons) * camera.photons_per_adu() * f;
    loc.bg_unc = static_cast<double>(fit.crlb_background) * camera.photons_per_adu() * f;
    if (model == ShapeModel::spline) {
      // No width parameters: sx, sy are the spline's second-moment widths, not fitted.
    } else if (three_d) {
      double sx = 0, sy = 0, dsx = 0, dsy = 0;
      settings.astigmatism.evaluate(static_cast<double>(fit.z), sx, sy, dsx, dsy);
      loc.sx_unc = std::abs(dsx) * loc.lpz;
      loc.sy_unc = std::abs(dsy) * loc.lpz;
    } else {
      loc.sx_unc = static_cast<double>(fit.crlb_sigma) * f;
      loc.sy_unc = static_cast<double>(fit.crlb_sigma_y) * f;
    }
  }
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
