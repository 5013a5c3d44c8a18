// The scalar type of all fit math, host and device, in one place. Double
// today, on the GPU too: the χ² comparisons that drive the stop criteria
// (1e-6 relative) then agree between backends. A move to float changes this
// line (and the limits below).
#pragma once

#include <math.h>

#include "nanoscopy/core/hd.hpp"

namespace nanoscopy::fit_detail {

using real = double;

// Neither NaN nor ±inf (one comparison, the same on host and device).
NANOSCOPY_HD bool finite(real v) {
  return fabs(v) <= 1.7976931348623157e308;
}

// Fits in a float (FitResult's fields) without becoming ±inf.
NANOSCOPY_HD bool finite_float(real v) {
  return fabs(v) <= 3.4028234663852886e38;
}

}  // namespace nanoscopy::fit_detail
