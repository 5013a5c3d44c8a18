// The astigmatic 3D model (ShapeModel::astigmatic): the pixel-integrated
// elliptical Gaussian of gauss2d_elliptical.hpp whose widths follow the
// calibration, σx = σx(z), σy = σy(z) (core/defocus_curve.hpp), fitted directly
// in p = (x̄, ȳ, z) with z in nm; α = integrated counts.
//
// Everything is the elliptical model's at (x̄, ȳ, σx(z), σy(z)) plus the chain
// rule: ∂f/∂z = ∂f/∂σx·σx'(z) + ∂f/∂σy·σy'(z), so the sums of the 3 parameters
// are the elliptical model's 4 contracted with the Jacobian J = ∂(x̄, ȳ, σx, σy)/∂p.
//
// Unlike the 2D models this one carries per-batch constants (the curves, in
// pixels for σ and nm for z): the engines construct it from FitSettings and call
// its members on that object (model_list.hpp).
#pragma once

#include <type_traits>

#include "nanoscopy/core/defocus_curve.hpp"
#include "nanoscopy/core/hd.hpp"
#include "nanoscopy/fit/estimators/lsq.hpp"
#include "nanoscopy/fit/fit_types.hpp"
#include "nanoscopy/fit/models/gauss2d_elliptical.hpp"
#include "nanoscopy/fit/models/separable.hpp"
#include "nanoscopy/fit/real.hpp"

namespace nanoscopy::fit_detail {

struct Astigmatic3d {
  static constexpr ShapeModel shape = ShapeModel::astigmatic;
  static constexpr const char* name = "astigmatic";
  static constexpr int n_params = 3;
  static constexpr int z_param = 2;  // the CRLB of θ_2 is reported as crlb_z
  static constexpr const char* param_names[n_params] = {"x", "y", "z"};
  template <class T>
  using DataSums = EllipticalDataSums<T>;
  template <class T>
  using Axis = Gauss2dElliptical::Axis<T>;

  // Both scalars' copies, so a float kernel reads float constants (no FP64).
  AstigmaticPsf<float> psf_f{};
  AstigmaticPsf<double> psf_d{};

  Astigmatic3d() = default;
  explicit Astigmatic3d(const FitSettings& s) : psf_f(s.astigmatism.as<float>()), psf_d(s.astigmatism) {}

  template <class T>
  NANOSCOPY_HD const AstigmaticPsf<T>& psf() const {
    if constexpr (std::is_same_v<T, float>)
      return psf_f;
    else
      return psf_d;
  }

  // The four elliptical parameters (x̄, ȳ, σx, σy) at p and dσx/dz, dσy/dz.
  template <class T>
  NANOSCOPY_HD void widths(const T p[3], T& sx, T& sy, T& dsx, T& dsy) const {
    psf<T>().evaluate(p[2], sx, sy, dsx, dsy);
  }

  // z's unit for the solve (lm.hpp, param_unit): the mean depth of focus d,
  // over which σ changes by a fraction of itself; 1 for x̄, ȳ, α, β.
  template <class T>
  NANOSCOPY_HD T unit(int j) const {
    return j == z_param ? (psf<T>().x.d + psf<T>().y.d) / T(2) : T(1);
  }

  template <class T>
  NANOSCOPY_HD static T column_centre(const T p[3]) {
    return p[0];
  }
  template <class T>
  NANOSCOPY_HD static T row_centre(const T p[3]) {
    return p[1];
  }
  template <class T>
  NANOSCOPY_HD T column_width(const T p[3]) const {
    return psf<T>().x.sigma(p[2]);
  }
  template <class T>
  NANOSCOPY_HD T row_width(const T p[3]) const {
    return psf<T>().y.sigma(p[2]);
  }

  template <class T>
  NANOSCOPY_HD static Axis<T> make_axis(T sigma) {
    return Gauss2dElliptical::make_axis(sigma);
  }
  template <class T>
  NANOSCOPY_HD static AxisTerm<T> term(const Axis<T>& m, T u) {
    return Gauss2dElliptical::term(m, u);
  }
  template <class T>
  NANOSCOPY_HD static void fill_terms(const Axis<T>& m, T centre, int n, T* v, T* dc, T* ds) {
    Gauss2dElliptical::fill_terms(m, centre, n, v, dc, ds);
  }

  template <class T>
  NANOSCOPY_HD void pixel(const T* p, const AxisTerm<T>& X, const AxisTerm<T>& Y, T& f, T df[n_params]) const {
    T sx, sy, a, b;
    widths(p, sx, sy, a, b);
    f = X.v * Y.v;
    df[0] = X.dc * Y.v;
    df[1] = X.v * Y.dc;
    df[2] = a * X.ds * Y.v + b * X.v * Y.ds;
  }

  // The elliptical sums (indices 0 … 3 = x̄, ȳ, σx, σy) contracted with J:
  // z-entries are a·(σx entry) + b·(σy entry), a = σx', b = σy'.
  template <class T>
  NANOSCOPY_HD Sums<T, 3> sums(const T p[3], const AxisSums<T>& X, const AxisSums<T>& Y, const DataSums<T>& D) const {
    T sx, sy, a, b;
    widths(p, sx, sy, a, b);
    const T q[4] = {p[0], p[1], sx, sy};
    const Sums<T, 4> e = Elliptical::sums(q, X, Y, D);
    Sums<T, 3> s;
    s.f = e.f;
    s.ff = e.ff;
    s.fg = e.fg;
    for (int j = 0; j < 2; ++j) {
      s.d[j] = e.d[j];
      s.fd[j] = e.fd[j];
      s.gd[j] = e.gd[j];
    }
    s.d[2] = a * e.d[2] + b * e.d[3];
    s.fd[2] = a * e.fd[2] + b * e.fd[3];
    s.gd[2] = a * e.gd[2] + b * e.gd[3];
    // Elliptical upper triangle: 00 01 02 03 11 12 13 22 23 33; ours: 00 01 02 11 12 22.
    s.dd[0] = e.dd[0];
    s.dd[1] = e.dd[1];
    s.dd[2] = a * e.dd[2] + b * e.dd[3];
    s.dd[3] = e.dd[4];
    s.dd[4] = a * e.dd[5] + b * e.dd[6];
    s.dd[5] = a * a * e.dd[7] + T(2) * a * b * e.dd[8] + b * b * e.dd[9];
    return s;
  }

  // Centre outside the ROI or z outside the calibrated range: left_roi.
  template <class T>
  NANOSCOPY_HD bool outside_roi(const T p[3], int w, int h, T) const {
    return !(p[0] >= T(-0.5) && p[0] <= T(w) - T(0.5) && p[1] >= T(-0.5) && p[1] <= T(h) - T(0.5) &&
             psf<T>().inside(p[2]));
  }
  template <class T>
  NANOSCOPY_HD static bool admissible(const T*) {
    return true;  // σx(z), σy(z) > 0 everywhere (DefocusCurve clamps its radicand)
  }

  // A round spot starts in the middle between the two foci (σx = σy there for
  // a symmetric lens), inside the calibrated range; the width of the guess is
  // not used (it cannot tell above from below focus).
  template <class T>
  NANOSCOPY_HD void from_spot(T x, T y, T, T p[3]) const {
    const AstigmaticPsf<T>& k = psf<T>();
    p[0] = x;
    p[1] = y;
    p[2] = k.clamp_z((k.x.c + k.y.c) / T(2));
  }
  template <class T>
  NANOSCOPY_HD void to_result(const T p[3], FitResult& r) const {
    r.x = static_cast<float>(p[0]);
    r.y = static_cast<float>(p[1]);
    r.z = static_cast<float>(p[2]);
    r.sigma = static_cast<float>(column_width(p));
    r.sigma_y = static_cast<float>(row_width(p));
  }
};

}  // namespace nanoscopy::fit_detail
