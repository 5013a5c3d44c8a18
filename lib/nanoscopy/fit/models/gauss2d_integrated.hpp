// The pixel-integrated 2D Gaussian (ShapeModel::integrated): f = integral over
// each pixel of a unit-mass Gaussian, a product of erf differences per axis;
// α = integrated counts. Parameters (x̄, ȳ, σ); separable, see separable.hpp.
#pragma once

#include <math.h>

#include "nanoscopy/core/hd.hpp"
#include "nanoscopy/fit/fit_types.hpp"
#include "nanoscopy/fit/models/separable.hpp"
#include "nanoscopy/fit/real.hpp"

namespace nanoscopy::fit_detail {

struct Gauss2dIntegrated : Isotropic {
  static constexpr ShapeModel shape = ShapeModel::integrated;
  static constexpr const char* name = "integrated";
  static constexpr const char* param_names[n_params] = {"x", "y", "sigma"};

  // Per-evaluation constants of one σ.
  template <class T>
  struct Axis {
    T inv_r2s;   // 1/(√2 σ)
    T k_centre;  // 1/(√π·√2 σ)
    T k_sigma;   // 1/(√π σ)
  };

  template <class T>
  NANOSCOPY_HD static Axis<T> make_axis(T sigma) {
    using real = T;
    const real inv_s = real(1) / sigma;
    const real inv_sqrt_pi = real(0.56418958354775628695);
    const real inv_sqrt2 = real(0.70710678118654752440);
    Axis<T> m;
    m.inv_r2s = inv_sqrt2 * inv_s;
    m.k_centre = inv_sqrt_pi * m.inv_r2s;
    m.k_sigma = inv_sqrt_pi * inv_s;
    return m;
  }

  // u = pixel coordinate − centre: ½[erf(a₊) − erf(a₋)], a± = (u ± ½)/(√2σ);
  // erfc in the tails keeps relative precision.
  template <class T>
  NANOSCOPY_HD static AxisTerm<T> term(const Axis<T>& m, T u) {
    using real = T;
    AxisTerm<T> t;
    const real ap = (u + real(0.5)) * m.inv_r2s;
    const real am = (u - real(0.5)) * m.inv_r2s;
    if (am > real(0))
      t.v = real(0.5) * (erfc(am) - erfc(ap));
    else if (ap < real(0))
      t.v = real(0.5) * (erfc(-ap) - erfc(-am));
    else
      t.v = real(0.5) * (erf(ap) - erf(am));
    const real ep = exp(-ap * ap);
    const real em = exp(-am * am);
    t.dc = (em - ep) * m.k_centre;
    t.ds = (am * em - ap * ep) * m.k_sigma;
    return t;
  }

  // The terms at coordinates 0 … n−1 of one axis: one term() per pixel (no
  // cheaper recurrence for erf differences).
  template <class T>
  NANOSCOPY_HD static void fill_terms(const Axis<T>& m, T centre, int n, T* v, T* dc, T* ds) {
    for (int c = 0; c < n; ++c) {
      const AxisTerm<T> t = term(m, T(c) - centre);
      v[c] = t.v;
      dc[c] = t.dc;
      ds[c] = t.ds;
    }
  }
};

}  // namespace nanoscopy::fit_detail
