// Spline PSFs and spots simulated from them, for the spline fit's tests and
// bench fit2d --model spline: a smooth astigmatic PSF made into a spline by
// core/spline_psf_build (so +z and −z differ), and Poisson spots drawn from a
// spline model itself (the fit's own model: bias and precision against its CRB
// measure the fitter, not the calibration).
#pragma once

#include <cstdint>
#include <vector>

#include "nanoscopy/core/spline_psf.hpp"
#include "nanoscopy/fit/engine.hpp"

namespace nanoscopy {

// A spline of size_xy × size_xy × slices samples (intervals one less), one
// voxel per camera pixel, `z_step_nm` apart, focus in the middle slice: each
// slice a unit-mass Gaussian sampled at the voxel corners with σx(z), σy(z) of
// typical_astigmatic_psf() (core/defocus_curve.hpp: foci ±250 nm apart, σ 1.3 px
// at the foci at 100 nm pixels). 27 × 27 × 121 at 10 nm is issue 27's realistic size.
SplinePsf astigmatic_spline_psf(int size_xy = 27, int slices = 121, double z_step_nm = 10.0,
                                double pixel_size_nm = 100.0);

struct SplineSpotTruth {
  double x, y, z;     // ROI pixels (pixel centre at the integer), nm on the calibration's scale
  double photons;     // α
  double background;  // photons per pixel
};

struct SplineSpots {
  int width = 0, height = 0;
  std::int64_t count = 0;
  std::vector<float> pixels;  // count·width·height photons (Poisson draws, or the exact model)
  std::vector<std::uint16_t> pixels_u16;
  std::vector<SplineSpotTruth> truth;
  RoiBatch batch(PixelType type) const {
    return RoiBatch{type == PixelType::u16 ? static_cast<const void*>(pixels_u16.data()) : pixels.data(), type, count,
                    width, height, nullptr};
  }
};

// `count` spots of `photons` and `background` in width × height ROIs, centre
// uniform within ±centre_range px of the ROI centre, z uniform in [z_min, z_max]
// (z_min == z_max: that depth), Poisson noise unless `noise` is false. Seeded.
SplineSpots simulate_spline_spots(const SplinePsf& psf, int width, int height, std::int64_t count, double photons,
                                  double background, double z_min, double z_max, std::uint64_t seed,
                                  double centre_range = 0.5, bool noise = true);

// The Cramér–Rao bound (standard deviations) of x, y (px), z (nm on the
// calibration's scale), photons and background at the truth of one spot:
// the spline model's Poisson Fisher information (fit/models/spline3d.hpp).
struct SplineCrb {
  double x, y, z, photons, background;
};
SplineCrb spline_crb(const SplinePsf& psf, int width, int height, const SplineSpotTruth& truth);

}  // namespace nanoscopy
