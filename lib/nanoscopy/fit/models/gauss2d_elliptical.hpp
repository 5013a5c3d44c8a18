// The pixel-integrated elliptical 2D Gaussian (ShapeModel::elliptical): the
// integrated model of gauss2d_integrated.hpp with its own width per axis,
// p = (x̄, ȳ, σx, σy); α = integrated counts (the SMLM convention). The
// separable terms are Gauss2dIntegrated's (column terms at σx, row terms at
// σy); the layout (Elliptical below) is this model's own, on separable.hpp's
// AxisTerm and AxisSums: ∂f/∂x̄ = X'·Y, ∂f/∂ȳ = X·Y', ∂f/∂σx = X_σ·Y,
// ∂f/∂σy = X·Y_σ.
#pragma once

#include "nanoscopy/core/hd.hpp"
#include "nanoscopy/fit/estimators/lsq.hpp"
#include "nanoscopy/fit/fit_types.hpp"
#include "nanoscopy/fit/models/gauss2d_integrated.hpp"
#include "nanoscopy/fit/models/separable.hpp"
#include "nanoscopy/fit/real.hpp"

namespace nanoscopy::fit_detail {

// The data sums Σ g·f, Σ g·∂_j f of p = (x̄, ȳ, σx, σy): fg, gd[0 … 3].
template <class T>
struct EllipticalDataSums {
  static constexpr int size = 5;
  T s[size];
};

template <class T>
NANOSCOPY_HD void clear(EllipticalDataSums<T>& d) {
  for (int i = 0; i < EllipticalDataSums<T>::size; ++i) d.s[i] = 0;
}

// One pixel of value g with column term X and row term Y.
template <class T>
NANOSCOPY_HD void accumulate(EllipticalDataSums<T>& d, T g, const AxisTerm<T>& X, const AxisTerm<T>& Y) {
  d.s[0] += g * X.v * Y.v;
  d.s[1] += g * X.dc * Y.v;
  d.s[2] += g * X.v * Y.dc;
  d.s[3] += g * X.ds * Y.v;
  d.s[4] += g * X.v * Y.ds;
}

// One row given its column-weighted data sums gx = Σ_c g·X, gxd = Σ_c g·X', gxs = Σ_c g·X_σ.
template <class T>
NANOSCOPY_HD void accumulate_row(EllipticalDataSums<T>& d, T gx, T gxd, T gxs, const AxisTerm<T>& Y) {
  d.s[0] += gx * Y.v;
  d.s[1] += gxd * Y.v;
  d.s[2] += gx * Y.dc;
  d.s[3] += gxs * Y.v;
  d.s[4] += gx * Y.ds;
}

// The parameter layout p = (x̄, ȳ, σx, σy): σx is the width of the column
// terms, σy that of the row terms.
struct Elliptical {
  static constexpr int n_params = 4;
  template <class T>
  using DataSums = EllipticalDataSums<T>;

  template <class T>
  NANOSCOPY_HD static T column_centre(const T p[4]) {
    return p[0];
  }
  template <class T>
  NANOSCOPY_HD static T row_centre(const T p[4]) {
    return p[1];
  }
  template <class T>
  NANOSCOPY_HD static T column_width(const T p[4]) {
    return p[2];
  }
  template <class T>
  NANOSCOPY_HD static T row_width(const T p[4]) {
    return p[3];
  }

  // f and ∂f/∂p_j at one pixel from its column term X and row term Y.
  template <class T>
  NANOSCOPY_HD static void pixel(const T*, const AxisTerm<T>& X, const AxisTerm<T>& Y, T& f, T df[n_params]) {
    f = X.v * Y.v;
    df[0] = X.dc * Y.v;
    df[1] = X.v * Y.dc;
    df[2] = X.ds * Y.v;
    df[3] = X.v * Y.ds;
  }

  // The products of the four derivatives, each a column sum times a row sum.
  template <class T>
  NANOSCOPY_HD static Sums<T, 4> sums(const T[4], const AxisSums<T>& X, const AxisSums<T>& Y, const DataSums<T>& D) {
    Sums<T, 4> s;
    s.f = X.v * Y.v;
    s.ff = X.vv * Y.vv;
    s.fg = D.s[0];
    s.d[0] = X.dc * Y.v;
    s.d[1] = X.v * Y.dc;
    s.d[2] = X.ds * Y.v;
    s.d[3] = X.v * Y.ds;
    s.fd[0] = X.vdc * Y.vv;
    s.fd[1] = X.vv * Y.vdc;
    s.fd[2] = X.vds * Y.vv;
    s.fd[3] = X.vv * Y.vds;
    for (int j = 0; j < 4; ++j) s.gd[j] = D.s[1 + j];
    // Upper triangle, row by row: 00 01 02 03 11 12 13 22 23 33.
    s.dd[0] = X.dcdc * Y.vv;
    s.dd[1] = X.vdc * Y.vdc;
    s.dd[2] = X.dcds * Y.vv;
    s.dd[3] = X.vdc * Y.vds;
    s.dd[4] = X.vv * Y.dcdc;
    s.dd[5] = X.vds * Y.vdc;
    s.dd[6] = X.vv * Y.dcds;
    s.dd[7] = X.dsds * Y.vv;
    s.dd[8] = X.vds * Y.vds;
    s.dd[9] = X.vv * Y.dsds;
    return s;
  }

  // Centre outside the ROI, or σx or σy outside (min_sigma, max(w, h)]: left_roi.
  template <class T>
  NANOSCOPY_HD static bool outside_roi(const T p[4], int w, int h, T min_sigma) {
    const T wide = T(w > h ? w : h);
    return !(p[0] >= T(-0.5) && p[0] <= T(w) - T(0.5) && p[1] >= T(-0.5) && p[1] <= T(h) - T(0.5) && p[2] > min_sigma &&
             p[2] <= wide && p[3] > min_sigma && p[3] <= wide);
  }
  template <class T>
  NANOSCOPY_HD static bool admissible(const T p[4]) {
    return p[2] > T(0) && p[3] > T(0);
  }

  // A round spot (x, y, σ) starts σx = σy = σ.
  template <class T>
  NANOSCOPY_HD static void from_spot(T x, T y, T sigma, T p[4]) {
    p[0] = x;
    p[1] = y;
    p[2] = sigma;
    p[3] = sigma;
  }
  template <class T>
  NANOSCOPY_HD static void to_result(const T p[4], FitResult& r) {
    r.x = static_cast<float>(p[0]);
    r.y = static_cast<float>(p[1]);
    r.sigma = static_cast<float>(p[2]);
    r.sigma_y = static_cast<float>(p[3]);
  }
};

struct Gauss2dElliptical : Elliptical {
  static constexpr ShapeModel shape = ShapeModel::elliptical;
  static constexpr const char* name = "elliptical";
  static constexpr const char* param_names[n_params] = {"x", "y", "sigma_x", "sigma_y"};

  // The axis terms of the integrated Gaussian, at each axis' own width.
  template <class T>
  using Axis = Gauss2dIntegrated::Axis<T>;
  template <class T>
  NANOSCOPY_HD static Axis<T> make_axis(T sigma) {
    return Gauss2dIntegrated::make_axis(sigma);
  }
  template <class T>
  NANOSCOPY_HD static AxisTerm<T> term(const Axis<T>& m, T u) {
    return Gauss2dIntegrated::term(m, u);
  }
  template <class T>
  NANOSCOPY_HD static void fill_terms(const Axis<T>& m, T centre, int n, T* v, T* dc, T* ds) {
    Gauss2dIntegrated::fill_terms(m, centre, n, v, dc, ds);
  }
};

}  // namespace nanoscopy::fit_detail
