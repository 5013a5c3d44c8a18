// The sub-pixel position of a correlation maximum (fit2d undrift): a 2D
// Gaussian fitted to the window around the integer maximum, as a weighted
// least-squares quadratic in the log of the values (weights = value², which
// undoes the log's stretching of the small values: Guo 2011). A Gaussian's
// log is exactly quadratic, so a noiseless blurred peak is found exactly; the
// fit also follows a tilted (elliptical) peak, which the three-point fits per
// axis do not. Where the log-quadratic is not a maximum (a flat or saddle
// window), the three-point parabola per axis on the values is used instead.
#pragma once

#include "nanoscopy/loc/undrift/engine.hpp"

namespace nanoscopy {

struct SubpixelShift {
  double x = 0, y = 0;  // grid px: the integer shift plus the fitted offset (at most `radius` from it)
  bool ok = false;      // false: no peak (CorrelationPeak::found false)
};

SubpixelShift fit_correlation_peak(const CorrelationPeak& peak);

}  // namespace nanoscopy
