// A PSF that is not a Gaussian, for tests and bench (issue 27): the scalar
// pupil-function model. An emitter at lateral position r0 and axial position z
// (nm, from the focal plane, measured in the sample) gives the field
//
//   E(r) = Σ_k P(k) · exp(i φ(k)) · exp(2πi k·(r − r0)),   |k| ≤ NA_eff/λ,
//   φ(k) = 2π z · sqrt((n_s/λ)² − |k|²)                                 (defocus in the sample)
//        + 2π D · (sqrt((n_s/λ)² − |k|²) − sqrt((n_i/λ)² − |k|²))      (index mismatch at depth D)
//        + 2π Σ_j a_j Z_j(ρ, θ)                                         (Zernike aberrations)
//
// with NA_eff = min(NA, n_s) (light beyond the sample's critical angle is
// evanescent: it does not reach an emitter away from the coverslip), a uniform
// pupil amplitude P (the paraxial Airy disc in focus), ρ = |k|·λ/NA_eff ∈ [0, 1]
// and θ the pupil angle from +x towards +y. The intensity |E|² is what the
// camera sees.
//
// Zernike polynomials: NOLL indexing (j = 1 piston, 2 tilt x, 3 tilt y, 4 defocus, 5 oblique
// astigmatism √6 ρ² sin 2θ, 6 vertical astigmatism √6 ρ² cos 2θ, 7 coma y √8 (3ρ³ − 2ρ) sin θ,
// 8 coma x √8 (3ρ³ − 2ρ) cos θ, 11 primary spherical √5 (6ρ⁴ − 6ρ² + 1), …), each with RMS 1
// over the unit disc; amplitudes a_j in WAVELENGTHS RMS (0.1 = λ/10 RMS, a phase of 2π·0.1 rad RMS).
//
// Computed with FFTW: the pupil on a k-grid (at least 32 samples across its
// radius: the field it gives is the true one plus its copies 32 λ/NA away, ≈ 0.3 % of the
// peak in focus), one 2D FFT per z to the field on a grid of pixel/oversampling, the
// intensity's Fourier transform times the pixel's transfer function
// sinc(a·fx)·sinc(a·fy) (exact pixel integration of the band-limited
// intensity), and the inverse FFT: J_z(x, y), the fraction of the photons that
// falls in a camera pixel centred at (x, y) from the emitter. Normalised so that
// J summed over the pixels of the whole (periodic) plane is 1 in focus (and at
// every z: the defocus and aberrations are pure phases). A window of
// ±half_width_px around the emitter is kept: beyond it, the PSF counts as 0
// (an in-focus Airy disc leaves ≈ 2λ/(π² NA r) of its photons beyond radius r).
//
// Rendering an emitter at any (x, y, z): J_z is tabulated on a z grid
// (`table_step_nm`, z between the table's slices linear) and interpolated at the
// pixel centres with Keys' cubic convolution on the grid of pixel/oversampling
// (the intensity is band-limited to 2NA/λ and that grid samples it at least 4×
// faster than Nyquist).
#pragma once

#include <cstdint>
#include <vector>

namespace nanoscopy {

struct ZernikeTerm {
  int noll = 0;           // Noll index j ≥ 1
  double waves_rms = 0;   // amplitude, wavelengths RMS
};

struct PupilPsfSettings {
  double na = 1.4;                 // numerical aperture of the objective
  double wavelength_nm = 660;      // emission wavelength (vacuum)
  double n_immersion = 1.518;      // immersion medium (oil)
  double n_sample = 1.33;          // sample medium (water)
  double focus_depth_nm = 0;       // depth D of the focal plane into the sample (index-mismatch aberration); 0: none
  double pixel_size_nm = 100;      // camera pixel, in the sample
  std::vector<ZernikeTerm> zernike;
  int oversampling = 4;            // grid samples per camera pixel (≥ 4 × Nyquist enforced)
  int half_width_px = 16;          // window of the PSF kept around the emitter, px
  double table_step_nm = 5;        // z grid of the tabulated PSF
};

// The pupil with astigmatism, coma and spherical aberration that bench and the tests use for 3D
// (+z and −z differ): Noll 6 astigmatism 0.12 λ, 8 coma 0.03 λ, 11 spherical 0.04 λ RMS, NA 1.4 oil
// objective into water, 660 nm, 100 nm pixels.
PupilPsfSettings astigmatic_pupil_settings(double pixel_size_nm = 100);

// The value of Zernike polynomial j (Noll) at ρ ∈ [0, 1], θ (rad); RMS 1 over the unit disc.
double zernike_noll(int j, double rho, double theta);

class PupilPsf {
 public:
  // Tabulates J_z for z in [z_min_nm, z_max_nm] (widened to whole table steps). UsageError for
  // settings that are not physical (NA ≤ 0, a wavelength or pixel ≤ 0, an index ≤ 0, Noll < 1).
  PupilPsf(const PupilPsfSettings& settings, double z_min_nm, double z_max_nm);

  const PupilPsfSettings& settings() const { return settings_; }
  double z_min_nm() const { return z0_; }
  double z_max_nm() const { return z0_ + step_ * static_cast<double>(slices_ - 1); }
  double na_effective() const { return na_eff_; }

  // Adds `photons` × J at every pixel of the width × height image `image` (row-major, pixel (u, v)
  // at index v·width + u, its centre at (u, v)) within ±half_width_px of an emitter at (x, y) px and
  // z nm (clamped to the table's range). Thread-safe (const).
  void add(double x, double y, double z_nm, double photons, std::int64_t width, std::int64_t height,
           double* image) const;

  // J at one pixel centre (u, v) for an emitter at (x, y, z): the fraction of its photons there.
  double pixel(double u, double v, double x, double y, double z_nm) const;

  // The fraction of the photons of an emitter at z inside the kept window (1 − what is cut off).
  double window_fraction(double z_nm) const;

 private:
  double slice_value(std::int64_t slice, double sx, double sy) const;  // grid coordinates from the centre
  PupilPsfSettings settings_;
  double na_eff_ = 0;
  double z0_ = 0, step_ = 5;
  std::int64_t slices_ = 0;
  std::int64_t grid_ = 0;        // samples per side of a stored window
  std::int64_t centre_ = 0;      // grid index of the emitter's position
  std::vector<float> table_;     // slices × grid × grid, J at grid points (spacing pixel/oversampling)
  std::vector<double> window_sum_;  // per slice: Σ J over the window's pixels (for window_fraction)
};

}  // namespace nanoscopy
