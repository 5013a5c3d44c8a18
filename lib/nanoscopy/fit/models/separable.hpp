// What every separable model shares, f(x, y) = X(x − x̄)·Y(y − ȳ): per-axis
// terms and their sums, so an evaluation takes width + height exp/erf calls
// and a few products per pixel; every data-free entry of Sums<N> is a product
// of a column sum and a row sum, and only Σ g·f, Σ g·∂f need the pixels.
//
// Isotropic below is the layout of a model with p = (x̄, ȳ, σ), one σ for both
// axes: ∂f/∂x̄ = X'·Y, ∂f/∂ȳ = X·Y', ∂f/∂σ = X_σ·Y + X·Y_σ. A model with more
// parameters (σx, σy; z) writes its own DataSums, accumulate, combine and
// bounds beside its axis terms, on the same AxisTerm and AxisSums.
#pragma once

#include "nanoscopy/core/hd.hpp"
#include "nanoscopy/fit/estimators/lsq.hpp"
#include "nanoscopy/fit/fit_types.hpp"
#include "nanoscopy/fit/real.hpp"

namespace nanoscopy::fit_detail {

// One axis' term at one pixel coordinate.
template <class T>
struct AxisTerm {
  T v;   // X(u)
  T dc;  // ∂X/∂(centre)
  T ds;  // ∂X/∂σ (this axis' width)
};

// Sums of one axis' terms over its pixels (columns or rows).
template <class T>
struct AxisSums {
  T v, dc, ds;         // Σ X, Σ X', Σ X_σ
  T vv, vdc, vds;      // Σ X², Σ X·X', Σ X·X_σ
  T dcdc, dcds, dsds;  // Σ X'², Σ X'·X_σ, Σ X_σ²
};

template <class T>
NANOSCOPY_HD void clear(AxisSums<T>& a) {
  a.v = a.dc = a.ds = a.vv = a.vdc = a.vds = a.dcdc = a.dcds = a.dsds = 0;
}

template <class T>
NANOSCOPY_HD void accumulate(AxisSums<T>& a, const AxisTerm<T>& t) {
  a.v += t.v;
  a.dc += t.dc;
  a.ds += t.ds;
  a.vv += t.v * t.v;
  a.vdc += t.v * t.dc;
  a.vds += t.v * t.ds;
  a.dcdc += t.dc * t.dc;
  a.dcds += t.dc * t.ds;
  a.dsds += t.ds * t.ds;
}

// --------------------------------------------------- isotropic (x̄, ȳ, σ)

// The data sums Σ g·f, Σ g·∂_j f of p = (x̄, ȳ, σ), as an array so a GPU group
// can reduce them field by field: fg, gd[0], gd[1], gd[2].
template <class T>
struct IsotropicDataSums {
  static constexpr int size = 4;
  T s[size];
};

template <class T>
NANOSCOPY_HD void clear(IsotropicDataSums<T>& d) {
  for (int i = 0; i < IsotropicDataSums<T>::size; ++i) d.s[i] = 0;
}

// One pixel of value g with column term X and row term Y.
template <class T>
NANOSCOPY_HD void accumulate(IsotropicDataSums<T>& d, T g, const AxisTerm<T>& X, const AxisTerm<T>& Y) {
  d.s[0] += g * X.v * Y.v;
  d.s[1] += g * X.dc * Y.v;
  d.s[2] += g * X.v * Y.dc;
  d.s[3] += g * (X.ds * Y.v + X.v * Y.ds);
}

// One row of the ROI given its column-weighted data sums gx = Σ_c g·X, gxd = Σ_c g·X', gxs = Σ_c g·X_σ.
template <class T>
NANOSCOPY_HD void accumulate_row(IsotropicDataSums<T>& d, T gx, T gxd, T gxs, const AxisTerm<T>& Y) {
  d.s[0] += gx * Y.v;
  d.s[1] += gxd * Y.v;
  d.s[2] += gx * Y.dc;
  d.s[3] += gxs * Y.v + gx * Y.ds;
}

// f = X·Y, ∂₀f = X'·Y, ∂₁f = X·Y', ∂₂f = X_σ·Y + X·Y_σ, summed over columns × rows.
template <class T>
NANOSCOPY_HD Sums<T, 3> combine(const AxisSums<T>& X, const AxisSums<T>& Y, const IsotropicDataSums<T>& D) {
  Sums<T, 3> s;
  s.f = X.v * Y.v;
  s.ff = X.vv * Y.vv;
  s.fg = D.s[0];
  s.d[0] = X.dc * Y.v;
  s.d[1] = X.v * Y.dc;
  s.d[2] = X.ds * Y.v + X.v * Y.ds;
  s.fd[0] = X.vdc * Y.vv;
  s.fd[1] = X.vv * Y.vdc;
  s.fd[2] = X.vds * Y.vv + X.vv * Y.vds;
  for (int j = 0; j < 3; ++j) s.gd[j] = D.s[1 + j];
  s.dd[0] = X.dcdc * Y.vv;
  s.dd[1] = X.vdc * Y.vdc;
  s.dd[2] = X.dcds * Y.vv + X.vdc * Y.vds;
  s.dd[3] = X.vv * Y.dcdc;
  s.dd[4] = X.vds * Y.vdc + X.vv * Y.dcds;
  s.dd[5] = X.dsds * Y.vv + T(2) * X.vds * Y.vds + X.vv * Y.dsds;
  return s;
}

// The parameter layout p = (x̄, ȳ, σ) with everything but the axis terms; a
// model derives from it and adds Axis, make_axis, term and fill_terms.
struct Isotropic {
  static constexpr int n_params = 3;
  template <class T>
  using DataSums = IsotropicDataSums<T>;

  template <class T>
  NANOSCOPY_HD static T column_centre(const T p[3]) {
    return p[0];
  }
  template <class T>
  NANOSCOPY_HD static T row_centre(const T p[3]) {
    return p[1];
  }
  // The width of the column terms and of the row terms.
  template <class T>
  NANOSCOPY_HD static T column_width(const T p[3]) {
    return p[2];
  }
  template <class T>
  NANOSCOPY_HD static T row_width(const T p[3]) {
    return p[2];
  }

  // One pixel for the per-pixel estimators (estimators/mle.hpp): f = X·Y and
  // ∂f/∂p_j from the pixel's column term X and row term Y.
  template <class T>
  NANOSCOPY_HD static void pixel(const T*, const AxisTerm<T>& X, const AxisTerm<T>& Y, T& f, T df[n_params]) {
    f = X.v * Y.v;
    df[0] = X.dc * Y.v;
    df[1] = X.v * Y.dc;
    df[2] = X.ds * Y.v + X.v * Y.ds;
  }

  template <class T>
  NANOSCOPY_HD static Sums<T, 3> sums(const T[3], const AxisSums<T>& X, const AxisSums<T>& Y,
                                      const DataSums<T>& D) {
    return combine(X, Y, D);
  }

  // Centre outside the ROI, or σ outside (min_sigma, max(w, h)]: left_roi.
  template <class T>
  NANOSCOPY_HD static bool outside_roi(const T p[3], int w, int h, T min_sigma) {
    return !(p[0] >= T(-0.5) && p[0] <= T(w) - T(0.5) && p[1] >= T(-0.5) && p[1] <= T(h) - T(0.5) && p[2] > min_sigma &&
             p[2] <= T(w > h ? w : h));
  }
  // A trial step to σ ≤ 0 is not evaluated (it counts as a failed step).
  template <class T>
  NANOSCOPY_HD static bool admissible(const T p[3]) {
    return p[2] > T(0);
  }

  // The spot (x, y, σ) of the initial estimate or a SpotGuess as parameters, and back.
  template <class T>
  NANOSCOPY_HD static void from_spot(T x, T y, T sigma, T p[3]) {
    p[0] = x;
    p[1] = y;
    p[2] = sigma;
  }
  template <class T>
  NANOSCOPY_HD static void to_result(const T p[3], FitResult& r) {
    r.x = static_cast<float>(p[0]);
    r.y = static_cast<float>(p[1]);
    r.sigma = r.sigma_y = static_cast<float>(p[2]);
  }
};

}  // namespace nanoscopy::fit_detail
