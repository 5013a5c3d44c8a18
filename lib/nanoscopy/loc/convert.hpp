// From a fit in ROI coordinates and camera units (ADU) to a localization in
// frame coordinates and photons, and the filter fit2d applies before writing.
#pragma once

#include <cstdint>

#include "nanoscopy/core/camera.hpp"
#include "nanoscopy/fit/fit_types.hpp"
#include "nanoscopy/loc/localization.hpp"

namespace nanoscopy {

// x0, y0: the ROI's top-left pixel in the frame. The fit's amplitude and
// background are in ADU (background includes the camera baseline); photons
// follow Picasso's convention (camera.hpp). The sampled model's peak height is
// turned into the integrated count (2πσ² · peak). The precision lpx, lpy is
// Mortensen's formula for lsq in 2D, the fit's Poisson CRLB (crlb_x, crlb_y) for
// wlsq, mle and every 3D fit, all × √2 with EM gain; mle also gives Picasso's
// log-likelihood and the bounds photons_unc, bg_unc, sx_unc, sy_unc (× √2 with EM
// gain, as lpx; a 3D fit's widths follow z: |dσ/dz|·lpz). A 3D (astigmatic) fit
// gives z and its CRLB lpz in nm. net_gradient: the detector's, in camera counts.
Localization to_localization(const FitResult& fit, std::int64_t frame, int x0, int y0, const Camera& camera,
                             const FitSettings& settings, double net_gradient);

struct LocFilter {
  double min_sigma = 0.5;      // px
  double max_sigma = 3.0;      // px
  double min_photons = 0;
  double max_precision_nm = 0; // 0: off
};

// Converged fits inside every bound of the filter.
bool accept(const Localization& loc, const LocFilter& filter, const Camera& camera);

}  // namespace nanoscopy
