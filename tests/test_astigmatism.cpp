// The astigmatic calibration (core/astigmatism): the defocus polynomial and its
// z-derivative, the JSON file (round trip, one-line refusals), the z-range check
// and the least-squares fit of the polynomial to noisy (z, σx, σy) samples.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "nanoscopy/core/astigmatism.hpp"
#include "nanoscopy/core/error.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;

namespace {

AstigmaticCalibration skewed() {
  AstigmaticCalibration c;
  c.x = {125.0, -240.0, 380.0, 0.15, 0.05};
  c.y = {140.0, 270.0, 420.0, -0.2, 0.08};
  c.z_min_nm = -650;
  c.z_max_nm = 550;
  c.pixel_size_nm = 160;
  return c;
}

}  // namespace

TEST_CASE("defocus polynomial: values and z-derivatives") {
  const DefocusCurve<double> k{130.0, -250.0, 400.0, 0.1, 0.05};
  CHECK(k.sigma(-250.0) == doctest::Approx(130.0));
  const double u = (150.0 + 250.0) / 400.0;
  CHECK(k.sigma(150.0) == doctest::Approx(130.0 * std::sqrt(1 + u * u + 0.1 * u * u * u + 0.05 * u * u * u * u)));
  for (double z = -700; z <= 700; z += 50) {
    const double h = 1e-3;
    const double numeric = (k.sigma(z + h) - k.sigma(z - h)) / (2 * h);
    double s = 0, ds = 0;
    k.evaluate(z, s, ds);
    CHECK(s == doctest::Approx(k.sigma(z)));
    CHECK(ds == doctest::Approx(numeric).epsilon(1e-6));
    CHECK(k.derivative(z) == ds);
  }
  // In pixels (float, as a kernel would use it): σ0 / pixel size, z still in nm.
  const auto c = skewed();
  const auto psf = c.in_pixels<float>();
  float sx = 0, sy = 0, dsx = 0, dsy = 0;
  psf.evaluate(100.0f, sx, sy, dsx, dsy);
  CHECK(sx == doctest::Approx(c.sigma_x_nm(100) / 160).epsilon(1e-5));
  CHECK(sy == doctest::Approx(c.sigma_y_nm(100) / 160).epsilon(1e-5));
  CHECK(dsx == doctest::Approx(c.x.derivative(100) / 160).epsilon(1e-4));
  CHECK(dsy == doctest::Approx(c.y.derivative(100) / 160).epsilon(1e-4));
  CHECK(psf.clamp_z(900.0f) == 550.0f);
  CHECK(c.in_pixels<double>(100).x.sigma0 == doctest::Approx(1.25));
}

TEST_CASE("astigmatic calibration: JSON round trip and the z-range check") {
  TempDir dir;
  const auto path = (dir / "astig.json").string();
  const auto c = skewed();
  write_astigmatic_calibration(path, c);
  const auto back = read_astigmatic_calibration(path);
  CHECK(back.source == path);
  CHECK(back.pixel_size_nm == c.pixel_size_nm);
  CHECK(back.z_min_nm == c.z_min_nm);
  CHECK(back.z_max_nm == c.z_max_nm);
  for (const auto& [a, b] : {std::pair{back.x, c.x}, std::pair{back.y, c.y}}) {
    CHECK(a.sigma0 == b.sigma0);
    CHECK(a.c == b.c);
    CHECK(a.d == b.d);
    CHECK(a.a == b.a);
    CHECK(a.b == b.b);
  }
  CHECK(back.covers(-600, 500));
  CHECK_FALSE(back.covers(-700, 500));
  back.require_covers(-650, 550, "--z-range");
  const auto e = expect_error<UsageError>([&] { back.require_covers(-200, 800, "--z-range"); });
  CHECK(e.where() == "--z-range");
  CHECK(contains(e.what(), "z from -200 to 800 nm is outside the range -650 to 550 nm"));
  CHECK(contains(e.what(), "astig.json"));

  // The built-in calibration is valid over ±600 nm, and A, B default to 0.
  const auto d = default_astigmatic_calibration(108);
  d.validate();
  CHECK(d.covers(-600, 600));
  write_file(dir / "short.json",
             R"({"model": "defocus-polynomial", "units": "nm", "pixel_size_nm": 100, "z_range_nm": [-400, 400],
                 "x": {"sigma0": 120, "c": -200, "d": 350}, "y": {"sigma0": 120, "c": 200, "d": 350}})");
  const auto s = read_astigmatic_calibration((dir / "short.json").string());
  CHECK(s.x.a == 0);
  CHECK(s.y.b == 0);
}

TEST_CASE("astigmatic calibration: malformed files are refused on one line naming the file") {
  TempDir dir;
  const std::string good_x = R"("x": {"sigma0": 120, "c": -200, "d": 350})";
  const std::string good_y = R"("y": {"sigma0": 120, "c": 200, "d": 350})";
  const std::string head = R"("pixel_size_nm": 100, "z_range_nm": [-400, 400])";
  struct Row {
    std::string text, what;
  };
  const std::vector<Row> rows = {
      {"", "not a valid JSON calibration"},
      {"{\"x\": {", "not a valid JSON calibration: parse error at line 1"},
      {"[1, 2]", "must be a JSON object"},
      {"{" + head + ", " + good_x + "}", "the key \"y\""},
      {"{\"z_range_nm\": [-400, 400], " + good_x + ", " + good_y + "}", "the key \"pixel_size_nm\" is missing"},
      {"{\"pixel_size_nm\": 100, " + good_x + ", " + good_y + "}", "the key \"z_range_nm\""},
      {"{\"pixel_size_nm\": 100, \"z_range_nm\": [400], " + good_x + ", " + good_y + "}", "must be two numbers"},
      {"{\"pixel_size_nm\": 100, \"z_range_nm\": [400, -400], " + good_x + ", " + good_y + "}", "low to high"},
      {"{\"pixel_size_nm\": 0, \"z_range_nm\": [-400, 400], " + good_x + ", " + good_y + "}", "pixel size must be a positive number"},
      {"{\"version\": 99, " + head + ", " + good_x + ", " + good_y + "}", "calibration format version 99 is not supported"},
      {"{\"version\": \"1\", " + head + ", " + good_x + ", " + good_y + "}", "calibration format version \"1\" is not supported"},
      {"{\"format\": \"other\", " + head + ", " + good_x + ", " + good_y + "}", "unknown format \"other\""},
      {"{\"model\": \"zernike\", " + head + ", " + good_x + ", " + good_y + "}", "unknown model \"zernike\""},
      {"{\"units\": \"px\", " + head + ", " + good_x + ", " + good_y + "}", "unknown units \"px\""},
      {"{" + head + ", \"x\": {\"sigma0\": \"wide\", \"c\": 0, \"d\": 300}, " + good_y + "}",
       "\"x.sigma0\" must be a number"},
      {"{" + head + ", \"x\": {\"sigma0\": 120, \"d\": 300}, " + good_y + "}", "the key \"x.c\" is missing"},
      {"{" + head + ", \"x\": [1, 2], " + good_y + "}", "\"x\" must be an object"},
      {"{" + head + ", " + good_x + ", \"y\": {\"sigma0\": -1, \"c\": 0, \"d\": 300}}", "y.sigma0 must be positive"},
      {"{" + head + ", " + good_x + ", \"y\": {\"sigma0\": 100, \"c\": 0, \"d\": 0}}", "y.d (the depth of focus) must not be 0"},
      {"{" + head + ", " + good_x + ", \"y\": {\"sigma0\": 100, \"c\": 0, \"d\": 300, \"A\": -3}}",
       "sigma_y(z) is not defined"},
  };
  int n = 0;
  for (const auto& row : rows) {
    CAPTURE(row.text);
    const auto path = dir / ("bad" + std::to_string(n++) + ".json");
    write_file(path, row.text);
    const auto e = expect_error<InputError>([&] { read_astigmatic_calibration(path.string()); });
    INFO(e.message());
    CHECK(exit_code(e.kind()) == 3);
    CHECK(e.where() == path.string());
    CHECK(contains(e.what(), row.what));
    CHECK(e.message().find('\n') == std::string::npos);
  }
  const auto missing = expect_error<InputError>([&] { read_astigmatic_calibration((dir / "none.json").string()); });
  CHECK(contains(missing.what(), "cannot open"));
}

TEST_CASE("defocus fit: recovers known parameters from noisy samples") {
  const auto truth = skewed();
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0.0, 1.0);  // nm: bead fits' widths are good to ~1%
  std::vector<double> z, sx, sy;
  for (double v = -650; v <= 550; v += 10) {
    z.push_back(v);
    sx.push_back(truth.sigma_x_nm(v) * (1 + 0.01 * noise(rng)));
    sy.push_back(truth.sigma_y_nm(v) * (1 + 0.01 * noise(rng)));
  }
  const auto fit = fit_astigmatic_calibration(z, sx, sy, 160);
  CHECK(fit.pixel_size_nm == 160);
  CHECK(fit.z_min_nm == -650);
  CHECK(fit.z_max_nm == 550);
  for (const auto& [got, want] : {std::pair{fit.x, truth.x}, std::pair{fit.y, truth.y}}) {
    CHECK(got.sigma0 == doctest::Approx(want.sigma0).epsilon(0.03));
    CHECK(got.c == doctest::Approx(want.c).epsilon(0.05));
    CHECK(got.d == doctest::Approx(want.d).epsilon(0.1));
  }
  // What matters downstream: the curves agree over the range, to about twice the samples' noise.
  for (double v = -650; v <= 550; v += 25) {
    CHECK(fit.sigma_x_nm(v) == doctest::Approx(truth.sigma_x_nm(v)).epsilon(0.02));
    CHECK(fit.sigma_y_nm(v) == doctest::Approx(truth.sigma_y_nm(v)).epsilon(0.02));
  }

  // Exact samples: the parameters themselves, higher-order terms included.
  std::vector<double> exact;
  for (const double v : z) exact.push_back(truth.sigma_x_nm(v));
  const auto k = fit_defocus_curve(z, exact);
  CHECK(k.rms < 1e-6);
  CHECK(k.curve.sigma0 == doctest::Approx(truth.x.sigma0).epsilon(1e-6));
  CHECK(k.curve.c == doctest::Approx(truth.x.c).epsilon(1e-6));
  CHECK(k.curve.d == doctest::Approx(truth.x.d).epsilon(1e-6));
  CHECK(k.curve.a == doctest::Approx(truth.x.a).epsilon(1e-5));
  CHECK(k.curve.b == doctest::Approx(truth.x.b).epsilon(1e-5));

  // Without the higher-order terms (3 parameters), a pure Huang curve comes back too;
  // non-finite samples (failed bead fits) are skipped.
  const DefocusCurve<double> plain{150.0, 80.0, 300.0, 0, 0};
  std::vector<double> zs, ss;
  for (double v = -500; v <= 500; v += 20) {
    zs.push_back(v);
    ss.push_back(plain.sigma(v));
  }
  ss[3] = std::nan("");
  const auto p = fit_defocus_curve(zs, ss, false);
  CHECK(p.curve.sigma0 == doctest::Approx(150.0));
  CHECK(p.curve.c == doctest::Approx(80.0));
  CHECK(p.curve.d == doctest::Approx(300.0));
  CHECK(p.curve.a == 0);

  // Too few samples: one line naming what it fits.
  const std::vector<double> few_z = {0, 100, 200}, few_s = {100, 110, 130};
  const auto e = expect_error<InputError>([&] { fit_defocus_curve(few_z, few_s, true, "beads.tif"); });
  CHECK(e.where() == "beads.tif");
  CHECK(contains(e.what(), "at least 6 usable (z, sigma) samples, got 3"));
}
