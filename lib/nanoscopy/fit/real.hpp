// The scalar types of the fit math. Every fit header (models, estimator, LM,
// initial estimate) is a template on its scalar T, written once for host and
// device: the CPU reference instantiates T = double (its results are those of
// the double-only code before issue 17), the CUDA kernels T = float by default
// and T = double on request (FitSettings::precision). This header holds what
// differs per type: the finite() tests and the few limits of the solve.
#pragma once

#include <math.h>

#include "nanoscopy/core/hd.hpp"
#include "nanoscopy/fit/fit_types.hpp"

namespace nanoscopy::fit_detail {

template <class T>
struct Limits;

template <>
struct Limits<double> {
  static constexpr double max = 1.7976931348623157e308;
  // Determinants (of α̂, β̂'s 2×2 system and of the damped solve) at or below this are singular.
  static constexpr double tiny = 1e-300;
  // A diagonal entry of JᵀJ below negligible·max diagonal holds its parameter fixed.
  static constexpr double negligible = 1e-12;
};

template <>
struct Limits<float> {
  static constexpr float max = 3.40282347e38f;
  static constexpr float tiny = 1e-30f;
  // Float rounding leaves about 1e-7 relative noise on the diagonal of a parameter that α̂ absorbs.
  static constexpr float negligible = 1e-6f;
};

// Neither NaN nor ±inf (one comparison, the same on host and device).
NANOSCOPY_HD bool finite(double v) {
  return fabs(v) <= Limits<double>::max;
}
NANOSCOPY_HD bool finite(float v) {
  return fabsf(v) <= Limits<float>::max;
}

// Fits in a float (FitResult's fields) without becoming ±inf.
NANOSCOPY_HD bool finite_float(double v) {
  return fabs(v) <= 3.4028234663852886e38;
}
NANOSCOPY_HD bool finite_float(float v) {
  return finite(v);
}

// FitSettings' limits in the scalar of the fit, converted once on the host, so
// a float kernel reads no double.
template <class T>
struct FitLimits {
  int max_iterations;
  T max_error, min_delta, min_step, lambda0, lambda_max, min_sigma;
};

template <class T>
FitLimits<T> fit_limits(const FitSettings& s) {
  return FitLimits<T>{s.max_iterations,        static_cast<T>(s.max_error), static_cast<T>(s.min_delta),
                      static_cast<T>(s.min_step), static_cast<T>(s.lambda0),  static_cast<T>(s.lambda_max),
                      static_cast<T>(s.min_sigma)};
}

}  // namespace nanoscopy::fit_detail
