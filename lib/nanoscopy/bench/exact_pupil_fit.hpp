// The yardsticks of `bench spline3d` (issue 27), both from the TRUE pupil PSF (sim/pupil_psf.hpp):
//
//  - pupil_crb: the Poisson Cramér–Rao bound of x, y, z for one emitter, θ = (x, y, z, photons,
//    background) over a box × box ROI, derivatives by central differences of the pupil model.
//  - exact_pupil_mle: what the maximum-likelihood estimate reaches when its model IS the true PSF
//    (no beads, no calibration, no spline) on centred boxes: Poisson ROIs fitted by Levenberg–Marquardt
//    from the truth and from starts every 200 nm of z, the best likelihood kept (the global optimum
//    as far as starts can find it). The bound is asymptotic: far from focus at a few thousand photons
//    this estimate lies above it, and no fit of a calibrated spline can be expected to do better.
#pragma once

#include <array>
#include <cstdint>

namespace nanoscopy {

class PupilPsf;

// Variances: x and y in px², z in nm². The emitter at (x, y) px (pixel centres at integers, the box from
// pixel 0) and z nm. NaN when the Fisher matrix is singular.
std::array<double, 3> pupil_crb(const PupilPsf& psf, int box, double x, double y, double z_nm, double photons,
                                double background);

struct ExactFitStats {
  std::int64_t fits = 0;
  double rms_x_px = 0, rms_y_px = 0, rms_z_nm = 0;  // about the truth
  double bias_z_nm = 0;
  std::int64_t far = 0;  // fits whose z is more than 150 nm off
};

// `fits` ROIs with the emitter uniform within ±0.5 px of the box's centre and z uniform in [z_lo, z_hi);
// z stays inside the PSF's table. Deterministic for a seed; runs on every core.
ExactFitStats exact_pupil_mle(const PupilPsf& psf, int box, double z_lo_nm, double z_hi_nm, double photons,
                              double background, std::int64_t fits, std::uint64_t seed);

}  // namespace nanoscopy
