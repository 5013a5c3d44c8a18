// Re-centring a fit's box on the spot it found. Detection puts each box on a
// maximum of the filtered frame, and for a 3D spot that is not where the
// emitter is: far from focus astigmatism stretches the spot over several
// pixels and any of its maxima may be found, and coma moves the maximum away
// from the PSF's centre. A box off the centre cuts part of the spot away, and
// the fit loses the information in it. bench spline3d (pupil PSF, 13 px box):
// above +300 nm the fitted centres lay 2–4 px (sd) from their boxes' centres in
// y, and y's RMS was 1.15–1.37x the bound of a centred box; with the box moved
// onto the first fit's centre and fitted again, 1.00–1.06x.
//
// A fit whose centre lies more than `distance` px from its box's centre in x or
// y (the box's centre pixel is ((box - 1) / 2, (box - 1) / 2) in ROI
// coordinates) is fitted once more in the box around the pixel of that centre,
// shifted inside the frame as every box is (roi_origin); the second fit
// replaces the first when it converged. The CPU engine and the CUDA one choose
// the same boxes with recentred_origin.
#pragma once

#include <cmath>
#include <string>

#include "nanoscopy/core/hd.hpp"
#include "nanoscopy/fit/fit_types.hpp"
#include "nanoscopy/loc/detect/detect_math.hpp"
#include "nanoscopy/loc/detect/detect_types.hpp"

namespace nanoscopy {

// True when `fit` (made in the box at `origin`) asks for another box, and that
// box differs from this one: `moved` is then its origin. distance <= 0: never.
NANOSCOPY_HD bool recentred_origin(const FitResult& fit, RoiOrigin origin, int box, int width, int height,
                                   float distance, RoiOrigin& moved) {
  if (!(distance > 0.0f) || !converged(fit.status)) return false;
  const float centre = static_cast<float>(box / 2);
  const float dx = fit.x - centre, dy = fit.y - centre;
  // Finite and inside the box (a converged fit's centre is): the casts below stay in range.
  if (!(fabsf(dx) <= static_cast<float>(box) && fabsf(dy) <= static_cast<float>(box))) return false;
  if (!(fabsf(dx) > distance || fabsf(dy) > distance)) return false;
  const int x = origin.x0 + static_cast<int>(lroundf(fit.x)), y = origin.y0 + static_cast<int>(lroundf(fit.y));
  moved = detect_detail::roi_origin(x, y, box, width, height);
  return moved.x0 != origin.x0 || moved.y0 != origin.y0;
}

// The candidate of a box moved to `moved`: the box's centre pixel, as a detected
// candidate is (`moved` lies inside the frame, so the box around it is at `moved`).
NANOSCOPY_HD Candidate recentred_candidate(Candidate c, RoiOrigin moved, int box) {
  c.x = moved.x0 + box / 2;
  c.y = moved.y0 + box / 2;
  return c;
}

// "Fit/recenter": "auto" (1 px for the spline model, off for the Gaussian
// ones, whose model is too far from a 3D spot for its centre to be trusted more
// than the detector's maximum: the astigmatic Gaussian gained nothing in bench
// spline3d), "off", or a distance in px > 0. UsageError naming `where` otherwise.
double recenter_distance_px(const std::string& value, bool spline, const std::string& where);

}  // namespace nanoscopy
