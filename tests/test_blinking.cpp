// The SOFI stack simulator (sim/blinking) and `bench simulate blinking`:
// blinking statistics, photon bookkeeping, the truth files, determinism, CLI.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <sstream>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/sim/blinking.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

std::vector<float> read_all(const std::string& path, StackInfo* info = nullptr) {
  auto reader = open_stack(path);
  const auto& i = reader->info();
  if (info) *info = i;
  std::vector<float> v(static_cast<std::size_t>(i.frames * i.pixels_per_frame()));
  reader->read_float(0, i.frames, v.data());
  return v;
}

// Fraction of a unit pixel-integrated Gaussian at `mu` that lands on pixels [0, n).
double mass_on_chip(double mu, double sigma, std::int64_t n) {
  const double s = std::sqrt(2.0) * sigma;
  return 0.5 * (std::erf((static_cast<double>(n) - 0.5 - mu) / s) - std::erf((-0.5 - mu) / s));
}

BlinkingSettings small(std::int64_t size, std::int64_t frames, int emitters) {
  BlinkingSettings s;
  s.width = s.height = size;
  s.frames = frames;
  s.emitters = emitters;
  return s;
}

CommandResult bench(const std::string& args) { return run_command(shell_quote(app_path("bench")) + " -q " + args); }

}  // namespace

TEST_CASE("exponential blinking: measured on-fraction = mean_on / (mean_on + mean_off), stationary from frame 0") {
  BlinkingSettings s;
  s.blinking = "exponential";
  s.mean_on_frames = 3;
  s.mean_off_frames = 7;
  CHECK(stationary_on_fraction(s) == doctest::Approx(0.3));
  BlinkingTrace trace(s, 0);
  const std::int64_t frames = 1'000'000;  // ~1e5 cycles: std of the estimate ≈ 0.001
  for (std::int64_t t = 0; t < frames; ++t) {
    const double on = trace.next_frame();
    REQUIRE(on >= 0.0);
    REQUIRE(on <= 1.0);
  }
  CHECK(std::abs(trace.total_on_time() / static_cast<double>(frames) - 0.3) < 0.005);
  CHECK(trace.bleach_frame() == -1);

  // The first frame is already stationary (no start-up transient), over many emitters.
  double first = 0;
  for (std::uint64_t id = 0; id < 20000; ++id) first += BlinkingTrace(s, id).next_frame();
  CHECK(std::abs(first / 20000 - 0.3) < 0.015);
}

TEST_CASE("power-law blinking: Pareto tail exponent (Hill), cap, and the stationary on-fraction") {
  for (const double mu : {0.6, 0.9}) {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<double> x(200000);
    for (auto& v : x) v = pareto_duration(0.1, mu, 1e300, 1.0 - u(rng));
    std::sort(x.begin(), x.end(), std::greater<>());
    const std::size_t k = 10000;  // Hill estimator on the top k: relative std ≈ 1/√k = 1 %
    double sum = 0;
    for (std::size_t i = 0; i < k; ++i) sum += std::log(x[i] / x[k]);
    const double hill = static_cast<double>(k) / sum;
    INFO("mu = ", mu, ", Hill = ", hill);
    CHECK(std::abs(hill / mu - 1) < 0.05);
    CHECK(x.back() >= 0.1);
  }
  CHECK(pareto_duration(0.1, 0.5, 100, 1e-12) == 100);  // the cap

  BlinkingSettings s;  // defaults: power law
  const double rho = stationary_on_fraction(s);
  CHECK(rho > 0.1);
  CHECK(rho < 0.5);
  BlinkingTrace trace(s, 3);
  const std::int64_t frames = 1'000'000;
  for (std::int64_t t = 0; t < frames; ++t) trace.next_frame();
  CHECK(std::abs(trace.total_on_time() / static_cast<double>(frames) - rho) < 0.02);
}

TEST_CASE("bleaching: a budget of on-time, then dark for good") {
  BlinkingSettings s;
  s.blinking = "exponential";
  s.mean_on_frames = 1;
  s.mean_off_frames = 2;
  s.bleach_frames = 5;
  double total = 0;
  const int n = 2000;
  for (int id = 0; id < n; ++id) {
    BlinkingTrace trace(s, static_cast<std::uint64_t>(id));
    for (int t = 0; t < 300; ++t) trace.next_frame();
    REQUIRE(trace.bleach_frame() >= 0);
    CHECK(trace.next_frame() == 0.0);
    total += trace.total_on_time();
  }
  CHECK(std::abs(total / n - 5) < 0.5);  // exponential budget, mean 5 frames
}

TEST_CASE("photons per frame = brightness x on-time; the mean image is the noise-free expectation") {
  TempDir dir;
  auto s = small(24, 300, 1);
  s.blinking = "exponential";
  s.mean_on_frames = 0.7;  // switches within frames: partial on-times
  s.mean_off_frames = 1.3;
  s.noise_free = true;
  s.background = 0;
  s.baseline = 0;
  s.sensitivity = 0.01;  // 100 ADU per photon: rounding costs ≤ 0.005 photons per pixel
  s.seed = 11;
  const auto path = (dir / "one.tif").string();
  const auto r = simulate_blinking(s, path);
  REQUIRE(r.emitters == 1);
  const auto rows = read_numeric_csv(r.emitters_csv);
  REQUIRE(rows.size() == 1);
  const double x = rows[0][1], y = rows[0][2];
  const double chip = mass_on_chip(x, s.psf_sigma, s.width) * mass_on_chip(y, s.psf_sigma, s.height);

  StackInfo info;
  const auto stack = read_all(path, &info);
  REQUIRE(info.frames == 300);
  REQUIRE(info.type == PixelType::u16);
  BlinkingTrace replay(s, 0);
  const auto npx = static_cast<std::size_t>(s.width * s.height);
  int partial = 0;
  for (std::int64_t t = 0; t < s.frames; ++t) {
    const double on = replay.next_frame();
    if (on > 0 && on < 1) ++partial;
    double sum = 0;
    for (std::size_t p = 0; p < npx; ++p) sum += stack[static_cast<std::size_t>(t) * npx + p] * s.sensitivity;
    REQUIRE(std::abs(sum - s.brightness * on * chip) < 0.5);  // rounding of ~400 pixels: std 0.06
  }
  CHECK(partial > 50);
  CHECK(rows[0][6] == doctest::Approx(replay.total_on_time() / 300.0).epsilon(1e-9));

  // Mean of the noise-free stack vs <stem>_mean.tif (in photons).
  StackInfo mi;
  const auto mean = read_all(r.mean_image, &mi);
  REQUIRE(mi.frames == 1);
  REQUIRE(mi.type == PixelType::f32);
  REQUIRE(mean.size() == npx);
  for (std::size_t p = 0; p < npx; ++p) {
    double m = 0;
    for (std::int64_t t = 0; t < s.frames; ++t) m += stack[static_cast<std::size_t>(t) * npx + p];
    m = m * s.sensitivity / static_cast<double>(s.frames);
    REQUIRE(std::abs(m - mean[p]) < 0.0051);
  }
}

TEST_CASE("with shot, EM and read noise the stack's mean is the mean image through gain and baseline") {
  TempDir dir;
  auto s = small(24, 2000, 6);
  s.background = 40;
  s.brightness = 500;
  s.em_gain = 10;
  s.sensitivity = 5;  // mean ADU = baseline + photons·2
  s.read_noise = 20;
  s.baseline = 100;
  const auto path = (dir / "noisy.tif").string();
  const auto r = simulate_blinking(s, path);
  const auto stack = read_all(path);
  const auto mean = read_all(r.mean_image);
  const auto npx = mean.size();
  const double scale = s.em_gain / s.sensitivity;
  double total = 0, expected = 0;
  for (std::size_t p = 0; p < npx; ++p) {
    double m = 0;
    for (std::int64_t t = 0; t < s.frames; ++t) m += stack[static_cast<std::size_t>(t) * npx + p];
    m = m / static_cast<double>(s.frames) - s.baseline;
    // EM register: variance 2·g²·photons (excess noise factor 2); read noise; blinking is in the mean image.
    const double var = (2 * s.em_gain * s.em_gain * mean[p] + s.read_noise * s.read_noise) / (s.sensitivity * s.sensitivity);
    const double z = (m - scale * mean[p]) / std::sqrt(var / static_cast<double>(s.frames));
    INFO("pixel ", p, " mean ", m, " expected ", scale * mean[p]);
    REQUIRE(std::abs(z) < 5.5);
    total += m;
    expected += scale * mean[p];
  }
  CHECK(std::abs(total / expected - 1) < 0.002);
}

TEST_CASE("structures: lines are straight, rings are circles of the given radius, density sets the count") {
  TempDir dir;
  auto s = small(64, 2, 30);
  s.structure = "lines";
  s.filaments = 1;
  auto r = simulate_blinking(s, (dir / "lines.tif").string());
  auto rows = read_numeric_csv(r.emitters_csv);
  REQUIRE(rows.size() == 30);
  const double ax = rows[0][1], ay = rows[0][2], bx = rows[29][1] - ax, by = rows[29][2] - ay;
  for (const auto& row : rows) CHECK(std::abs(bx * (row[2] - ay) - by * (row[1] - ax)) < 1e-6 * (bx * bx + by * by + 1));

  s.structure = "rings";
  s.rings = 1;
  s.emitters = 12;
  s.ring_radius_min_nm = s.ring_radius_max_nm = 250;
  r = simulate_blinking(s, (dir / "rings.tif").string());
  rows = read_numeric_csv(r.emitters_csv);
  REQUIRE(rows.size() == 12);
  double cx = 0, cy = 0;
  for (const auto& row : rows) cx += row[1] / 12, cy += row[2] / 12;
  for (const auto& row : rows) CHECK(std::hypot(row[1] - cx, row[2] - cy) == doctest::Approx(2.5).epsilon(1e-9));
  for (const auto& row : rows) CHECK(row[3] == doctest::Approx((row[1] + 0.5) * s.pixel_size_nm));

  s.structure = "random";
  s.density = 10;  // per µm²: 64² px of 100 nm = 40.96 µm²
  r = simulate_blinking(s, (dir / "dense.tif").string());
  CHECK(r.emitters == 410);

  s.structure = "spiral";
  const auto e = expect_error<UsageError>([&] { simulate_blinking(s, (dir / "bad.tif").string()); });
  CHECK(contains(e.message(), "spiral"));
  CHECK(!fs::exists(dir / "bad.tif"));
}

TEST_CASE("the truth image: a delta of brightness x on-fraction per emitter on the upsampled grid") {
  TempDir dir;
  auto s = small(32, 100, 20);
  s.truth_upsample = 4;
  const auto r = simulate_blinking(s, (dir / "t.tif").string());
  StackInfo info;
  const auto truth = read_all(r.truth_image, &info);
  REQUIRE(info.width == 128);
  REQUIRE(info.height == 128);
  REQUIRE(info.type == PixelType::f32);
  const auto rows = read_numeric_csv(r.emitters_csv);
  double sum = 0, expect = 0;
  for (const float v : truth) sum += v;
  for (const auto& row : rows) {
    expect += row[5] * row[6];
    const auto fx = static_cast<std::int64_t>(std::floor((row[1] + 0.5) * 4));
    const auto fy = static_cast<std::int64_t>(std::floor((row[2] + 0.5) * 4));
    if (row[6] > 0) CHECK(truth[static_cast<std::size_t>(fy * 128 + fx)] >= 0.999 * row[5] * row[6]);
  }
  CHECK(sum == doctest::Approx(expect).epsilon(1e-5));
  CHECK(r.mean_on_fraction > 0);
}

TEST_CASE("the same seed gives the same files, another seed other files") {
  TempDir dir;
  auto s = small(32, 40, 30);
  auto run = [&](std::uint64_t seed, const std::string& name) {
    s.seed = seed;
    simulate_blinking(s, (dir / (name + ".tif")).string());
    return read_file(dir / (name + ".tif")) + read_file(dir / (name + "_emitters.csv")) +
           read_file(dir / (name + "_truth.tif")) + read_file(dir / (name + "_mean.tif"));
  };
  const auto a = run(5, "a"), b = run(5, "b"), c = run(6, "c");
  CHECK(a == b);
  CHECK(a != c);
  CHECK(read_file(dir / "a.tif") != read_file(dir / "c.tif"));
}

TEST_CASE("bench simulate blinking writes the stack and its truth; bad options are usage errors") {
  TempDir dir;
  for (const std::string ext : {".tif", ".h5"}) {
    const auto out = dir / ("qd" + ext);
    const auto r = bench("--seed 3 simulate blinking -o " + shell_quote(out.string()) +
                         " --size 32 --frames 50 --structure rings --emitters 24 --truth-upsample 4");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.output, "50 frames"));
    CHECK(contains(r.output, "24 emitters"));
    CHECK(contains(r.output, "mean on-fraction"));
    StackInfo info;
    read_all(out.string(), &info);
    CHECK(info.frames == 50);
    CHECK(info.width == 32);
    CHECK(info.type == PixelType::u16);
    read_all((dir / "qd_truth.tif").string(), &info);
    CHECK(info.width == 128);
    read_all((dir / "qd_mean.tif").string(), &info);
    CHECK(info.width == 32);
    std::vector<std::string> header;
    CHECK(read_numeric_csv(dir / "qd_emitters.csv", &header).size() == 24);
    CHECK(header == std::vector<std::string>{"id", "x_px", "y_px", "x_nm", "y_nm", "brightness", "on_fraction", "bleach_frame"});
  }
  for (const std::string bad : {"--frames -5", "--frames 0", "--structure spiral", "--blinking gaussian",
                                "--size 32 --width 40", "--em-gain 0.5"}) {
    const auto r = bench("simulate blinking -o " + shell_quote((dir / "bad.tif").string()) + " " + bad);
    INFO(bad, ": ", r.output);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, "error"));
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
    CHECK(!fs::exists(dir / "bad.tif"));
  }
}
