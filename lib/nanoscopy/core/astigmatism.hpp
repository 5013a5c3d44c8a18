// Astigmatic 3D calibration: the PSF's widths σx(z), σy(z) by the defocus
// polynomial of Huang et al. (Science 319, 810, 2008), per axis
//
//   σ(z) = σ0 · sqrt(1 + u² + A·u³ + B·u⁴),   u = (z − c) / d
//
// (σ0 the width in focus, c the axis's focal plane, d the depth of focus, A and
// B the higher-order terms). The curves themselves are core/defocus_curve.hpp
// (header-only, NANOSCOPY_HD: the fit kernels evaluate the CPU's function).
//
// File (JSON, e.g. astig.json; all lengths in nm):
//   {"format": "nanoscopy astigmatic calibration", "version": 1,
//    "model": "defocus-polynomial", "units": "nm", "pixel_size_nm": 108,
//    "z_range_nm": [-600, 600],
//    "x": {"sigma0": 130, "c": -250, "d": 400, "A": 0, "B": 0},
//    "y": {"sigma0": 130, "c": 250, "d": 400, "A": 0, "B": 0}}
// "format" and "version", when present, must be these (a version this build does not
// know is refused: its keys may mean something else); a file without "version" is read as
// version 1. "pixel_size_nm" is the pixel size of the bead stack it was made from: fit2d
// warns when it differs from the movie's by more than 1 % (check_calibration_pixel_size).
#pragma once

#include <span>
#include <string>

#include "nanoscopy/core/defocus_curve.hpp"

namespace nanoscopy {

// The calibration file's format version (the "version" key) this build writes and reads.
inline constexpr int kAstigmaticCalibrationVersion = 1;

// The calibration as a file holds it: σ0, c and d in nm.
struct AstigmaticCalibration {
  DefocusCurve<double> x, y;
  double z_min_nm = -600, z_max_nm = 600;
  double pixel_size_nm = 100;
  std::string source;  // the file it was read from (for messages); empty for a built-in one

  double sigma_x_nm(double z_nm) const { return x.sigma(z_nm); }
  double sigma_y_nm(double z_nm) const { return y.sigma(z_nm); }

  // σ in pixels of `pixel_size` nm (default: the calibration's own), z in nm.
  template <typename T>
  AstigmaticPsf<T> in_pixels(double pixel_size = 0) const {
    const double px = pixel_size > 0 ? pixel_size : pixel_size_nm;
    auto curve = [px](const DefocusCurve<double>& k) {
      return DefocusCurve<T>{static_cast<T>(k.sigma0 / px), static_cast<T>(k.c), static_cast<T>(k.d), static_cast<T>(k.a),
                             static_cast<T>(k.b)};
    };
    return {curve(x), curve(y), static_cast<T>(z_min_nm), static_cast<T>(z_max_nm)};
  }

  bool covers(double z_min, double z_max) const { return z_min >= z_min_nm && z_max <= z_max_nm; }
  // UsageError (where: `where`, e.g. the option) naming the calibration file
  // when [z_min, z_max] nm is not inside its calibrated range.
  void require_covers(double z_min, double z_max, const std::string& where) const;

  // InputError naming `source` for non-finite values, σ0 ≤ 0, d = 0, an empty
  // or inverted z range, pixel size ≤ 0, or σ not positive over the z range.
  void validate() const;
};

// A typical astigmatic lens (a cylindrical lens giving foci ±250 nm apart,
// ~±600 nm usable): σ0 = 1.2 px in focus, d = 400 nm, A = B = 0.
AstigmaticCalibration default_astigmatic_calibration(double pixel_size_nm);

// InputError naming the file (one line) for an unreadable file, malformed JSON,
// a wrong model or unit, a missing or non-numeric key, or values validate() refuses.
AstigmaticCalibration read_astigmatic_calibration(const std::string& path);
// A one-line warning (no newline; empty when they agree) when the calibration was made at a pixel size
// more than 1 % from `pixel_size_nm` (the movie's): its widths in nm then likely belong to other
// optics or a wrong pixel size in either file.
std::string calibration_pixel_size_warning(const AstigmaticCalibration& calibration, double pixel_size_nm);

// Atomically; OutputError naming `path` on failure.
void write_astigmatic_calibration(const std::string& path, const AstigmaticCalibration& calibration);
std::string to_json(const AstigmaticCalibration& calibration);

// Least-squares fit of one defocus curve to samples (z_k, σ_k) (Levenberg–
// Marquardt on σ0, c, d, A, B; with `higher_order` false A = B = 0). The initial
// guess comes from the quadratic σ² = σ0²(1 + u²) fitted by linear least squares,
// or, if that is not a parabola opening upwards, from the smallest σ. Non-finite
// samples are skipped. InputError (where: `where`) with fewer than 6 usable samples
// (4 without the higher-order terms) or when the fit does not converge.
struct DefocusFit {
  DefocusCurve<double> curve;
  double rms = 0;       // root-mean-square residual, unit of σ
  int iterations = 0;
};
DefocusFit fit_defocus_curve(std::span<const double> z, std::span<const double> sigma, bool higher_order = true,
                             const std::string& where = "calibration");

// Both axes from bead samples (z in nm, σx and σy in nm); the z range is the
// samples' range.
AstigmaticCalibration fit_astigmatic_calibration(std::span<const double> z, std::span<const double> sigma_x,
                                                 std::span<const double> sigma_y, double pixel_size_nm,
                                                 bool higher_order = true, const std::string& where = "calibration");

}  // namespace nanoscopy
