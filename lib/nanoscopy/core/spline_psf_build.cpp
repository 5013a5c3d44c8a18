// Tricubic coefficients as Lekien & Marsden (Int. J. Numer. Meth. Eng. 63, 455,
// 2005) and SMAP's spline3D: per grid node the value and the derivatives
// f_x, f_y, f_z, f_xy, f_xz, f_yz, f_xyz by central differences (one-sided on
// the grid's faces), and per interval the tricubic polynomial that matches all
// eight of them at its eight corners.
//
// Why this and not a separable interpolating cubic spline (Gpuspline,
// Picasso): the result is C1 (value and first derivatives continuous, which is
// what the fit's gradient needs), it is local — each interval depends only on
// the 4×4×4 samples around it, so a noisy or hot voxel of a bead stack
// disturbs its neighbourhood and never rings across the whole PSF as a global
// spline system can — and it is the construction of SMAP's *_3dcal.mat files,
// so our coefficients and SMAP's agree for the same volume. The smoothing is
// the calibration's job before this step; here the samples are interpolated
// exactly.
//
// The polynomial of an interval is the tensor product of cubic Hermite bases:
// in 1D, with the value v0, v1 and the derivative d0, d1 at t = 0 and 1, the
// power coefficients are M·(v0, d0, v1, d1) with
//   M = [1 0 0 0; 0 1 0 0; −3 −2 3 −1; 2 1 −2 1],
// and in 3D C[a][b][c] = Σ M[a][p]·M[b][q]·M[c][r]·G[p][q][r], where G holds the
// node data D^(p%2, q%2, r%2) f at corner (i + p/2, j + q/2, k + r/2). Applied
// as three passes of M over the 4×4×4 block.
#include "nanoscopy/core/spline_psf_build.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {
namespace {

constexpr double kHermite[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {-3, -2, 3, -1}, {2, 1, -2, 1}};

// The derivative along one axis of a field of n0·n1·n2 values (x fastest), by
// central differences inside and one-sided differences at the two ends.
std::vector<double> differentiate(const std::vector<double>& v, int nx, int ny, int nz, int axis) {
  std::vector<double> d(v.size());
  const std::ptrdiff_t stride = axis == 0 ? 1 : (axis == 1 ? nx : static_cast<std::ptrdiff_t>(nx) * ny);
  const int n = axis == 0 ? nx : (axis == 1 ? ny : nz);
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        const std::ptrdiff_t at = (static_cast<std::ptrdiff_t>(z) * ny + y) * nx + x;
        const int u = axis == 0 ? x : (axis == 1 ? y : z);
        if (u == 0)
          d[at] = v[at + stride] - v[at];
        else if (u == n - 1)
          d[at] = v[at] - v[at - stride];
        else
          d[at] = 0.5 * (v[at + stride] - v[at - stride]);
      }
  return d;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw InputError("spline volume", what);
}

}  // namespace

SplinePsf spline_from_volume(const std::vector<float>& volume, int nx, int ny, int nz, double voxel_xy_px,
                             double z_step_nm, double centre_x, double centre_y, double focus_index,
                             double pixel_size_nm) {
  require(nx >= 4 && ny >= 4 && nz >= 4, "a spline needs at least 4 samples on every axis, got " +
                                             std::to_string(nx) + "×" + std::to_string(ny) + "×" + std::to_string(nz));
  const std::size_t n = static_cast<std::size_t>(nx) * ny * nz;
  require(volume.size() == n, "holds " + std::to_string(volume.size()) + " samples, " + std::to_string(nx) + "×" +
                                  std::to_string(ny) + "×" + std::to_string(nz) + " = " + std::to_string(n) +
                                  " expected");
  require(std::isfinite(voxel_xy_px) && voxel_xy_px > 0, "the voxel size in x, y must be a positive number of pixels");
  require(std::isfinite(z_step_nm) && z_step_nm > 0, "the z step must be a positive number of nm");
  require(std::isfinite(centre_x) && std::isfinite(centre_y) && std::isfinite(focus_index) &&
              std::isfinite(pixel_size_nm),
          "the centre, focus index and pixel size must be finite");
  double peak = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(volume[i]))
      throw InputError("spline volume", "sample " + std::to_string(i) + " is not a finite number");
    peak = std::max(peak, std::fabs(static_cast<double>(volume[i])));
  }
  // The focal plane's sum, linear between the two nearest slices (clamped to the stack).
  const auto slice_sum = [&](int z) {
    double s = 0;
    for (std::size_t i = static_cast<std::size_t>(z) * nx * ny; i < static_cast<std::size_t>(z + 1) * nx * ny; ++i)
      s += volume[i];
    return s;
  };
  const double fz = std::clamp(focus_index, 0.0, static_cast<double>(nz - 1));
  const int z0 = std::min(static_cast<int>(std::floor(fz)), nz - 2);
  const double t = fz - z0;
  const double focus_sum = ((1 - t) * slice_sum(z0) + t * slice_sum(z0 + 1)) * voxel_xy_px * voxel_xy_px;
  // Normalised values stay far inside float: the sum must not be a vanishing fraction of the peak.
  double scale = 1.0;
  if (focus_sum > 1e-6 * peak && std::isfinite(focus_sum))
    scale = 1.0 / focus_sum;
  else if (peak > 0)
    scale = 1.0 / peak;

  std::vector<double> f(n);
  for (std::size_t i = 0; i < n; ++i) f[i] = static_cast<double>(volume[i]) * scale;
  // Node data in the order of the derivative orders (ox, oy, oz) as o = ox + 2·oy + 4·oz.
  std::vector<double> node[8];
  node[0] = f;
  node[1] = differentiate(f, nx, ny, nz, 0);        // x
  node[2] = differentiate(f, nx, ny, nz, 1);        // y
  node[3] = differentiate(node[1], nx, ny, nz, 1);  // xy
  node[4] = differentiate(f, nx, ny, nz, 2);        // z
  node[5] = differentiate(node[1], nx, ny, nz, 2);  // xz
  node[6] = differentiate(node[2], nx, ny, nz, 2);  // yz
  node[7] = differentiate(node[3], nx, ny, nz, 2);  // xyz

  SplinePsf psf;
  psf.size_x = nx - 1;
  psf.size_y = ny - 1;
  psf.size_z = nz - 1;
  psf.voxel_xy_px = voxel_xy_px;
  psf.z_step_nm = z_step_nm;
  psf.centre_x = centre_x;
  psf.centre_y = centre_y;
  psf.focus_index = focus_index;
  psf.pixel_size_nm = pixel_size_nm;
  psf.coefficients.assign(static_cast<std::size_t>(psf.size_x) * psf.size_y * psf.size_z * 64, 0.0f);
  constexpr double float_max = 3.4e38;
  for (int i = 0; i < psf.size_x; ++i)
    for (int j = 0; j < psf.size_y; ++j)
      for (int k = 0; k < psf.size_z; ++k) {
        // G[p][q][r]: p = 2·(corner in x) + (derivative order in x), likewise q (y), r (z).
        double g[4][4][4], h[4][4][4];
        for (int p = 0; p < 4; ++p)
          for (int q = 0; q < 4; ++q)
            for (int r = 0; r < 4; ++r) {
              const int order = (p & 1) + 2 * (q & 1) + 4 * (r & 1);
              const std::size_t at = (static_cast<std::size_t>(k + r / 2) * ny + (j + q / 2)) * nx + (i + p / 2);
              g[p][q][r] = node[order][at];
            }
        // Three passes of M: over r (z), then q (y), then p (x).
        for (int p = 0; p < 4; ++p)
          for (int q = 0; q < 4; ++q)
            for (int c = 0; c < 4; ++c) {
              double s = 0;
              for (int r = 0; r < 4; ++r) s += kHermite[c][r] * g[p][q][r];
              h[p][q][c] = s;
            }
        for (int p = 0; p < 4; ++p)
          for (int b = 0; b < 4; ++b)
            for (int c = 0; c < 4; ++c) {
              double s = 0;
              for (int q = 0; q < 4; ++q) s += kHermite[b][q] * h[p][q][c];
              g[p][b][c] = s;
            }
        float* out = psf.coefficients.data() + psf.interval_offset(i, j, k);
        for (int a = 0; a < 4; ++a)
          for (int b = 0; b < 4; ++b)
            for (int c = 0; c < 4; ++c) {
              double s = 0;
              for (int p = 0; p < 4; ++p) s += kHermite[a][p] * g[p][b][c];
              out[a * 16 + b * 4 + c] = static_cast<float>(std::clamp(s, -float_max, float_max));
            }
      }
  return psf;
}

}  // namespace nanoscopy
