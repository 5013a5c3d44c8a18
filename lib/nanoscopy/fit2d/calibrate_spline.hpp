// fit2d calibrate --model spline: the microscope's own 3D PSF from a bead z-stack,
// as a tricubic spline (core/spline_psf.hpp).
//
//  1. Hot pixels: a pixel above the highest of its 8 neighbours by more than 6 σ
//     (σ: the stack's robust noise) in at least 75 % of the frames is a camera
//     defect, not a bead (a bead's pixel is above all its neighbours only near
//     focus); it is replaced by its neighbours' median in every frame.
//  2. Beads: local maxima of the maximum projection (3×3 mean first) above the
//     background by 10 σ of the projection; dim junk (below 20 % of the typical
//     bright bead), single-pixel spikes and wide blobs (second-moment width beyond
//     0.5 px or 2.5 × the typical bead's) are dropped, and so are beads whose ROIs
//     (box × box) overlap another candidate's or leave the frame.
//  3. Each bead's stack (box + 4 px on a side) minus its background (the median
//     of its ROI's border over all frames), scaled to unit sum.
//  4. Alignment by cross-correlation: x, y from the z projections (±2 px), z from
//     the stacks (±z_search_nm), each refined to sub-voxel by a parabola through
//     the correlation's peak and its neighbours; the beads are resampled (a
//     Fourier phase ramp in x, y — exact for a PSF sampled at Nyquist or finer —
//     Keys cubic in z) onto the reference and averaged; twice, the second time
//     against the first average. Shifts are re-centred on their mean (the
//     average is the mean bead). Beads whose residual against the average is
//     beyond 3× the median residual are dropped (with 3 or more beads).
//  5. Smoothing along z (and optionally x, y): a discrete smoothing spline
//     (Whittaker: min Σ(f − y)² + λ Σ(Δ²f)², λ from the cut-off period), solved
//     with a banded Cholesky factorisation of the positive-definite I + λDᵀD: no
//     NaN or Inf for any finite input, any step. Negative values are set to 0.
//  6. The centre: the centroid of the focal plane's slice; the focal plane is
//     z = 0 (the centre frame, or --z0), moved by the beads' mean z shift.
//  7. The lateral grid made `oversample` times finer (Fourier interpolation, as the
//     alignment): a cubic spline through samples one camera pixel apart misses a PSF
//     sampled near Nyquist between them (z biased by up to ≈ 30 nm at sub-pixel
//     positions for 108 nm pixels); half-pixel voxels (the default) leave ≈ 2 nm.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nanoscopy/core/spline_psf.hpp"

namespace nanoscopy {

struct SplineCalibrationSettings {
  double z_step_nm = 10;
  std::optional<double> z0_nm;  // z of frame 0; unset: the centre frame is z = 0
  int box = 21;                 // the spline's lateral samples (odd): it covers ±box/2 px
  double smooth_z_nm = 200;     // cut-off period along z, nm (the PSF has no structure finer than λ/n ≈ 500 nm)
  double smooth_xy_px = 0;      // cut-off period in x, y, px (0: none)
  double z_search_nm = 150;     // beads' z offsets searched, ± nm
  double pixel_size_nm = 100;
  int oversample = 2;           // spline voxels per camera pixel in x, y (1: SMAP's and Picasso's one-pixel voxel)
};

struct SplineBead {
  double x = 0, y = 0;            // px, the ROI's centre pixel
  double shift_x = 0, shift_y = 0, shift_z = 0;  // px, px, slices: where it sits against the average
  double residual = 0;            // RMS of (bead − average) / RMS of the average, over the spline's voxels
  bool used = false;
  std::string dropped;            // why not used (empty when used)
};

struct SplineCalibrationResult {
  SplinePsf psf;
  std::vector<float> volume;  // the smoothed PSF samples, nx·ny·nz, x fastest (psf's normalisation)
  int nx = 0, ny = 0, nz = 0;
  std::vector<SplineBead> beads;            // every candidate, used or not
  std::vector<std::vector<float>> aligned;  // per used bead: its aligned stack minus the average, same grid
  std::int64_t hot_pixels = 0;              // repaired
  std::int64_t first_frame = 0;             // the frame of the volume's slice 0
};

// `stack`: photons per pixel, width × height × frames, frame-major (frame t at t·width·height, x fastest).
// InputError naming `source` for a stack of fewer than 6 frames, no bead, or a box that does not fit.
SplineCalibrationResult calibrate_spline(const std::vector<float>& stack, std::int64_t width, std::int64_t height,
                                         std::int64_t frames, const SplineCalibrationSettings& settings,
                                         const std::string& source);

// The discrete smoothing spline along one axis of `data` (lines of `n` samples, `stride` apart, starting at
// each of `starts`): solves (I + λDᵀD) f = y, λ = (period/(2π))⁴ with the period in samples. Finite output
// for finite input. Exposed for tests.
void smooth_lines(std::vector<float>& data, std::int64_t n, std::int64_t stride,
                  const std::vector<std::int64_t>& starts, double period_samples);

// The calibration's PNG: xz and yz sections of the PSF through its centre (square-root scale), then for each
// used bead its xz section of (bead − average) (gray 0.5 = 0, ±10 % of the PSF's peak at black/white).
void write_spline_calibration_png(const std::string& path, const SplineCalibrationResult& result);

}  // namespace nanoscopy
