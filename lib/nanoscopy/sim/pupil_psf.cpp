#include "nanoscopy/sim/pupil_psf.hpp"
#include "nanoscopy/core/keys_cubic.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <mutex>
#include <numbers>
#include <string>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {
namespace {

constexpr double kPi = std::numbers::pi;

// FFTW's planner is not thread-safe: one lock for every plan made here.
std::mutex& fftw_plan_mutex() {
  static std::mutex m;
  return m;
}

// The smallest n ≥ `at_least` whose prime factors are 2, 3 and 5 (FFTW is fast there).
std::int64_t smooth_size(std::int64_t at_least) {
  for (std::int64_t n = std::max<std::int64_t>(at_least, 8);; ++n) {
    std::int64_t m = n;
    for (const int p : {2, 3, 5})
      while (m % p == 0) m /= p;
    if (m == 1) return n;
  }
}

double factorial(int n) {
  double f = 1;
  for (int i = 2; i <= n; ++i) f *= i;
  return f;
}

void noll_to_nm(int j, int& n, int& m) {
  n = 0;
  int j1 = j - 1;
  while (j1 > n) {
    ++n;
    j1 -= n;
  }
  m = (n % 2) + 2 * ((j1 + ((n + 1) % 2)) / 2);
  if (j % 2) m = -m;
}

double sinc(double u) { return u == 0 ? 1.0 : std::sin(kPi * u) / (kPi * u); }

struct FftwFree {
  void operator()(void* p) const { fftw_free(p); }
};
using ComplexBuffer = std::unique_ptr<fftw_complex[], FftwFree>;
ComplexBuffer complex_buffer(std::int64_t n) {
  return ComplexBuffer(static_cast<fftw_complex*>(fftw_malloc(sizeof(fftw_complex) * static_cast<std::size_t>(n))));
}

}  // namespace

double zernike_noll(int j, double rho, double theta) {
  int n = 0, m = 0;
  noll_to_nm(j, n, m);
  const int am = std::abs(m);
  double r = 0;
  for (int s = 0; s <= (n - am) / 2; ++s)
    r += (s % 2 ? -1.0 : 1.0) * factorial(n - s) /
         (factorial(s) * factorial((n + am) / 2 - s) * factorial((n - am) / 2 - s)) * std::pow(rho, n - 2 * s);
  if (m == 0) return std::sqrt(n + 1.0) * r;
  return std::sqrt(2.0 * (n + 1)) * r * (m > 0 ? std::cos(am * theta) : std::sin(am * theta));
}

PupilPsfSettings astigmatic_pupil_settings(double pixel_size_nm) {
  PupilPsfSettings s;
  s.pixel_size_nm = pixel_size_nm;
  s.zernike = {{6, 0.12}, {8, 0.03}, {11, 0.04}};
  return s;
}

PupilPsf::PupilPsf(const PupilPsfSettings& settings, double z_min_nm, double z_max_nm) : settings_(settings) {
  const auto& s = settings_;
  if (!(s.na > 0) || !std::isfinite(s.na)) throw UsageError("--na", "the numerical aperture must be positive");
  if (!(s.wavelength_nm > 0) || !std::isfinite(s.wavelength_nm))
    throw UsageError("--wavelength", "must be a positive number of nm");
  if (!(s.n_immersion > 0) || !(s.n_sample > 0) || !std::isfinite(s.n_immersion) || !std::isfinite(s.n_sample))
    throw UsageError("--n-sample", "refractive indices must be positive");
  if (!(s.pixel_size_nm > 0) || !std::isfinite(s.pixel_size_nm))
    throw UsageError("--pixel-size", "must be a positive number of nm");
  if (s.half_width_px < 2 || s.half_width_px > 256) throw UsageError("--psf-half-width", "must be 2 to 256 px");
  if (!(s.table_step_nm > 0)) throw UsageError("--psf-table-step", "must be a positive number of nm");
  if (!(z_min_nm <= z_max_nm) || !std::isfinite(z_min_nm) || !std::isfinite(z_max_nm))
    throw UsageError("--z-min", "the z range is empty or not finite");
  for (const auto& t : s.zernike) {
    if (t.noll < 1) throw UsageError("--zernike", "Noll indices start at 1 (got " + std::to_string(t.noll) + ")");
    if (!std::isfinite(t.waves_rms)) throw UsageError("--zernike", "amplitudes must be finite (wavelengths RMS)");
  }
  na_eff_ = std::min({s.na, s.n_sample, s.n_immersion});
  // The grid: spacing Δ = pixel/os with Δ ≤ λ/(16 NA) (the intensity's band limit 2NA/λ sampled 4× faster
  // than Nyquist), and at least 32 samples across the pupil's radius NA/λ (the defocus phase is smooth there).
  const double a = s.pixel_size_nm;
  const int os = std::max({s.oversampling, 1, static_cast<int>(std::ceil(a * 16 * na_eff_ / s.wavelength_nm))});
  settings_.oversampling = os;
  const double delta = a / os;
  const std::int64_t window_samples = (2 * s.half_width_px + 6) * os;
  const std::int64_t n = smooth_size(std::max<std::int64_t>(
      2 * window_samples, static_cast<std::int64_t>(std::ceil(32 * s.wavelength_nm / (na_eff_ * delta)))));
  const double dk = 1.0 / (static_cast<double>(n) * delta);  // 1/nm
  const double k_max = na_eff_ / s.wavelength_nm;
  const double ks = s.n_sample / s.wavelength_nm, ki = s.n_immersion / s.wavelength_nm;

  step_ = s.table_step_nm;
  z0_ = std::floor(z_min_nm / step_) * step_;
  slices_ = static_cast<std::int64_t>(std::ceil((z_max_nm - z0_) / step_ - 1e-9)) + 1;
  slices_ = std::max<std::int64_t>(slices_, 1);
  constexpr int pad = 3;  // beyond ±half_width, for the cubic interpolation's taps
  centre_ = s.half_width_px * os + pad;
  grid_ = 2 * centre_ + 1;
  table_.assign(static_cast<std::size_t>(slices_ * grid_ * grid_), 0.0f);
  window_sum_.assign(static_cast<std::size_t>(slices_), 0.0);

  // The pupil's samples (inside |k| ≤ NA_eff/λ): index, the aberration phase and the defocus rate kz.
  struct PupilSample {
    std::int64_t index;
    double base_phase;  // Zernike + index-mismatch phase, rad
    double kz;          // 2π·sqrt((n_s/λ)² − k²): the phase per nm of z
    double amplitude;
  };
  std::vector<PupilSample> pupil;
  const auto freq = [&](std::int64_t i) { return static_cast<double>(i < n / 2 ? i : i - n) * dk; };
  for (std::int64_t iy = 0; iy < n; ++iy)
    for (std::int64_t ix = 0; ix < n; ++ix) {
      const double fx = freq(ix), fy = freq(iy), k2 = fx * fx + fy * fy, kr = std::sqrt(k2);
      if (kr > k_max) continue;
      const double amplitude = 1;  // a hard edge: cells weighted by their area inside shift the rings more
      const double rho = std::min(1.0, kr / k_max), theta = std::atan2(fy, fx);
      double phase = 0;
      for (const auto& t : s.zernike) phase += 2 * kPi * t.waves_rms * zernike_noll(t.noll, rho, theta);
      const double kzs = std::sqrt(std::max(0.0, ks * ks - k2)), kzi = std::sqrt(std::max(0.0, ki * ki - k2));
      phase += 2 * kPi * s.focus_depth_nm * (kzs - kzi);
      pupil.push_back({iy * n + ix, phase, 2 * kPi * kzs, amplitude});
    }
  // The pixel's transfer function with the FFT round trip's 1/n² and the samples per pixel (a/Δ)².
  std::vector<double> transfer(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    transfer[static_cast<std::size_t>(i)] = sinc(static_cast<double>(os) * static_cast<double>(i < n / 2 ? i : i - n) /
                                                 static_cast<double>(n));
  const double scale = static_cast<double>(os) * os / (static_cast<double>(n) * static_cast<double>(n));

  // The field: a complex 2D FFT of the pupil; the pixel integration: the intensity's real-to-complex FFT,
  // times the pixel's transfer function, and back (complex-to-real).
  const std::int64_t nh = n / 2 + 1;
  fftw_plan field_plan{}, forward{}, backward{};
  {
    auto a_buf = complex_buffer(n * n), b_buf = complex_buffer(n * n), spec = complex_buffer(n * nh);
    std::unique_ptr<double[], FftwFree> real(static_cast<double*>(fftw_malloc(sizeof(double) * static_cast<std::size_t>(n * n))));
    std::lock_guard lock(fftw_plan_mutex());
    const int ni = static_cast<int>(n);
    field_plan = fftw_plan_dft_2d(ni, ni, a_buf.get(), b_buf.get(), FFTW_BACKWARD, FFTW_ESTIMATE);
    forward = fftw_plan_dft_r2c_2d(ni, ni, real.get(), spec.get(), FFTW_ESTIMATE);
    backward = fftw_plan_dft_c2r_2d(ni, ni, spec.get(), real.get(), FFTW_ESTIMATE);
  }
  if (!field_plan || !forward || !backward)
    throw InputError("pupil PSF", "FFTW could not plan a " + std::to_string(n) + "² FFT");

#pragma omp parallel
  {
    auto a_buf = complex_buffer(n * n), b_buf = complex_buffer(n * n), spec = complex_buffer(n * nh);
    std::unique_ptr<double[], FftwFree> real(static_cast<double*>(fftw_malloc(sizeof(double) * static_cast<std::size_t>(n * n))));
#pragma omp for schedule(dynamic)
    for (std::int64_t sl = 0; sl < slices_; ++sl) {
      const double z = z0_ + step_ * static_cast<double>(sl);
      std::fill_n(&a_buf[0][0], 2 * n * n, 0.0);
      for (const auto& p : pupil) {
        const double phi = p.base_phase + p.kz * z;
        a_buf[p.index][0] = p.amplitude * std::cos(phi);
        a_buf[p.index][1] = p.amplitude * std::sin(phi);
      }
      fftw_execute_dft(field_plan, a_buf.get(), b_buf.get());  // the field at the samples
      double total = 0;
      for (std::int64_t k = 0; k < n * n; ++k) {
        const double v = b_buf[k][0] * b_buf[k][0] + b_buf[k][1] * b_buf[k][1];
        real[k] = v;
        total += v;
      }
      fftw_execute_dft_r2c(forward, real.get(), spec.get());  // the intensity's spectrum
      const double norm = scale / total;                       // photons per sample cell sum to 1
      for (std::int64_t iy = 0; iy < n; ++iy)
        for (std::int64_t ix = 0; ix < nh; ++ix) {
          const double h = norm * transfer[static_cast<std::size_t>(ix)] * transfer[static_cast<std::size_t>(iy)];
          spec[iy * nh + ix][0] *= h;
          spec[iy * nh + ix][1] *= h;
        }
      fftw_execute_dft_c2r(backward, spec.get(), real.get());  // J: photons in a pixel centred at the sample
      float* out = table_.data() + sl * grid_ * grid_;
      for (std::int64_t gy = 0; gy < grid_; ++gy)
        for (std::int64_t gx = 0; gx < grid_; ++gx) {
          const std::int64_t sy = ((gy - centre_) % n + n) % n, sx = ((gx - centre_) % n + n) % n;
          out[gy * grid_ + gx] = static_cast<float>(real[sy * n + sx]);
        }
      double sum = 0;
      for (int v = -s.half_width_px; v <= s.half_width_px; ++v)
        for (int u = -s.half_width_px; u <= s.half_width_px; ++u)
          sum += out[(centre_ + v * os) * grid_ + centre_ + u * os];
      window_sum_[static_cast<std::size_t>(sl)] = sum;
    }
  }
  {
    std::lock_guard lock(fftw_plan_mutex());
    fftw_destroy_plan(field_plan);
    fftw_destroy_plan(forward);
    fftw_destroy_plan(backward);
  }
}

double PupilPsf::slice_value(std::int64_t slice, double gx, double gy) const {
  const double fx = std::floor(gx), fy = std::floor(gy);
  const auto ix = static_cast<std::int64_t>(fx), iy = static_cast<std::int64_t>(fy);
  if (ix < 1 || iy < 1 || ix + 2 >= grid_ || iy + 2 >= grid_) return 0;
  double wx[4], wy[4];
  keys_cubic_weights(gx - fx, wx);
  keys_cubic_weights(gy - fy, wy);
  const float* t = table_.data() + slice * grid_ * grid_;
  double v = 0;
  for (int j = 0; j < 4; ++j) {
    const float* row = t + (iy - 1 + j) * grid_ + ix - 1;
    v += wy[j] * (wx[0] * row[0] + wx[1] * row[1] + wx[2] * row[2] + wx[3] * row[3]);
  }
  return v;
}

double PupilPsf::pixel(double u, double v, double x, double y, double z_nm) const {
  const double os = settings_.oversampling;
  const double hw = settings_.half_width_px;
  if (std::abs(u - x) > hw || std::abs(v - y) > hw) return 0;
  const double s = std::clamp((z_nm - z0_) / step_, 0.0, static_cast<double>(slices_ - 1));
  const auto k = std::min<std::int64_t>(static_cast<std::int64_t>(s), slices_ - 1);
  const double f = s - static_cast<double>(k);
  const double gx = static_cast<double>(centre_) + (u - x) * os, gy = static_cast<double>(centre_) + (v - y) * os;
  double value = (1 - f) * slice_value(k, gx, gy);
  if (f > 0 && k + 1 < slices_) value += f * slice_value(k + 1, gx, gy);
  return value;
}

void PupilPsf::add(double x, double y, double z_nm, double photons, std::int64_t width, std::int64_t height,
                   double* image) const {
  const int hw = settings_.half_width_px;
  const auto cx = static_cast<std::int64_t>(std::llround(x)), cy = static_cast<std::int64_t>(std::llround(y));
  const std::int64_t u0 = std::max<std::int64_t>(0, cx - hw), u1 = std::min<std::int64_t>(width - 1, cx + hw);
  const std::int64_t v0 = std::max<std::int64_t>(0, cy - hw), v1 = std::min<std::int64_t>(height - 1, cy + hw);
  for (std::int64_t v = v0; v <= v1; ++v)
    for (std::int64_t u = u0; u <= u1; ++u)
      image[v * width + u] +=
          photons * std::max(0.0, pixel(static_cast<double>(u), static_cast<double>(v), x, y, z_nm));
}

double PupilPsf::window_fraction(double z_nm) const {
  const double s = std::clamp((z_nm - z0_) / step_, 0.0, static_cast<double>(slices_ - 1));
  const auto k = std::min<std::int64_t>(static_cast<std::int64_t>(s), slices_ - 1);
  const double f = s - static_cast<double>(k);
  double v = (1 - f) * window_sum_[static_cast<std::size_t>(k)];
  if (f > 0 && k + 1 < slices_) v += f * window_sum_[static_cast<std::size_t>(k + 1)];
  return v;
}

}  // namespace nanoscopy
