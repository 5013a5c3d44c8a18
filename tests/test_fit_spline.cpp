// The spline 3D fit (fit/models/spline3d.hpp) on the CPU reference: the
// model's derivatives against finite differences, the coarse z search picking
// the right side of focus for an astigmatic PSF (+z vs −z), and the MLE on
// Poisson spots simulated from the spline itself (2,000 photons, 20 background
// photons per pixel, 13×13): x, y, z without bias and with an RMS within 10 %
// of the CRB, the reported CRLB agreeing with the CRB at the truth; z_factor;
// lsq and wlsq converge too; float agrees with double.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <memory>
#include <vector>

#include "nanoscopy/bench/spline_spots.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/fit/engine.hpp"
#include "nanoscopy/fit/models/spline3d.hpp"

using namespace nanoscopy;
using namespace nanoscopy::fit_detail;

namespace {

// A smaller calibration than the realistic 27×27×121 keeps the test fast: 21×21 px, ±600 nm at 20 nm.
const std::shared_ptr<const SplinePsf>& psf() {
  static const auto p = std::make_shared<const SplinePsf>(astigmatic_spline_psf(21, 61, 20.0, 100.0));
  return p;
}

FitSettings spline_settings(Estimator e = Estimator::mle) {
  FitSettings s;
  s.model = ShapeModel::spline;
  s.estimator = e;
  s.spline = psf();
  return s;
}

struct Stats {
  double bias = 0, rms = 0;
  int n = 0;
};

}  // namespace

TEST_CASE("spline model: derivatives of f against finite differences") {
  const Spline3d m = make_spline_model(*psf(), 1.0, psf()->coefficients.data());
  const double h = 1e-6;
  // Depths inside z intervals: across a face the float-rounded coefficients of the two intervals differ by ~1e-10,
  // which a 1e-3 nm central difference would magnify (the C1 continuity itself is test_spline_psf's).
  for (double z : {-415.0, -130.0, 7.0, 77.0, 350.0}) {
    const double p[3] = {6.3, 5.8, z};
    for (int c : {3, 6, 9})
      for (int r : {2, 6, 10}) {
        double f, df[3];
        m.pixel<double>(p, c, r, f, df);
        const double nx = (m.value<double>(p[0] + h, p[1], z, c, r) - m.value<double>(p[0] - h, p[1], z, c, r)) / (2 * h);
        const double ny = (m.value<double>(p[0], p[1] + h, z, c, r) - m.value<double>(p[0], p[1] - h, z, c, r)) / (2 * h);
        const double nz = (m.value<double>(p[0], p[1], z + 1e-3, c, r) - m.value<double>(p[0], p[1], z - 1e-3, c, r)) / 2e-3;
        CHECK(df[0] == doctest::Approx(nx).epsilon(1e-5).scale(1e-3));
        CHECK(df[1] == doctest::Approx(ny).epsilon(1e-5).scale(1e-3));
        CHECK(df[2] == doctest::Approx(nz).epsilon(1e-4).scale(1e-5));
      }
  }
}

TEST_CASE("spline fit: the coarse z search picks the right side of focus (+z vs −z)") {
  FitSettings s = spline_settings();
  s.max_iterations = 0;  // the start itself
  auto engine = make_cpu_fit_engine(s, 2);
  for (double z : {-450.0, -250.0, 250.0, 450.0}) {
    const SplineSpots spots = simulate_spline_spots(*psf(), 13, 13, 200, 2000, 20, z, z, 11);
    std::vector<FitResult> out(spots.count);
    engine->fit(spots.batch(PixelType::f32), out);
    int right_side = 0;
    std::vector<double> error;
    for (const auto& r : out) {
      right_side += (r.z > 0) == (z > 0) ? 1 : 0;
      error.push_back(std::fabs(r.z - z));
    }
    std::sort(error.begin(), error.end());
    MESSAGE("z " << z << " nm: start on the right side " << right_side << "/200, median start error "
                 << error[100] << " nm, worst " << error.back() << " nm");
    CHECK(right_side == 200);
    CHECK(error[100] < 80);       // the candidates are 75 nm apart
    CHECK(error.back() < 300);    // far from focus the 7×7 window sees less of the PSF; LM takes it from there
  }
}

TEST_CASE("spline MLE: unbiased x, y, z with an RMS within 10 % of the CRB (2000 photons, bg 20, 13×13)") {
  auto engine = make_cpu_fit_engine(spline_settings(), 2);
  for (double z : {-300.0, 0.0, 300.0}) {
    const SplineSpots spots = simulate_spline_spots(*psf(), 13, 13, 800, 2000, 20, z, z, 5 + static_cast<int>(z));
    std::vector<FitResult> out(spots.count);
    engine->fit(spots.batch(PixelType::u16), out);
    Stats sx, sy, sz;
    double crlb_z = 0, c2[3] = {0, 0, 0};
    int converged_count = 0;
    for (std::int64_t i = 0; i < spots.count; ++i) {
      const FitResult& r = out[i];
      if (!converged(r.status)) continue;
      ++converged_count;
      const auto& t = spots.truth[i];
      for (auto [s, e] : {std::pair{&sx, r.x - t.x}, std::pair{&sy, r.y - t.y}, std::pair{&sz, r.z - t.z}}) {
        s->bias += e;
        s->rms += e * e;
        ++s->n;
      }
      crlb_z += r.crlb_z;
      // The CRB at each spot's truth: the sampled PSF's information depends on the sub-pixel position.
      const SplineCrb c = spline_crb(*psf(), 13, 13, t);
      c2[0] += c.x * c.x;
      c2[1] += c.y * c.y;
      c2[2] += c.z * c.z;
    }
    CHECK(converged_count >= 0.99 * static_cast<double>(spots.count));
    const SplineCrb crb{std::sqrt(c2[0] / converged_count), std::sqrt(c2[1] / converged_count),
                        std::sqrt(c2[2] / converged_count), 0, 0};
    const double crbs[3] = {crb.x, crb.y, crb.z};
    Stats* stats[3] = {&sx, &sy, &sz};
    for (int k = 0; k < 3; ++k) {
      Stats& s = *stats[k];
      s.bias /= s.n;
      s.rms = std::sqrt(s.rms / s.n);
      MESSAGE("z " << z << " nm, " << std::string(1, "xyz"[k]) << ": bias " << s.bias << ", RMS " << s.rms << ", CRB " << crbs[k]
                   << " (RMS/CRB " << s.rms / crbs[k] << ")");
      CHECK(std::fabs(s.bias) < 3.5 * s.rms / std::sqrt(s.n));
      CHECK(s.rms < 1.10 * crbs[k]);
      CHECK(s.rms > 0.88 * crbs[k]);  // below the bound only by chance: 800 spots give ±2.5 % (1 sd)
    }
    // The reported CRLB (at the estimate) matches the CRB at the truth.
    CHECK(crlb_z / converged_count == doctest::Approx(crb.z).epsilon(0.05));
    // Photons: the in-focus normalisation makes α the photon count.
    double photons = 0;
    for (const auto& r : out) photons += converged(r.status) ? r.amplitude : 0;
    CHECK(photons / converged_count == doctest::Approx(2000).epsilon(0.02));
  }
}

TEST_CASE("spline fit: z_factor scales z and its CRLB; lsq and wlsq fit; float agrees with double") {
  const SplineSpots spots = simulate_spline_spots(*psf(), 11, 11, 100, 2000, 20, -350, 350, 9);
  FitSettings s = spline_settings();
  std::vector<FitResult> a(spots.count), b(spots.count), f32(spots.count);
  make_cpu_fit_engine(s, 1)->fit(spots.batch(PixelType::f32), a);
  s.z_factor = 0.79;
  make_cpu_fit_engine(s, 1)->fit(spots.batch(PixelType::f32), b);
  for (std::int64_t i = 0; i < spots.count; ++i) {
    CHECK(b[i].z == doctest::Approx(0.79 * a[i].z).epsilon(1e-5).scale(1e-3));
    CHECK(b[i].crlb_z == doctest::Approx(0.79 * a[i].crlb_z).epsilon(1e-5));
    CHECK(b[i].x == a[i].x);
    CHECK(std::isfinite(a[i].sigma));
    CHECK(a[i].sigma > 0.5);
  }
  s.z_factor = 1;
  s.precision = FitPrecision::fp32;
  make_cpu_fit_engine(s, 1)->fit(spots.batch(PixelType::f32), f32);
  int agree = 0;
  for (std::int64_t i = 0; i < spots.count; ++i)
    agree += std::fabs(f32[i].x - a[i].x) < 5e-3 && std::fabs(f32[i].z - a[i].z) < 2.0 ? 1 : 0;
  CHECK(agree >= 98);
  for (Estimator e : {Estimator::lsq, Estimator::wlsq}) {
    std::vector<FitResult> out(spots.count);
    make_cpu_fit_engine(spline_settings(e), 1)->fit(spots.batch(PixelType::f32), out);
    int ok = 0;
    double z_rms = 0;
    for (std::int64_t i = 0; i < spots.count; ++i)
      if (converged(out[i].status)) {
        ++ok;
        z_rms += (out[i].z - spots.truth[i].z) * (out[i].z - spots.truth[i].z);
      }
    CHECK(ok >= 97);
    CHECK(std::sqrt(z_rms / ok) < 40);
    CHECK(std::isfinite(out[0].crlb_z));
  }
  // Without a spline the model is refused.
  FitSettings none;
  none.model = ShapeModel::spline;
  std::vector<FitResult> one(1);
  RoiBatch single = spots.batch(PixelType::f32);
  single.count = 1;
  CHECK_THROWS_AS(make_cpu_fit_engine(none, 1)->fit(single, one), UsageError);
}
