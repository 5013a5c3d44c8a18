// sofi's first pass (issue 19): drift estimated from block means and undone
// per frame, the exponential bleaching correction, and bench sofi's comparison
// with the simulator's truth. Stacks come from the blinking simulator with a
// known drift and bleaching, fixed seeds.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "nanoscopy/bench/sofi_truth.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/sim/blinking.hpp"
#include "nanoscopy/sofi/corrections.hpp"
#include "nanoscopy/sofi/frame_correction.hpp"
#include "nanoscopy/sofi/runner.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using nanoscopy::test::TempDir;

namespace {

BlinkingSettings drifting_stack(std::int64_t frames, double drift_total_x, double drift_total_y, double wobble) {
  BlinkingSettings s;
  s.frames = frames;
  s.width = s.height = 64;
  s.emitters = 120;
  s.psf_sigma = 1.5;
  s.brightness = 1500;
  s.background = 50;
  s.drift_x_px_per_frame = drift_total_x / static_cast<double>(frames);
  s.drift_y_px_per_frame = drift_total_y / static_cast<double>(frames);
  s.drift_wobble_px = wobble;
  s.drift_wobble_period = static_cast<double>(frames);
  s.seed = 19;
  return s;
}

CorrelationEngineFactory cpu_correlation() {
  return [](const CorrelationGeometry& g) { return make_cpu_correlation_engine(g, 2); };
}

SofiCorrections measure(const std::string& path, const SofiCorrectionSettings& settings) {
  auto reader = open_stack(path);
  const auto frames = reader->info().frames;
  return measure_sofi_corrections(*reader, {0, frames}, settings, cpu_correlation());
}

// SOFI2 of a whole stack on the CPU reference, with the corrections or without.
std::vector<float> sofi2(const std::string& path, const SofiCorrections* corrections, std::int64_t block) {
  auto reader = open_stack(path);
  const StackInfo info = reader->info();
  SofiProblemOptions o;
  o.orders = {2};
  const SofiProblem problem = make_sofi_problem(info.width, info.height, o);
  auto engine = make_cpu_sofi_engine(problem, 128 + problem.max_lag, 2);
  SofiRunInput in;
  in.reader = reader.get();
  in.sequence = {0, 1, info.frames};
  in.end = info.frames;
  in.block = block;
  in.quiet = true;
  in.corrections = corrections;
  return finish_images(problem, run_sofi(problem, *engine, in).finished).planes[0];
}

}  // namespace

TEST_CASE("frame correction: a bilinear shift, exact on a plane, and gain about the offset") {
  const std::int64_t w = 9, h = 7;
  std::vector<float> frame(static_cast<std::size_t>(w * h));
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x) frame[static_cast<std::size_t>(y * w + x)] = 3.0f * x + 5.0f * y + 100.0f;
  const SofiFrameCorrection shift{0.25f, -0.5f, 1.0f, 0.0f};
  for (std::int64_t y = 1; y < h - 1; ++y)
    for (std::int64_t x = 0; x < w - 1; ++x)
      CHECK(sofi_math::corrected_pixel(frame.data(), w, h, x, y, shift) ==
            doctest::Approx(3.0 * (x + 0.25) + 5.0 * (y - 0.5) + 100.0).epsilon(1e-6));
  // Reads beyond the edge take the edge pixel.
  CHECK(sofi_math::corrected_pixel(frame.data(), w, h, 0, 0, SofiFrameCorrection{-2.0f, -3.0f, 1.0f, 0.0f}) == 100.0f);
  // An integer shift moves pixels exactly.
  CHECK(sofi_math::corrected_pixel(frame.data(), w, h, 2, 3, SofiFrameCorrection{2.0f, 1.0f, 1.0f, 0.0f}) ==
        frame[static_cast<std::size_t>(4 * w + 4)]);
  const SofiFrameCorrection bleach{0.0f, 0.0f, 2.0f, 100.0f};
  CHECK(sofi_math::corrected_pixel(frame.data(), w, h, 3, 2, bleach) == doctest::Approx(100.0 + 2.0 * (9 + 10)));
}

TEST_CASE("undrift: the drift of a blinking stack is recovered (dyes 0.05 px rms, quantum dots 0.2 px)") {
  TempDir dir;
  auto s = drifting_stack(3000, 2.0, -1.5, 0.6);
  // Exponential blinking (dyes): 0.05 px. Power-law quantum dots: their block means differ in
  // which emitters dominate, and overlapping emitters pull the peak (measured 0.12 px rms).
  double tolerance = 0.05;
  SUBCASE("exponential blinking") { s.blinking = "exponential"; }
  SUBCASE("power-law blinking") { tolerance = 0.2; }
  const std::string path = (dir / "drift.tif").string();
  simulate_blinking(s, path);
  SofiCorrectionSettings settings;
  settings.undrift = true;
  settings.drift_block = 200;
  const auto c = measure(path, settings);
  REQUIRE(c.drift);
  REQUIRE(c.drift->dx.size() == 3000);
  // A drift is known up to a constant (where the image is registered): the error is
  // measured after removing its mean, and the constant is checked on its own.
  std::vector<double> ex(3000), ey(3000);
  for (std::int64_t t = 0; t < 3000; ++t) {
    const DriftPx truth = blinking_drift(s, static_cast<double>(t));
    ex[static_cast<std::size_t>(t)] = c.drift->dx[static_cast<std::size_t>(t)] - truth.x;
    ey[static_cast<std::size_t>(t)] = c.drift->dy[static_cast<std::size_t>(t)] - truth.y;
  }
  const double mx = std::accumulate(ex.begin(), ex.end(), 0.0) / 3000, my = std::accumulate(ey.begin(), ey.end(), 0.0) / 3000;
  double sum2 = 0, largest = 0;
  for (std::size_t t = 0; t < 3000; ++t) {
    sum2 += (ex[t] - mx) * (ex[t] - mx) + (ey[t] - my) * (ey[t] - my);
    largest = std::max(largest, std::hypot(ex[t] - mx, ey[t] - my));
  }
  const double rms = std::sqrt(sum2 / 3000);
  INFO("rms error " << rms << " px, largest " << largest << " px, constant (" << mx << ", " << my << ") px, imposed up to "
                    << std::hypot(blinking_drift(s, 2999).x, blinking_drift(s, 2999).y) << " px");
  CHECK(rms < tolerance);
  CHECK(std::hypot(mx, my) < 0.3);  // the registration constant: the extrapolation to frame 0
  INFO("pairs' residual " << c.drift->rms_residual_px << " px rms, " << c.drift->dropped << " of " << c.drift->pairs
                          << " dropped");
  CHECK(c.drift->reliable());
  // The table the cumulant pass reads carries the same drift.
  CHECK(c.at(1500).dx == doctest::Approx(c.drift->dx[1500]).epsilon(1e-6));
  CHECK_THROWS_AS(c.at(3000), std::out_of_range);
}

TEST_CASE("undrift: the corrected SOFI2 image of a drifting stack is closer to the undrifted one") {
  TempDir dir;
  auto s = drifting_stack(2000, 3.0, 2.0, 0.0);
  const std::string drifting = (dir / "drifting.tif").string(), still = (dir / "still.tif").string();
  simulate_blinking(s, drifting);
  s.drift_x_px_per_frame = s.drift_y_px_per_frame = 0;
  simulate_blinking(s, still);  // the same emitters and blinking: the streams depend on the seed only
  SofiCorrectionSettings settings;
  settings.undrift = true;
  settings.drift_block = 250;
  const auto c = measure(drifting, settings);
  const auto reference = sofi2(still, nullptr, 500);
  const auto plain = sofi2(drifting, nullptr, 500), corrected = sofi2(drifting, &c, 500);
  const double e_plain = score_against_truth(plain, reference, 64, 64).normalized_error;
  const double e_corrected = score_against_truth(corrected, reference, 64, 64).normalized_error;
  INFO("error against the undrifted SOFI2: " << e_plain << " without, " << e_corrected << " with --undrift");
  CHECK(e_corrected < 0.5 * e_plain);
}

TEST_CASE("bleaching: the exponential fit recovers a decay and the correction flattens it") {
  SUBCASE("a noisy exponential trace") {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> noise(0.0, 2.0);
    std::vector<double> y(2000);
    for (std::size_t t = 0; t < y.size(); ++t) y[t] = 500.0 * std::exp(-static_cast<double>(t) / 700.0) + 120.0 + noise(rng);
    const BleachFit f = fit_exponential_decay(y);
    CHECK(f.decays);
    CHECK(f.tau_frames == doctest::Approx(700).epsilon(0.02));
    CHECK(f.constant == doctest::Approx(120).epsilon(0.02));
    CHECK(f.gain(0) == 1.0);
    CHECK(f.gain(1400) == doctest::Approx(620.0 / (500.0 * std::exp(-2.0) + 120.0)).epsilon(0.02));
    std::vector<double> rising(100);
    for (std::size_t t = 0; t < rising.size(); ++t) rising[t] = 100.0 + static_cast<double>(t);
    CHECK_FALSE(fit_exponential_decay(rising).decays);
  }
  SUBCASE("a bleaching blinking stack") {
    TempDir dir;
    BlinkingSettings s = drifting_stack(2000, 0, 0, 0);
    s.blinking = "exponential";
    s.mean_on_frames = 2;
    s.mean_off_frames = 6;
    s.bleach_frames = 150;  // on-time before bleaching: lifetime about 150 / 0.25 = 600 frames
    s.emitters = 400;
    const std::string path = (dir / "bleach.tif").string();
    simulate_blinking(s, path);
    SofiCorrectionSettings settings;
    settings.bleach = BleachCorrection::exponential;
    const auto c = measure(path, settings);
    REQUIRE(c.bleach);
    REQUIRE(c.bleach->decays);
    CHECK(c.bleach->tau_frames == doctest::Approx(600).epsilon(0.2));
    // The frames' mean intensity, first 200 frames against frames 1000-1200: the emitters' part
    // decayed by e^(-1000/600) ≈ 0.19 (the whole mean to about 0.85); corrected flat within 2 %.
    auto level = [&](std::int64_t a, std::int64_t b, bool corrected) {
      double sum = 0;
      for (std::int64_t t = a; t < b; ++t) sum += c.frame_mean[static_cast<std::size_t>(t)] * (corrected ? c.at(t).gain : 1.0f);
      return sum / static_cast<double>(b - a);
    };
    const double raw_ratio = level(1000, 1200, false) / level(0, 200, false);
    const double corrected_ratio = level(1000, 1200, true) / level(0, 200, true);
    INFO("late / early mean intensity: raw " << raw_ratio << ", corrected " << corrected_ratio << "; tau "
                                            << c.bleach->tau_frames);
    CHECK(raw_ratio < 0.9);
    CHECK(std::abs(corrected_ratio - 1.0) < 0.02);
  }
}

TEST_CASE("truth comparison: deterministic, and a blurred image ranks worse than a sharp one") {
  TempDir dir;
  BlinkingSettings s = drifting_stack(600, 0, 0, 0);
  s.width = s.height = 32;
  s.emitters = 25;
  auto score_run = [&](const std::string& name) {
    const std::string path = (dir / name).string();
    const auto sim = simulate_blinking(s, path);
    const auto image = sofi2(path, nullptr, 300);
    const auto truth = sofi_truth_image(sim.emitter_list, 32, 32, 1, s.psf_sigma, 2);
    return score_against_truth(image, truth, 32, 32);
  };
  const TruthScore first = score_run("a.tif"), second = score_run("b.tif");
  CHECK(first.normalized_error == second.normalized_error);
  CHECK(first.scale == second.scale);
  CHECK(first.frc_resolution_px == second.frc_resolution_px);
  CHECK(first.normalized_error < 1.0);

  // The truth itself with noise, and the same blurred to the camera PSF (the mean image's sharpness).
  const auto sim = simulate_blinking(s, (dir / "c.tif").string());
  const auto sharp_truth = sofi_truth_image(sim.emitter_list, 32, 32, 1, s.psf_sigma, 2);
  auto blurred = sofi_truth_image(sim.emitter_list, 32, 32, 1, s.psf_sigma * std::sqrt(2.0), 2);
  auto sharp = sharp_truth;
  const double top = *std::max_element(sharp.begin(), sharp.end());
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0.0, 0.02 * top);
  for (std::size_t i = 0; i < sharp.size(); ++i) {
    const double n = noise(rng);
    sharp[i] += static_cast<float>(n);
    blurred[i] += static_cast<float>(n);
  }
  const TruthScore s_sharp = score_against_truth(sharp, sharp_truth, 32, 32);
  const TruthScore s_blurred = score_against_truth(blurred, sharp_truth, 32, 32);
  INFO("sharp: error " << s_sharp.normalized_error << ", FRC " << s_sharp.frc_resolution_px << " px; blurred: error "
                       << s_blurred.normalized_error << ", FRC " << s_blurred.frc_resolution_px << " px");
  CHECK(s_blurred.normalized_error > 2 * s_sharp.normalized_error);
  CHECK(s_blurred.frc_resolution_px > s_sharp.frc_resolution_px);
}

TEST_CASE("undrift: a stack without structure is flagged unreliable, and sofi warns in one line") {
  TempDir dir;
  // Pure noise: every block mean is a different random image, so no two blocks share a peak.
  const std::string path = (dir / "noise.tif").string();
  {
    ImageMeta meta;
    meta.width = meta.height = 64, meta.frames = 1200, meta.type = PixelType::u16;
    auto writer = create_image_writer(path, meta);
    std::mt19937_64 rng(5);
    std::uniform_int_distribution<int> value(100, 1100);
    std::vector<std::uint16_t> frame(64 * 64);
    for (std::int64_t t = 0; t < meta.frames; ++t) {
      for (auto& v : frame) v = static_cast<std::uint16_t>(value(rng));
      writer->write(frame.data(), 1);
    }
    writer->close();
  }
  SofiCorrectionSettings settings;
  settings.undrift = true;
  settings.drift_block = 100;
  const auto c = measure(path, settings);
  REQUIRE(c.drift);
  INFO("pairs' residual " << c.drift->rms_residual_px << " px rms, " << c.drift->dropped << " of " << c.drift->pairs
                          << " dropped");
  CHECK_FALSE(c.drift->reliable());

  const auto r = nanoscopy::test::run_command(nanoscopy::test::shell_quote(nanoscopy::test::app_path("sofi")) +
                                              " --quiet --undrift --drift-block 100 --device cpu " +
                                              nanoscopy::test::shell_quote(path) + " -o " +
                                              nanoscopy::test::shell_quote((dir / "s.tif").string()));
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("sofi: warning: " + path + ": --undrift found no consistent registration") != std::string::npos);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);  // --quiet: the warning alone, one line
}

TEST_CASE("first pass: too few drift blocks and a bad bleach name are one-line errors") {
  TempDir dir;
  const auto s = drifting_stack(300, 0, 0, 0);
  const std::string path = (dir / "short.tif").string();
  simulate_blinking(s, path);
  SofiCorrectionSettings settings;
  settings.undrift = true;
  settings.drift_block = 200;
  CHECK_THROWS_AS(measure(path, settings), InputError);
  CHECK_THROWS_AS(parse_bleach_correction("linear"), UsageError);
  CHECK(parse_bleach_correction("exponential") == BleachCorrection::exponential);
}
