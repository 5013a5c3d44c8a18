#include "nanoscopy/core/camera.hpp"

#include <cmath>
#include <limits>
#include <numbers>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

void Camera::validate(const std::string& where) const {
  if (!(sensitivity > 0)) throw UsageError(where, "camera sensitivity must be positive (electrons per ADU)");
  if (!(em_gain > 0)) throw UsageError(where, "camera EM gain must be positive (1 for no EM gain), not " + std::to_string(em_gain));
  if (!(qe > 0 && qe <= 1)) throw UsageError(where, "camera quantum efficiency must be in (0, 1]");
  if (!(pixel_size_nm > 0)) throw UsageError(where, "pixel size must be positive (nm)");
  if (!std::isfinite(baseline)) throw UsageError(where, "camera baseline must be a finite number of ADU");
}

double mortensen_precision(double sigma, double photons, double background, double excess_noise) {
  if (!(photons > 0) || !(sigma > 0)) return std::numeric_limits<double>::quiet_NaN();
  const double sa2 = sigma * sigma + 1.0 / 12.0;
  const double tau = 2.0 * std::numbers::pi * sa2 * std::max(background, 0.0) / photons;
  return std::sqrt(excess_noise * sa2 / photons * (16.0 / 9.0 + 4.0 * tau));
}

}  // namespace nanoscopy
