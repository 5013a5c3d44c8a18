// The microscope's own 3D PSF as a tricubic spline (Li et al., Nat. Methods 15:367,
// 2018; SMAP's fit3Dcspline; Gpufit's SPLINE_3D), the shared data of issue 27:
// calibration (fit2d calibrate --model spline) makes one, the spline fits use it, and
// the file formats (our HDF5, SMAP's *_3dcal.mat, Picasso's spline calibration) carry it.
//
// The grid: `size_x` × `size_y` × `size_z` intervals (voxels). Interval (i, j, k) spans
// x ∈ [i, i+1), y ∈ [j, j+1), z ∈ [k, k+1) in voxel units; within it the PSF is
//
//   f(i + dx, j + dy, k + dz) = Σ_{a,b,c=0..3} C[i,j,k][a·16 + b·4 + c] · dx^a · dy^b · dz^c
//
// with dx, dy, dz ∈ [0, 1) — Gpufit's SPLINE_3D convention, in its memory order:
// interval (i, j, k) starts at coefficient (i·size_y·size_z + j·size_z + k)·64, i.e. x the
// slowest index and z the fastest, and within an interval the x power is the slowest.
// One voxel in x and y is `voxel_xy_px` camera pixels (1: the spline is sampled at the
// camera's pixels; SMAP and Picasso use 1), one in z is `z_step_nm`.
//
// The PSF's centre: voxel coordinate (centre_x, centre_y) in x, y (the bead's centre after
// alignment, normally (size_x/2, size_y/2)), and z = focus_index is the focal plane (z = 0
// nm). So an emitter at (x0, y0) px, z0 nm gives at pixel (u, v) the value
//   f(centre_x + (u − x0)/voxel_xy_px, centre_y + (v − y0)/voxel_xy_px, focus_index + z0/z_step_nm).
// The values are normalised so that the in-focus slice sums to 1 over the grid (photons
// then mean total photons of an in-focus emitter), as SMAP does.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace nanoscopy {

// The version of this layout (the "version" attribute of our HDF5 calibration).
inline constexpr int kSplinePsfVersion = 1;

struct SplinePsf {
  int size_x = 0, size_y = 0, size_z = 0;  // intervals along x, y, z
  std::vector<float> coefficients;         // 64 · size_x · size_y · size_z, order above
  double voxel_xy_px = 1.0;                // camera pixels per voxel in x and y
  double z_step_nm = 10.0;                 // nm per voxel in z
  double centre_x = 0, centre_y = 0;       // the PSF's centre in voxel coordinates
  double focus_index = 0;                  // z voxel coordinate of the focal plane (z = 0 nm)
  double pixel_size_nm = 100;              // the camera pixel of the bead stack it was made from
  std::string source;                      // the file it was read from (for messages); empty if made here

  std::size_t interval_offset(int i, int j, int k) const {
    return (static_cast<std::size_t>(i) * size_y * size_z + static_cast<std::size_t>(j) * size_z + k) * 64;
  }
  double z_min_nm() const { return -focus_index * z_step_nm; }
  double z_max_nm() const { return (size_z - focus_index) * z_step_nm; }
};

}  // namespace nanoscopy
