// One localization: what fit2d finds, filters, writes and tracks.
// Coordinates are camera pixels of the whole frame with the centre of pixel
// (column i, row j) at (x, y) = (i, j) — Picasso's convention; writers convert
// (ThunderSTORM adds 0.5 and multiplies by the pixel size).
#pragma once

#include <cstdint>
#include <limits>

#include "nanoscopy/fit/fit_types.hpp"

namespace nanoscopy {

struct Localization {
  std::int64_t frame = 0;     // 0-based frame index in the stack
  double x = 0, y = 0;        // px, pixel centre at integer
  double sigma = 0;           // px; σx of an elliptical fit, σ of a round one
  double sigma_y = 0;         // px; σy of an elliptical fit; 0: round (σy = sigma), see sy()
  double photons = 0;         // photons in the spot (integrated)
  double background = 0;      // photons per pixel
  double lpx = 0, lpy = 0;    // localization precision, px (Mortensen for lsq; the CRLB for wlsq, mle)
  double chi2 = 0;            // normalized χ² of the fit (ADU²)
  double net_gradient = 0;    // detection score, Picasso's net gradient in camera counts (ADU), as Picasso's
  // mle fits, else NaN: Picasso's log-likelihood (ratio to the saturated model, FitResult::log_likelihood)
  double log_likelihood = std::numeric_limits<double>::quiet_NaN();
  // mle fits, else NaN: √CRLB of photons, of bg (photons per pixel), of sx and sy (px), Picasso's *_unc
  double photons_unc = std::numeric_limits<double>::quiet_NaN();
  double bg_unc = std::numeric_limits<double>::quiet_NaN();
  double sx_unc = std::numeric_limits<double>::quiet_NaN();
  double sy_unc = std::numeric_limits<double>::quiet_NaN();
  double photon_rate = std::numeric_limits<double>::quiet_NaN();  // linked: summed photons / n (Picasso's link)
  double z = 0;               // nm, 3D (astigmatic) fits; 0 in 2D
  double lpz = 0;             // nm, the CRLB of z (3D fits)
  std::int32_t len = 0;       // linked (fit2d link): frames from the first to the last of the group
  std::int32_t n = 0;         // linked: localizations merged into this one (0: not linked)
  double iterations = 0;      // of the fit; a linked localization's: the mean of its fits' (Picasso's link)
  FitStatus status = FitStatus::invalid_roi;

  double sy() const { return sigma_y > 0 ? sigma_y : sigma; }
};

}  // namespace nanoscopy
