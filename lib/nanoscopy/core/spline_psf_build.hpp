// The tricubic spline of a sampled PSF volume (core/spline_psf.hpp): the step
// of the calibration (fit2d calibrate --model spline) after the beads are
// aligned, averaged and smoothed, and what tests and bench use to make a spline
// from a simulated PSF.
#pragma once

#include <vector>

#include "nanoscopy/core/spline_psf.hpp"

namespace nanoscopy {

// `volume`: the smoothed PSF sampled at the voxel corners, nx·ny·nz values,
// x fastest: index = (z·ny + y)·nx + x. The spline has (nx − 1)·(ny − 1)·(nz − 1)
// intervals and passes through every sample (scaled by the normalisation).
// voxel_xy_px, z_step_nm, centre_x, centre_y, focus_index and pixel_size_nm are
// stored as given (their meaning: core/spline_psf.hpp). The values are
// normalised so that the samples of the plane z = focus_index (linear between
// the two nearest slices) sum to 1 per camera pixel area (Σ·voxel_xy_px² = 1);
// a volume whose focal plane sums to ≤ 0 is scaled to a largest |value| of 1
// instead. Finite output for any finite input. InputError (naming "spline
// volume") for a NaN/Inf sample, fewer than 4 samples on an axis, a volume of
// the wrong length, or non-finite / non-positive voxel sizes.
SplinePsf spline_from_volume(const std::vector<float>& volume, int nx, int ny, int nz, double voxel_xy_px,
                             double z_step_nm, double centre_x, double centre_y, double focus_index,
                             double pixel_size_nm);

}  // namespace nanoscopy
