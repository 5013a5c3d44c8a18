// The astigmatic PSF's width curves σx(z), σy(z): the defocus polynomial of
// Huang et al. (Science 319, 810, 2008) per axis,
//
//   σ(z) = σ0 · sqrt(1 + u² + A·u³ + B·u⁴),   u = (z − c) / d.
//
// Header-only, NANOSCOPY_HD and free of std containers, so the fit settings
// (fit/fit_types.hpp) carry it and a CUDA kernel evaluates the same function as
// the CPU. The calibration file and its fit are core/astigmatism.hpp.
#pragma once

#include <math.h>

#include "nanoscopy/core/hd.hpp"

namespace nanoscopy {

// One axis's defocus curve; σ0 in the unit σ is wanted in (nm or px), c and d
// in the unit of z (nm).
template <typename T>
struct DefocusCurve {
  T sigma0 = 1, c = 0, d = 1, a = 0, b = 0;

  // 1 + u² + A u³ + B u⁴, kept at least a tiny positive value so that σ stays
  // defined (and positive) where a fitted polynomial would dip below zero.
  NANOSCOPY_HD T radicand(T z) const {
    const T u = (z - c) / d;
    const T q = T(1) + u * u * (T(1) + u * (a + u * b));
    return q > T(1e-6) ? q : T(1e-6);
  }
  NANOSCOPY_HD T sigma(T z) const { return sigma0 * sqrt_hd(radicand(z)); }
  // σ and dσ/dz together: dσ/dz = σ0 (2u + 3A u² + 4B u³) / (2 d sqrt(q)).
  NANOSCOPY_HD void evaluate(T z, T& s, T& ds_dz) const {
    const T u = (z - c) / d;
    const T q0 = T(1) + u * u * (T(1) + u * (a + u * b));
    const T q = q0 > T(1e-6) ? q0 : T(1e-6);
    const T r = sqrt_hd(q);
    s = sigma0 * r;
    ds_dz = q0 > T(1e-6) ? sigma0 * (u * (T(2) + u * (T(3) * a + T(4) * b * u))) / (T(2) * d * r) : T(0);
  }
  NANOSCOPY_HD T derivative(T z) const {
    T s, ds;
    evaluate(z, s, ds);
    return ds;
  }

 private:
  NANOSCOPY_HD static T sqrt_hd(T v) { return sqrt(v); }  // <math.h>'s overloads, host and device
};

// Both axes of an astigmatic PSF, as an estimator uses it: z in nm, σ in the
// unit of the curves' σ0 (pixels after AstigmaticCalibration::in_pixels).
template <typename T>
struct AstigmaticPsf {
  DefocusCurve<T> x, y;
  T z_min = 0, z_max = 0;  // the calibrated range, nm

  NANOSCOPY_HD void evaluate(T z, T& sx, T& sy, T& dsx_dz, T& dsy_dz) const {
    x.evaluate(z, sx, dsx_dz);
    y.evaluate(z, sy, dsy_dz);
  }
  NANOSCOPY_HD T clamp_z(T z) const { return z < z_min ? z_min : (z > z_max ? z_max : z); }
  NANOSCOPY_HD bool inside(T z) const { return z >= z_min && z <= z_max; }

  // The same curves in scalar U (the float fit kernels take the settings' double ones converted).
  template <typename U>
  NANOSCOPY_HD AstigmaticPsf<U> as() const {
    const auto curve = [](const DefocusCurve<T>& k) {
      return DefocusCurve<U>{static_cast<U>(k.sigma0), static_cast<U>(k.c), static_cast<U>(k.d), static_cast<U>(k.a),
                             static_cast<U>(k.b)};
    };
    return {curve(x), curve(y), static_cast<U>(z_min), static_cast<U>(z_max)};
  }
};

// A typical astigmatic lens in pixels of ~100 nm (a cylindrical lens giving
// foci ±250 nm apart, ~±600 nm usable; core/astigmatism.hpp's
// default_astigmatic_calibration at 100 nm/px): the fit settings' and the spot
// simulator's default, so the astigmatic model is defined without a file.
constexpr AstigmaticPsf<double> typical_astigmatic_psf() {
  return {{1.3, -250.0, 400.0, 0.0, 0.0}, {1.3, 250.0, 400.0, 0.0, 0.0}, -600.0, 600.0};
}

}  // namespace nanoscopy
