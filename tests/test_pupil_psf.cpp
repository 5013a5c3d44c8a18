// The scalar pupil-function PSF (sim/pupil_psf): in focus without aberrations it is the
// Airy disc (checked against (2 J1(v)/v)² integrated over each pixel, and its best
// Gaussian has σ ≈ 0.21 λ/NA); it is normalised; symmetric without aberrations;
// astigmatism swaps the x/y widths between +z and −z; spherical aberration makes +z
// and −z differ.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/bench/exact_pupil_fit.hpp"
#include "nanoscopy/bench/simulate_cli.hpp"
#include "nanoscopy/sim/pupil_psf.hpp"

using namespace nanoscopy;

namespace {

// Second moments (px²) of J around the emitter at the origin, within ±r px.
void moments(const PupilPsf& psf, double z, int r, double& sxx, double& syy) {
  double s = 0, xx = 0, yy = 0;
  for (int v = -r; v <= r; ++v)
    for (int u = -r; u <= r; ++u) {
      const double j = psf.pixel(u, v, 0, 0, z);
      s += j;
      xx += j * u * u;
      yy += j * v * v;
    }
  sxx = xx / s;
  syy = yy / s;
}

double airy(double r_nm, double na, double lambda) {
  const double v = 2 * std::numbers::pi * na * r_nm / lambda;
  const double i0 = std::numbers::pi * na * na / (lambda * lambda);  // per nm², total power 1
  if (v < 1e-9) return i0;
  const double a = 2 * std::cyl_bessel_j(1.0, v) / v;
  return i0 * a * a;
}

}  // namespace

TEST_CASE("zernike_noll: the Noll ordering and RMS normalisation") {
  // Known polynomials at a point.
  const double rho = 0.7, th = 0.3;
  CHECK(zernike_noll(1, rho, th) == doctest::Approx(1.0));
  CHECK(zernike_noll(4, rho, th) == doctest::Approx(std::sqrt(3.0) * (2 * rho * rho - 1)));
  CHECK(zernike_noll(5, rho, th) == doctest::Approx(std::sqrt(6.0) * rho * rho * std::sin(2 * th)));
  CHECK(zernike_noll(6, rho, th) == doctest::Approx(std::sqrt(6.0) * rho * rho * std::cos(2 * th)));
  CHECK(zernike_noll(7, rho, th) == doctest::Approx(std::sqrt(8.0) * (3 * rho * rho * rho - 2 * rho) * std::sin(th)));
  CHECK(zernike_noll(8, rho, th) == doctest::Approx(std::sqrt(8.0) * (3 * rho * rho * rho - 2 * rho) * std::cos(th)));
  CHECK(zernike_noll(11, rho, th) ==
        doctest::Approx(std::sqrt(5.0) * (6 * std::pow(rho, 4) - 6 * rho * rho + 1)));
  // RMS 1 over the unit disc (midpoint rule in polar coordinates).
  for (const int j : {4, 6, 8, 11, 22}) {
    double s = 0, area = 0;
    for (int i = 0; i < 400; ++i)
      for (int k = 0; k < 400; ++k) {
        const double r = (i + 0.5) / 400, t = 2 * std::numbers::pi * (k + 0.5) / 400;
        s += zernike_noll(j, r, t) * zernike_noll(j, r, t) * r;
        area += r;
      }
    CHECK(s / area == doctest::Approx(1.0).epsilon(1e-3));
  }
}

TEST_CASE("pupil PSF in focus without aberrations: the pixel-integrated Airy disc, σ ≈ 0.21 λ/NA") {
  PupilPsfSettings s;
  s.na = 1.2;
  s.wavelength_nm = 600;
  s.n_immersion = s.n_sample = 1.33;  // water objective: no mismatch
  s.pixel_size_nm = 40;
  s.half_width_px = 24;
  const PupilPsf psf(s, 0, 0);
  CHECK(psf.na_effective() == doctest::Approx(1.2));
  // Against the Airy intensity integrated over each pixel (a 16×16 midpoint rule).
  double peak = 0, worst = 0;
  for (int v = -6; v <= 6; ++v)
    for (int u = -6; u <= 6; ++u) {
      double expect = 0;
      const int q = 16;
      for (int a = 0; a < q; ++a)
        for (int b = 0; b < q; ++b) {
          const double x = (u - 0.5 + (a + 0.5) / q) * s.pixel_size_nm, y = (v - 0.5 + (b + 0.5) / q) * s.pixel_size_nm;
          expect += airy(std::hypot(x, y), s.na, s.wavelength_nm);
        }
      expect *= s.pixel_size_nm * s.pixel_size_nm / (q * q);
      peak = std::max(peak, expect);
      worst = std::max(worst, std::abs(psf.pixel(u, v, 0, 0, 0) - expect));
    }
  INFO("peak " << peak << ", worst difference " << worst);
  CHECK(worst < 4e-3 * peak);  // the pupil disc on a grid of ≥ 32 samples per radius: 0.25 % of the peak
  // The best Gaussian (least squares over ±1.2 λ/NA, amplitude in closed form per σ) of the fine-pixel PSF.
  double best_sigma = 0, best = 1e300;
  for (double sig = 60; sig < 160; sig += 0.25) {
    double gg = 0, gj = 0, jj = 0;
    for (int v = -20; v <= 20; ++v)
      for (int u = -20; u <= 20; ++u) {
        const double r = std::hypot(u, v) * s.pixel_size_nm;
        if (r > 1.2 * s.wavelength_nm / s.na) continue;
        const double g = std::exp(-r * r / (2 * sig * sig)), j = psf.pixel(u, v, 0, 0, 0);
        gg += g * g;
        gj += g * j;
        jj += j * j;
      }
    const double resid = jj - gj * gj / gg;
    if (resid < best) best = resid, best_sigma = sig;
  }
  const double expected = 0.21 * s.wavelength_nm / s.na;  // 105 nm
  INFO("best Gaussian sigma " << best_sigma << " nm, 0.21 lambda/NA = " << expected << " nm");
  // The pixel (40 nm) widens it by a²/12 in quadrature: ≈ 0.6 %.
  CHECK(best_sigma == doctest::Approx(std::sqrt(expected * expected + 40.0 * 40.0 / 12)).epsilon(0.05));
}

TEST_CASE("pupil PSF: normalised to 1 over the plane, shift-invariant sum, symmetric without aberrations") {
  PupilPsfSettings s;  // NA 1.4 oil into water: NA_eff 1.33
  s.half_width_px = 20;
  s.table_step_nm = 50;
  const PupilPsf psf(s, -400, 400);
  CHECK(psf.na_effective() == doctest::Approx(1.33));
  // In focus, the ±20 px window holds all but the Airy tail (≈ λ/(π² NA r) beyond radius r).
  const double tail = s.wavelength_nm / (std::numbers::pi * std::numbers::pi * 1.33 * 20 * s.pixel_size_nm);
  CHECK(psf.window_fraction(0) <= 1.0 + 1e-6);
  CHECK(psf.window_fraction(0) > 1 - tail);
  // Defocus is a phase: the same photons at every z (the window keeps slightly fewer of a wide spot).
  CHECK(psf.window_fraction(400) == doctest::Approx(psf.window_fraction(0)).epsilon(0.02));
  // A sub-pixel shift moves photons between pixels but keeps their sum.
  for (const double z : {0.0, 150.0, -300.0}) {
    double s0 = 0, s1 = 0;
    for (int v = -12; v <= 12; ++v)
      for (int u = -12; u <= 12; ++u) {
        s0 += psf.pixel(u, v, 0, 0, z);
        s1 += psf.pixel(u, v, 0.37, -0.21, z);
      }
    CHECK(s1 == doctest::Approx(s0).epsilon(2e-3));
  }
  // Symmetric: x ↔ −x, y ↔ −y, x ↔ y, and z ↔ −z (no aberration: the intensity is even in z).
  double peak = psf.pixel(0, 0, 0, 0, 0), worst = 0;
  for (int v = -8; v <= 8; ++v)
    for (int u = -8; u <= 8; ++u) {
      const double j = psf.pixel(u, v, 0, 0, 250);
      worst = std::max({worst, std::abs(j - psf.pixel(-u, v, 0, 0, 250)), std::abs(j - psf.pixel(u, -v, 0, 0, 250)),
                        std::abs(j - psf.pixel(v, u, 0, 0, 250)), std::abs(j - psf.pixel(u, v, 0, 0, -250))});
    }
  CHECK(worst < 1e-5 * peak);
  // Defocus widens it.
  double xx0, yy0, xx1, yy1;
  moments(psf, 0, 8, xx0, yy0);
  moments(psf, 400, 8, xx1, yy1);
  CHECK(xx1 > 1.5 * xx0);
}

TEST_CASE("pupil PSF: astigmatism swaps the x and y widths between +z and −z; spherical makes ±z differ") {
  PupilPsfSettings s;
  s.half_width_px = 16;
  s.table_step_nm = 100;
  s.zernike = {{6, 0.12}};
  const PupilPsf astig(s, -400, 400);
  double xp, yp, xm, ym, x0, y0;
  moments(astig, 400, 10, xp, yp);
  moments(astig, -400, 10, xm, ym);
  moments(astig, 0, 10, x0, y0);
  INFO("z=+400: " << std::sqrt(xp) << " x " << std::sqrt(yp) << " px; z=-400: " << std::sqrt(xm) << " x "
                  << std::sqrt(ym) << "; z=0: " << std::sqrt(x0) << " x " << std::sqrt(y0));
  CHECK(std::abs(std::sqrt(xp) / std::sqrt(yp) - 1) > 0.15);
  // Swapped: x at +z is y at −z (pure astigmatism: mirror symmetry in z with x ↔ y).
  CHECK(xp == doctest::Approx(ym).epsilon(0.01));
  CHECK(yp == doctest::Approx(xm).epsilon(0.01));
  CHECK(x0 == doctest::Approx(y0).epsilon(0.01));

  s.zernike = {{11, 0.06}};
  const PupilPsf spherical(s, -400, 400);
  double peak = spherical.pixel(0, 0, 0, 0, 0), worst = 0;
  for (int v = -6; v <= 6; ++v)
    for (int u = -6; u <= 6; ++u)
      worst = std::max(worst, std::abs(spherical.pixel(u, v, 0, 0, 300) - spherical.pixel(u, v, 0, 0, -300)));
  CHECK(worst > 0.05 * peak);
}

TEST_CASE("pupil PSF: settings that are not physical are usage errors") {
  PupilPsfSettings s;
  s.na = 0;
  CHECK_THROWS_AS(PupilPsf(s, 0, 0), UsageError);
  s = PupilPsfSettings{};
  s.zernike = {{0, 0.1}};
  CHECK_THROWS_AS(PupilPsf(s, 0, 0), UsageError);
  s = PupilPsfSettings{};
  CHECK_THROWS_AS(PupilPsf(s, 10, -10), UsageError);
}

TEST_CASE("bench simulate movie --zernike: NOLL:WAVES_RMS lists") {
  const auto t = parse_zernike_list("6:0.12,8:-0.03,11:0.04", "--zernike");
  REQUIRE(t.size() == 3);
  CHECK(t[0].noll == 6);
  CHECK(t[1].waves_rms == doctest::Approx(-0.03));
  CHECK(t[2].noll == 11);
  CHECK(parse_zernike_list("none", "--zernike").empty());
  for (const char* bad : {"6", "6:", "x:0.1", "6:0.1x", "0:0.1", "6:20", "6:0.1,,8:0.1"})
    CHECK_THROWS_AS(parse_zernike_list(bad, "--zernike"), UsageError);
}

TEST_CASE("exact-PSF maximum likelihood (bench spline3d's reference): at the bound near focus, above it far below") {
  const PupilPsfSettings s = astigmatic_pupil_settings(108);
  const PupilPsf psf(s, -1000, 1000);
  const int box = 13;
  // The bound: finite, and z is known worst far from focus (the spot spreads).
  const auto focus = pupil_crb(psf, box, 6, 6, -50, 2000, 20), deep = pupil_crb(psf, box, 6, 6, -550, 2000, 20);
  for (const double v : focus) CHECK(std::isfinite(v));
  CHECK(deep[2] > 4 * focus[2]);
  // The bound scales as 1/photons without background.
  const auto bright = pupil_crb(psf, box, 6, 6, -50, 8000, 0), dim = pupil_crb(psf, box, 6, 6, -50, 2000, 0);
  CHECK(dim[2] / bright[2] == doctest::Approx(4).epsilon(0.01));

  // Near focus the estimate reaches the bound (300 fits: ±4 % on an RMS); its bias is small.
  const ExactFitStats near = exact_pupil_mle(psf, box, -100, 0, 2000, 20, 300, 7);
  double crb_z = 0;
  for (int k = 0; k < 10; ++k) crb_z += pupil_crb(psf, box, 6, 6, -100 + 10 * (k + 0.5), 2000, 20)[2];
  crb_z = std::sqrt(crb_z / 10);
  MESSAGE("exact MLE −100..0 nm: z RMS " << near.rms_z_nm << " nm, CRB " << crb_z << " nm, bias " << near.bias_z_nm);
  CHECK(near.fits == 300);
  CHECK(near.rms_z_nm / crb_z == doctest::Approx(1).epsilon(0.12));
  CHECK(std::abs(near.bias_z_nm) < 2);
  CHECK(near.far == 0);
  // Deterministic for a seed whatever the thread count (the noise is drawn per fit).
  const ExactFitStats again = exact_pupil_mle(psf, box, -100, 0, 2000, 20, 300, 7);
  CHECK(again.rms_z_nm == near.rms_z_nm);
  CHECK(exact_pupil_mle(psf, box, -100, 0, 2000, 20, 0, 7).fits == 0);
}
