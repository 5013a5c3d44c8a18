// Our HDF5 spline calibration (`psf.h5`), written by fit2d calibrate --model
// spline and read by fit2d --calibration:
//
//   /spline                  group; attributes (scalar):
//     format        string   "nanoscopy spline calibration"
//     version       float64  kSplinePsfVersion (core/spline_psf.hpp); another version is refused
//     voxel_xy_px, z_step_nm, centre_x, centre_y, focus_index, pixel_size_nm   float64
//                            (meaning and units: core/spline_psf.hpp)
//   /spline/coefficients     float32 [size_x, size_y, size_z, 64], C order: Gpufit's
//                            SPLINE_3D layout (h5py/numpy see the same array)
//   /spline/volume           optional float32 [nz, ny, nx]: the smoothed PSF the
//                            spline interpolates (x fastest), for plots and checks
#pragma once

#include <string>
#include <vector>

#include "nanoscopy/core/spline_psf.hpp"

namespace nanoscopy {

inline constexpr const char* kSplineCalibrationFormat = "nanoscopy spline calibration";

// InputError naming the file for every problem: not HDF5, no /spline group or
// /spline/coefficients dataset, a shape other than [x, y, z, 64] (or an axis
// of 0), a missing or non-finite attribute, another format or version, a
// NaN/Inf coefficient. `source` of the result is `path`.
SplinePsf read_spline_calibration(const std::string& path);

// Writes `psf` (and `volume`, when not null: (size_z + 1)·(size_y + 1)·(size_x + 1)
// samples, x fastest) atomically (core/atomic_file.hpp). OutputError naming the
// file when it cannot be written; UsageError for a psf whose coefficient count
// does not match its sizes or a volume of the wrong length.
void write_spline_calibration(const std::string& path, const SplinePsf& psf, const std::vector<float>* volume);

// Whether the file at `path` starts with the HDF5 signature (fit2d picks the
// spline calibration by content, the astigmatic JSON otherwise). False when unreadable.
bool looks_like_hdf5(const std::string& path);

}  // namespace nanoscopy
