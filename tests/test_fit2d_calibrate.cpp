// fit2d calibrate: a bead z-stack simulated with a known astigmatic calibration
// (bench simulate movie --z-stack) is calibrated back, and bad stacks are one-line errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "nanoscopy/core/astigmatism.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

CommandResult app(const std::string& name, const std::string& args) {
  return run_command(shell_quote(app_path(name)) + " " + args);
}

void check_one_error_line(const CommandResult& r, int code, const std::string& where) {
  INFO(r.output);
  CHECK(r.exit_code == code);
  CHECK(r.output.rfind("fit2d: error: ", 0) == 0);
  CHECK(r.output.find(where) != std::string::npos);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
}

}  // namespace

TEST_CASE("fit2d calibrate recovers the calibration a bead z-stack was simulated with") {
  TempDir dir;
  const auto stack = (dir / "beads.tif").string();
  const auto sim = app("bench", "--quiet simulate movie --z-stack --z-step 20 --z-min -600 --z-max 600 --beads 3 -o " +
                                    shell_quote(stack));
  INFO(sim.output);
  REQUIRE(sim.exit_code == 0);
  const auto json = (dir / "astig.json").string();
  const auto r = app("fit2d", "calibrate " + shell_quote(stack) + " --z-step 20 -o " + shell_quote(json));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("fit RMS") != std::string::npos);
  CHECK(r.output.find("-600 to 600 nm") != std::string::npos);
  CHECK(fs::exists(dir / "astig.png"));
  const auto truth = read_astigmatic_calibration((dir / "beads_astig.json").string());
  const auto got = read_astigmatic_calibration(json);
  // σ0 within 3 nm, the foci c within 20 nm, d within 5 %.
  CHECK(got.x.sigma0 == doctest::Approx(truth.x.sigma0).epsilon(0.025));
  CHECK(got.y.sigma0 == doctest::Approx(truth.y.sigma0).epsilon(0.025));
  CHECK(std::abs(got.x.c - truth.x.c) < 20);
  CHECK(std::abs(got.y.c - truth.y.c) < 20);
  CHECK(got.x.d == doctest::Approx(truth.x.d).epsilon(0.05));
  CHECK(got.y.d == doctest::Approx(truth.y.d).epsilon(0.05));
  CHECK(got.z_min_nm == doctest::Approx(-600));
  CHECK(got.z_max_nm == doctest::Approx(600));
  // The curves within a few nm over the range (noise ≈ 4.5 nm per frame, 3 beads): with the free cubic
  // and quartic terms (the default) within 12 nm at the ends and 6 nm inside ±500 nm; with σ0, c, d only
  // (the truth has A = B = 0) within 6 nm everywhere.
  const auto worst = [&](const AstigmaticCalibration& c, double range) {
    double w = 0;
    for (double z = -range; z <= range; z += 10)
      w = std::max({w, std::abs(c.sigma_x_nm(z) - truth.sigma_x_nm(z)), std::abs(c.sigma_y_nm(z) - truth.sigma_y_nm(z))});
    return w;
  };
  const auto json2 = (dir / "astig2.json").string();
  REQUIRE(app("fit2d", "calibrate " + shell_quote(stack) + " --z-step 20 --no-higher-order -o " + shell_quote(json2))
              .exit_code == 0);
  const auto plain = read_astigmatic_calibration(json2);
  MESSAGE("calibrate round trip: σ0 " << got.x.sigma0 << ", " << got.y.sigma0 << " (truth " << truth.x.sigma0
                                      << "), c " << got.x.c << ", " << got.y.c << " (truth " << truth.x.c << ", "
                                      << truth.y.c << "), d " << got.x.d << ", " << got.y.d << " (truth " << truth.x.d
                                      << "); max |Δσ(z)| " << worst(got, 600) << " nm (±500: " << worst(got, 500)
                                      << "), without A, B " << worst(plain, 600) << " nm");
  CHECK(worst(got, 600) < 12);
  CHECK(worst(got, 500) < 6);
  CHECK(worst(plain, 600) < 6);
}

TEST_CASE("fit2d calibrate: a single frame, or no bead, is a one-line error and writes nothing") {
  TempDir dir;
  const auto one = (dir / "one.tif").string();
  REQUIRE(app("bench", "--quiet simulate movie --frames 1 --width 32 --height 32 --emitters 3 -o " + shell_quote(one))
              .exit_code == 0);
  const auto json = (dir / "astig.json").string();
  check_one_error_line(app("fit2d", "calibrate " + shell_quote(one) + " --z-step 20 -o " + shell_quote(json)), 3,
                       "one.tif: 1 frame");
  // No bead: a z-stack of dark frames (emitters with no photons on a flat background).
  const auto dark = (dir / "dark.tif").string();
  REQUIRE(app("bench", "--quiet simulate movie --frames 10 --width 32 --height 32 --emitters 0 -o " + shell_quote(dark))
              .exit_code == 0);
  check_one_error_line(app("fit2d", "calibrate " + shell_quote(dark) + " --z-step 20 -o " + shell_quote(json)), 3,
                       "no bead found");
  check_one_error_line(app("fit2d", "calibrate " + shell_quote(dark) + " --z-step -1 -o " + shell_quote(json)), 2,
                       "--z-step");
  CHECK_FALSE(fs::exists(json));
  CHECK_FALSE(fs::exists(dir / "astig.png"));
}

TEST_CASE("fit2d calibrate: an absurd --z-step is a usage error naming it, and writes nothing") {
  TempDir dir;
  const auto dark = (dir / "dark.tif").string();
  REQUIRE(app("bench", "--quiet simulate movie --frames 10 --width 32 --height 32 --emitters 0 -o " + shell_quote(dark))
              .exit_code == 0);
  const auto json = (dir / "astig.json").string();
  // 1e300 wrote a calibration of ±3e301 nm; 20 µm steps over 10 frames span 180 µm (beyond 100 µm).
  for (const char* step : {"1e300", "inf", "nan", "0", "20000"}) {
    CAPTURE(step);
    check_one_error_line(app("fit2d", "calibrate " + shell_quote(dark) + " --z-step " + step + " -o " + shell_quote(json)),
                         2, "--z-step");
  }
  check_one_error_line(
      app("fit2d", "calibrate " + shell_quote(dark) + " --z-step 20 --z0 1e300 -o " + shell_quote(json)), 2, "--z0");
  CHECK_FALSE(fs::exists(json));
  CHECK_FALSE(fs::exists(dir / "astig.png"));
}

TEST_CASE("fit2d --calibration: an unknown format version is refused; another pixel size is warned about") {
  TempDir dir;
  const auto movie = (dir / "movie.tif").string();
  REQUIRE(app("bench", "--quiet simulate movie --frames 4 --width 32 --height 32 --emitters 4 --pixel-size 108 -o " +
                           shell_quote(movie))
              .exit_code == 0);
  const auto out = (dir / "locs.hdf5").string();
  // The version is checked: 99 is not this build's format (it was accepted before).
  auto json = to_json(default_astigmatic_calibration(108));
  const auto at = json.find("\"version\": 1");
  REQUIRE(at != std::string::npos);
  json.replace(at, 12, "\"version\": 99");
  const auto v99 = (dir / "v99.json").string();
  write_file(v99, json);
  const auto r99 = app("fit2d", shell_quote(movie) + " --calibration " + shell_quote(v99) + " -o " + shell_quote(out));
  check_one_error_line(r99, 3, "v99.json: calibration format version 99 is not supported");
  CHECK_FALSE(fs::exists(out));

  // Made at 108 nm: no warning. Made at 10 nm on a 108 nm movie: one warning line naming both sizes.
  const auto same = (dir / "same.json").string(), other = (dir / "other.json").string();
  write_astigmatic_calibration(same, default_astigmatic_calibration(108));
  write_astigmatic_calibration(other, default_astigmatic_calibration(10));
  const auto ok = app("fit2d", "--quiet " + shell_quote(movie) + " --calibration " + shell_quote(same) + " -o " + shell_quote(out));
  INFO(ok.output);
  REQUIRE(ok.exit_code == 0);
  CHECK(ok.output.find("warning") == std::string::npos);
  const auto warned =
      app("fit2d", "--quiet " + shell_quote(movie) + " --calibration " + shell_quote(other) + " -o " + shell_quote(out));
  INFO(warned.output);
  REQUIRE(warned.exit_code == 0);
  const auto w = warned.output.find("fit2d: warning: " + other + ": made at a pixel size of 10 nm, but the movie's is 108 nm");
  CHECK(w != std::string::npos);
}
