// Keys' cubic convolution kernel (a = −0.5, Catmull–Rom): the weights of the four
// taps at floor(x) − 1 … floor(x) + 2 for the fraction t = x − floor(x) ∈ [0, 1).
// Shared by the spline calibration's bead resampling and the pupil PSF's tables.
#pragma once

#include <cmath>

namespace nanoscopy {

inline void keys_cubic_weights(double t, double w[4]) {
  const auto k = [](double s) {
    s = std::abs(s);
    if (s < 1) return (1.5 * s - 2.5) * s * s + 1;
    if (s < 2) return ((-0.5 * s + 2.5) * s - 4) * s + 2;
    return 0.0;
  };
  w[0] = k(t + 1);
  w[1] = k(t);
  w[2] = k(1 - t);
  w[3] = k(2 - t);
}

}  // namespace nanoscopy
