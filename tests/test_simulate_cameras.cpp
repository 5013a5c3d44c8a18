// bench simulate movie's cameras and 3D modes: EMCCD statistics (variance ≈ 2 ×
// mean in photons: excess noise factor 2), sCMOS per-pixel mean and variance
// against the maps, astigmatic spots (z in range, the right elongation) and
// bead z-stacks; and the files the command line writes beside the movie.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "nanoscopy/core/astigmatism.hpp"
#include "nanoscopy/core/camera_maps.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/sim/movie.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;

namespace {

MovieSettings background_only(std::int64_t frames) {
  MovieSettings s;
  s.frames = frames;
  s.width = 32;
  s.height = 32;
  s.emitters = 0;
  s.background = 30;
  return s;
}

}  // namespace

TEST_CASE("EMCCD: gamma EM gain doubles the variance of the photon counts") {
  auto s = background_only(100);
  s.camera = "emccd";
  s.em_gain = 100;
  s.sensitivity = 10;
  s.read_noise = 40;  // e- rms: (40/100)² = 0.16 photons² more
  s.baseline = 200;
  const auto frames = simulated_movie_u16(s);
  double sum = 0, sum2 = 0;
  for (const auto v : frames) {
    const double photons = (static_cast<double>(v) - s.baseline) * s.sensitivity / s.em_gain;
    sum += photons;
    sum2 += photons * photons;
  }
  const auto n = static_cast<double>(frames.size());
  const double mean = sum / n, variance = sum2 / n - mean * mean;
  const double quantization = (s.sensitivity / s.em_gain) * (s.sensitivity / s.em_gain) / 12;
  const double read = (s.read_noise / s.em_gain) * (s.read_noise / s.em_gain);
  CHECK(mean == doctest::Approx(s.background).epsilon(0.01));
  // 102,400 samples: the variance is good to ~1%.
  CHECK(variance == doctest::Approx(2 * s.background + read + quantization).epsilon(0.03));

  // The plain camera stays Poisson (variance = mean).
  auto p = background_only(100);
  p.sensitivity = 1;
  const auto plain = simulated_movie_u16(p);
  sum = sum2 = 0;
  for (const auto v : plain) {
    const double photons = static_cast<double>(v) - p.baseline;
    sum += photons;
    sum2 += photons * photons;
  }
  CHECK(sum2 / n - (sum / n) * (sum / n) == doctest::Approx(p.background).epsilon(0.03));
}

TEST_CASE("sCMOS: each pixel's mean and variance follow its offset, gain and read-noise variance") {
  auto s = background_only(1000);
  s.width = 16;
  s.height = 16;
  s.background = 10;
  s.camera = "scmos";
  const auto maps = std::make_shared<const CameraMaps>(simulate_camera_maps(s.width, s.height, 11));
  s.maps = maps;
  const auto frames = simulated_movie_u16(s);
  const auto pixels = static_cast<std::size_t>(s.width * s.height);
  double ratio_sum = 0;
  int hot = 0;
  std::vector<float> photons(pixels), shift(pixels);
  double photon_mean = 0, shifted_variance = 0;
  for (std::size_t k = 0; k < pixels; ++k) {
    double sum = 0, sum2 = 0;
    for (std::int64_t t = 0; t < s.frames; ++t) {
      const double v = frames[static_cast<std::size_t>(t) * pixels + k];
      sum += v;
      sum2 += v * v;
    }
    const auto n = static_cast<double>(s.frames);
    const double mean = sum / n, variance = sum2 / n - mean * mean;
    const double g = maps->gain[k];
    const double expected_variance = g * g * s.background + maps->variance[k] + 1.0 / 12;
    CHECK(mean == doctest::Approx(maps->offset[k] + g * s.background).epsilon(0.01));
    // 1000 frames: a variance is good to ~4.5% (1σ); 5σ here, per pixel.
    CHECK(variance == doctest::Approx(expected_variance).epsilon(0.25));
    ratio_sum += variance / expected_variance;
    if (maps->variance[k] > 60) {
      ++hot;
      CHECK(variance == doctest::Approx(expected_variance).epsilon(0.25));
    }
  }
  CHECK(ratio_sum / static_cast<double>(pixels) == doctest::Approx(1.0).epsilon(0.02));
  MESSAGE(hot << " hot pixels of " << pixels);

  // Through the estimator's conversion: photoelectrons with mean b and variance b + var/g².
  for (std::int64_t t = 0; t < s.frames; ++t) {
    maps->to_photons(frames.data() + static_cast<std::size_t>(t) * pixels, 0, 0, s.width, s.height, photons.data(),
                     shift.data());
    for (std::size_t k = 0; k < pixels; ++k) {
      photon_mean += photons[k];
      shifted_variance += (photons[k] - s.background) * (photons[k] - s.background) - shift[k];
    }
  }
  const double count = static_cast<double>(pixels) * static_cast<double>(s.frames);
  CHECK(photon_mean / count == doctest::Approx(s.background).epsilon(0.01));
  CHECK(shifted_variance / count == doctest::Approx(s.background).epsilon(0.03));
}

TEST_CASE("3D with z_even: the emitters' depths evenly spaced, so equal depth bins hold as many emitters") {
  MovieSettings s;
  s.frames = 2;
  s.emitters = 120;
  s.on_fraction = 1;
  s.astigmatism = default_astigmatic_calibration(s.pixel_size_nm);
  s.z_min_nm = -600;
  s.z_max_nm = 600;
  s.z_even = true;
  TempDir dir;
  // The emitters' depths (all inside the range) and their count per 100-nm bin.
  const auto depths = [&](const std::string& name, std::vector<int>& per_bin) {
    MovieTruthExtras extras;
    simulate_movie(s, (dir / name).string(), &extras);
    REQUIRE(extras.emitters.size() == 120);
    per_bin.assign(12, 0);
    std::vector<double> zs;
    for (const auto& e : extras.emitters) {
      REQUIRE(e.z > s.z_min_nm);
      REQUIRE(e.z < s.z_max_nm);
      ++per_bin[static_cast<std::size_t>((e.z - s.z_min_nm) / 100)];
      zs.push_back(e.z);
    }
    return zs;
  };
  std::vector<int> per_bin;
  std::vector<double> zs = depths("even.tif", per_bin);
  for (int n : per_bin) CHECK(n == 10);
  // In random order over the emitters (not sorted by their place), from the first step to the last.
  CHECK_FALSE(std::is_sorted(zs.begin(), zs.end()));
  std::sort(zs.begin(), zs.end());
  CHECK(zs.front() == doctest::Approx(-595));
  CHECK(zs.back() == doctest::Approx(595));

  s.z_even = false;  // uniform at random: the bins differ
  depths("uniform.tif", per_bin);
  CHECK(*std::max_element(per_bin.begin(), per_bin.end()) > *std::min_element(per_bin.begin(), per_bin.end()));
}

TEST_CASE("astigmatic 3D: z uniform in the range, spots elongated as the calibration says") {
  MovieSettings s;
  s.frames = 50;
  s.emitters = 40;
  s.astigmatism = default_astigmatic_calibration(s.pixel_size_nm);
  s.z_min_nm = -500;
  s.z_max_nm = 400;
  TempDir dir;
  const auto truth = simulate_movie(s, (dir / "z.tif").string());
  REQUIRE(!truth.empty());
  double lo = 1e9, hi = -1e9;
  for (const auto& t : truth) {
    CHECK(t.z >= s.z_min_nm);
    CHECK(t.z <= s.z_max_nm);
    lo = std::min(lo, t.z);
    hi = std::max(hi, t.z);
  }
  CHECK(lo < s.z_min_nm + 200);
  CHECK(hi > s.z_max_nm - 200);

  // A z-stack of one bright bead, no background: second moments give σx, σy.
  MovieSettings b;
  b.z_stack = true;
  b.beads = 1;
  b.photons = 1e5;
  b.background = 0;
  b.sensitivity = 1;
  b.baseline = 0;
  b.astigmatism = default_astigmatic_calibration(b.pixel_size_nm);
  b.z_min_nm = -600;
  b.z_step_nm = 50;
  b.frames = 25;
  const auto path = (dir / "stack.tif").string();
  const auto beads = simulate_movie(b, path);
  REQUIRE(beads.size() == 25);
  std::vector<double> zs, sxs, sys;
  auto reader = open_stack(path);
  std::vector<float> frame(static_cast<std::size_t>(b.width * b.height));
  const auto psf = b.astigmatism->in_pixels<double>(b.pixel_size_nm);
  for (std::int64_t t = 0; t < b.frames; ++t) {
    const auto& bead = beads[static_cast<std::size_t>(t)];
    CHECK(bead.frame == t);
    CHECK(bead.z == doctest::Approx(-600.0 + b.z_step_nm * static_cast<double>(t)));
    reader->read_float(t, 1, frame.data());
    double m = 0, mx = 0, my = 0, mxx = 0, myy = 0;
    for (std::int64_t y = 0; y < b.height; ++y)
      for (std::int64_t x = 0; x < b.width; ++x) {
        const double v = frame[static_cast<std::size_t>(y * b.width + x)];
        m += v;
        mx += v * static_cast<double>(x);
        my += v * static_cast<double>(y);
        mxx += v * static_cast<double>(x * x);
        myy += v * static_cast<double>(y * y);
      }
    mx /= m;
    my /= m;
    CHECK(mx == doctest::Approx(bead.x).epsilon(0.01));
    CHECK(my == doctest::Approx(bead.y).epsilon(0.01));
    // Pixel integration adds 1/12 px² to a Gaussian's variance.
    const double sx = std::sqrt(mxx / m - mx * mx - 1.0 / 12), sy = std::sqrt(myy / m - my * my - 1.0 / 12);
    CAPTURE(bead.z);
    CHECK(sx == doctest::Approx(psf.x.sigma(bead.z)).epsilon(0.03));
    CHECK(sy == doctest::Approx(psf.y.sigma(bead.z)).epsilon(0.03));
    zs.push_back(bead.z);
    sxs.push_back(sx * b.pixel_size_nm);
    sys.push_back(sy * b.pixel_size_nm);
  }
  // The calibration round trip: the defocus fit of the bead widths gives back the calibration.
  const auto fit = fit_astigmatic_calibration(zs, sxs, sys, b.pixel_size_nm, true, "stack.tif");
  const auto& want = *b.astigmatism;
  CHECK(fit.covers(-600, 600));
  for (const auto& [got, k] : {std::pair{fit.x, want.x}, std::pair{fit.y, want.y}}) {
    CHECK(got.sigma0 == doctest::Approx(k.sigma0).epsilon(0.03));
    CHECK(got.c == doctest::Approx(k.c).epsilon(0.05));
    CHECK(got.d == doctest::Approx(k.d).epsilon(0.05));
  }
}

TEST_CASE("bench simulate movie: maps, calibration and z beside the movie, named in its .yaml") {
  TempDir dir;
  const std::string bench = shell_quote(app_path("bench")) + " --quiet simulate movie --frames 20 --width 24 --height 20 ";
  const auto movie = dir / "s.tif";
  auto r = run_command(bench + "--camera scmos -o " + shell_quote(movie.string()));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const auto maps = read_camera_maps((dir / "s_maps.h5").string());
  maps.check_frame_size(24, 20, "s.tif");
  const auto info = open_stack(movie.string())->info();
  bool named = false;
  for (const auto& [k, v] : info.metadata) named = named || (k == "Camera maps" && v == "s_maps.h5");
  CHECK(named);

  // The same maps given back: the same movie.
  r = run_command(bench + "--camera scmos --camera-maps " + shell_quote((dir / "s_maps.h5").string()) + " -o " +
                  shell_quote((dir / "s2.tif").string()));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(read_file(dir / "s2.tif") == read_file(movie));

  r = run_command(bench + "--astigmatic --z-min -300 --z-max 300 -o " + shell_quote((dir / "z.tif").string()));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const auto calibration = read_astigmatic_calibration((dir / "z_astig.json").string());
  CHECK(calibration.covers(-300, 300));
  std::ifstream truth(dir / "z_truth.csv");
  std::string header;
  std::getline(truth, header);
  CHECK(header == R"("id","frame","x [nm]","y [nm]","intensity [photon]","z [nm]")");
  CHECK(!read_localizations((dir / "z_truth.csv").string(), 108).empty());

  r = run_command(bench + "--z-stack --z-min -200 --z-max 200 --z-step 50 --beads 2 -o " +
                  shell_quote((dir / "b.tif").string()));
  CHECK(r.exit_code == 2);  // --frames with --z-stack
  r = run_command(shell_quote(app_path("bench")) + " --quiet simulate movie --z-stack --z-min -200 --z-max 200 "
                  "--z-step 50 --beads 2 -o " + shell_quote((dir / "b.tif").string()));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(open_stack((dir / "b.tif").string())->info().frames == 9);

  // The default movie has none of these.
  r = run_command(bench + "-o " + shell_quote((dir / "plain.tif").string()));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK_FALSE(std::filesystem::exists(dir / "plain_maps.h5"));
  CHECK_FALSE(std::filesystem::exists(dir / "plain_astig.json"));
  std::ifstream plain(dir / "plain_truth.csv");
  std::getline(plain, header);
  CHECK(header == R"("id","frame","x [nm]","y [nm]","intensity [photon]")");
}
