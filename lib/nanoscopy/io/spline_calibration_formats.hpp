// Other tools' spline PSF calibrations, read into (and written from) SplinePsf
// (core/spline_psf.hpp; our own HDF5 is core/spline_psf_io.hpp).
//
// SMAP's `*_3dcal.mat` (jries/SMAP fit3Dcspline, read at commit 51d8b9a4; DECODE's
// decode/utils/calibration_io.py at 4c0f38c3 reads the same): a MATLAB v5/v7 file
// (plain `save()`, not HDF5) with a struct `SXY` (possibly an array of structs, one per
// field-of-view region: we read SXY(1)) whose field `cspline` holds
//   coeff  a cell of single arrays, one per channel (we read channel 1), each
//          [Ny, Nx, Nz, 64] in MATLAB's order: dimension 1 is the image row (our y),
//          dimension 2 the column (our x) — MATLAB's x/y are swapped against ours;
//          coefficient q (0-based) = pz·16 + px·4 + py (SMAP's Spline3D_interp and its
//          fitters' kernel_computeDelta3D; "px" along our x, "py" along our y)
//   x0     the ROI's centre sample, counting from 1 (SMAP: dRx + 1) → our centre_x = centre_y = x0 − 1
//   z0     the focal plane as SMAP's fitters and DECODE use it: z_nm = ±(z_spline − z0)·dz with the
//          spline's z coordinate counting from 0 → our focus_index = z0 (SMAP's calibration
//          computes it as a 1-based slice index; its fitter and DECODE take it as the 0-based
//          coordinate, and so do we, so that the z values agree with theirs)
//   dz     nm per slice → z_step_nm
// SMAP's voxel is one camera pixel (voxel_xy_px = 1). SMAP reports z with the opposite
// sign (znm = −(z − z0)·dz): our z grows with the stack's frame index, SMAP's falls.
// The pixel size is not in cspline: we read parameters.pixelsize_nm (ours) or
// parameters.cam_pixelsize_um (SMAP's camera) when present, else 100 nm.
// Written: SXY 1×1 with cspline.{coeff = {single [Ny, Nx, Nz, 64]}, x0, z0, dz, mirror = 0,
// normf = 1} and parameters.{pixelsize_nm, cam_pixelsize_um = [px px]/1000, dz}, zlib
// compressed (scipy.io.loadmat reads it: tests/python/smap_check_3dcal.py).
//
// Picasso's spline calibration (`picasso spline-calibrate`, the 0.11 development line:
// picasso/spline.py `calibrate_spline` and picasso/io.py `save_spline_calibration`, read at
// jungmannlab/picasso commit 74f8e27e): an HDF5 file with
//   /coefficients   float32, nominal shape [64, nix, niy, niz]; its C-order buffer is
//                   Gpuspline's: ((iz·niy + iy)·nix + ix)·64 + pz·16 + py·4 + px
//   attribute "metadata" (on /): a JSON string with model ("spline-3d"; "spline-2d" has no z
//                   and is refused), n_intervals [nix, niy, niz], z_center (the slice of z = 0),
//                   z_step_nm, pixelsize (nm), oversampling (1), lateral_centered (true: the PSF's
//                   centre is the box centre, (n − 1)/2 samples) and magnification_factor (the
//                   refractive-index factor Picasso applies to fitted z, 0.79 by default: reported,
//                   not applied — fit2d's --z-factor is the same thing).
// Picasso's z also falls with the slice index (z_of_step = −(k·d − span/2)).
#pragma once

#include <string>
#include <vector>

#include "nanoscopy/core/spline_psf.hpp"

namespace nanoscopy {

// Whether this build reads and writes MATLAB files (libmatio was found at configure time).
bool smap_format_available();

// InputError naming the file: not a MAT file, no SXY or SXY.cspline, a coeff that is not a cell of
// single/double 4-D arrays with 64 coefficients, missing x0/z0/dz, non-finite values; or (without
// libmatio) that this build cannot read it.
SplinePsf read_smap_calibration(const std::string& path);

// Atomically. UsageError naming the file when `psf` cannot be said in SMAP's terms (voxel_xy_px ≠ 1,
// centre_x ≠ centre_y); OutputError when it cannot be written or libmatio is missing.
void write_smap_calibration(const std::string& path, const SplinePsf& psf);

// InputError naming the file for anything that is not a Picasso 3D spline calibration.
// `magnification_factor` (optional) receives the file's z magnification factor (1 when absent).
SplinePsf read_picasso_spline_calibration(const std::string& path, double* magnification_factor = nullptr);

// The calibration at `path`, whichever of the three it is: by content (a MATLAB header → SMAP; HDF5
// with a /spline group → ours; HDF5 with /coefficients and a "metadata" attribute → Picasso), and
// for a MATLAB v4 file without a header by its .mat extension. InputError naming the file otherwise.
SplinePsf read_spline_any(const std::string& path);

// Ours (psf.h5) or, for a .mat name, SMAP's (`volume` is not stored there).
void write_spline_any(const std::string& path, const SplinePsf& psf, const std::vector<float>* volume);

}  // namespace nanoscopy
