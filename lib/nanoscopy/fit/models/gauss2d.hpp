// The sampled 2D Gaussian (ShapeModel::sampled, paper eq. 10):
// f = exp(−((x−x̄)² + (y−ȳ)²)/(2σ²)) at pixel centres; α = peak height.
// Parameters (x̄, ȳ, σ); separable, see separable.hpp.
#pragma once

#include <math.h>

#include "nanoscopy/core/hd.hpp"
#include "nanoscopy/fit/fit_types.hpp"
#include "nanoscopy/fit/models/separable.hpp"
#include "nanoscopy/fit/real.hpp"

namespace nanoscopy::fit_detail {

struct Gauss2d : Isotropic {
  static constexpr ShapeModel shape = ShapeModel::sampled;
  static constexpr const char* name = "sampled";
  static constexpr const char* param_names[n_params] = {"x", "y", "sigma"};
  static constexpr bool peak_amplitude = true;  // α is the peak height: photons = α·2πσ²

  // Per-evaluation constants of one σ.
  template <class T>
  struct Axis {
    T inv_s2;  // 1/σ²
    T inv_s3;  // 1/σ³
  };

  template <class T>
  NANOSCOPY_HD static Axis<T> make_axis(T sigma) {
    using real = T;
    const real inv_s = real(1) / sigma;
    Axis<T> m;
    m.inv_s2 = inv_s * inv_s;
    m.inv_s3 = m.inv_s2 * inv_s;
    return m;
  }

  // u = pixel coordinate − centre: exp(−u²/(2σ²)) and the derivatives of paper eq. 11, split per axis.
  template <class T>
  NANOSCOPY_HD static AxisTerm<T> term(const Axis<T>& m, T u) {
    using real = T;
    AxisTerm<T> t;
    t.v = exp(real(-0.5) * u * u * m.inv_s2);
    t.dc = u * m.inv_s2 * t.v;
    t.ds = u * u * m.inv_s3 * t.v;
    return t;
  }

  // The terms at coordinates 0 … n−1 of one axis (centre in the same
  // coordinates), by a recurrence outward from the pixel nearest the centre:
  // three exp calls instead of n, equal to term() to a few ulps. Moving away
  // from the centre the ratios only shrink, so underflow is benign.
  template <class T>
  NANOSCOPY_HD static void fill_terms(const Axis<T>& m, T centre, int n, T* v, T* dc, T* ds) {
    using real = T;
    const real a = real(0.5) * m.inv_s2;  // 1/(2σ²)
    real c0f = floor(centre + real(0.5));
    c0f = c0f < real(0) ? real(0) : (c0f > real(n) - real(1) ? real(n) - real(1) : c0f);
    const int c0 = static_cast<int>(c0f);
    const real u0 = real(c0) - centre;
    const real v0 = exp(-a * u0 * u0);
    const real q = exp(real(-2) * a);
    v[c0] = v0;
    real value = v0, ratio = exp(-a * (real(2) * u0 + real(1)));
    for (int c = c0 + 1; c < n; ++c) {
      value *= ratio;
      ratio *= q;
      v[c] = value;
    }
    value = v0;
    ratio = exp(a * (real(2) * u0 - real(1)));
    for (int c = c0 - 1; c >= 0; --c) {
      value *= ratio;
      ratio *= q;
      v[c] = value;
    }
    for (int c = 0; c < n; ++c) {
      const real u = real(c) - centre;
      dc[c] = u * m.inv_s2 * v[c];
      ds[c] = u * u * m.inv_s3 * v[c];
    }
  }
};

}  // namespace nanoscopy::fit_detail
