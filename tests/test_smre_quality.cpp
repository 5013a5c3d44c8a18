// SMRE restores the SMRE paper's test case: camera.png (scikit-image, CC0,
// 512x512) blurred with sigma_PSF = 4 px plus Gaussian noise. The full table
// (noise 1, 3, 10; ICD and exact; to convergence) is `bench smre`, run on the GPU
// and recorded in docs/benchmarks.md; here the CPU reference must improve on the
// measurement, meet its constraints, and be reproducible.
#include <doctest/doctest.h>

#include <filesystem>
#include <vector>

#include "nanoscopy/core/device.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/smre/cli.hpp"
#include "nanoscopy/smre/runner.hpp"
#include "nanoscopy/smre/simulate.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using nanoscopy::test::sanitizer_run;

namespace {
const char* kCamera = "/usr/lib/python3/dist-packages/skimage/data/camera.png";
const int kCropIterations = 100;
}

// The full tier (scripts/test --full): the whole 512x512 image to 400 iterations, minutes on two cores.
TEST_CASE("camera.png, sigma_PSF 4 px, noise 3 and 10: ICD (tv) restores it closer to the truth than the measurement" *
          doctest::test_suite("full")) {
  if (!std::filesystem::exists(kCamera)) {
    MESSAGE("python3-skimage is not installed (scripts/install-deps installs it): camera.png test skipped");
    return;
  }
  auto reader = open_stack(kCamera);
  const std::int64_t w = reader->info().width, h = reader->info().height;
  REQUIRE(w == 512);
  std::vector<float> truth(static_cast<std::size_t>(w * h));
  reader->read_float(0, 1, truth.data());
  Device cpu;
  cpu.cpu_threads = 2;
  // Under the sanitizers: noise 10 only, 80 iterations (tests/support: sanitizer_run()).
  const std::vector<double> noises = sanitizer_run() ? std::vector<double>{10.0} : std::vector<double>{3.0, 10.0};
  const int iterations = sanitizer_run() ? 80 : 400;
  for (double noise : noises) {
    auto measured = truth;
    blur_and_add_noise(measured, w, h, 4.0, noise, 1);
    SmreRunOptions o;
    o.settings.psf_sigma = 4.0;
    o.settings.noise_sigma = noise;
    o.settings.projection = Projection::icd;
    o.settings.regularizer = Regularizer::tv;
    o.settings.weights = WeightMethod::closed_form;
    o.settings.max_iterations = iterations;
    o.settings.report_interval = 100;
    o.quiet = true;
    SmreRunner runner(w, h, o, smre_engine_factory(cpu));
    double last_ratio = 0;
    runner.on_report = [&](const ReportLine& r) { last_ratio = r.max_ratio; };
    auto x = measured;
    runner.run(x, 0);
    const double quality = l2_distance(x, truth) / l2_distance(measured, truth);
    MESSAGE("noise " << noise << ": |x - x*| / |I - x*| = " << quality << " after " << iterations << " iterations, max constraint ratio "
                     << last_ratio);
    CHECK(quality < 0.9);
    CHECK(last_ratio < 1.05);
  }
}

// The default tier: the same restoration on a 128x128 crop (the man and his camera) at noise 10, fewer iterations.
TEST_CASE("a 128x128 crop of camera.png, sigma_PSF 4 px, noise 10: ICD (tv) improves on the measurement") {
  if (!std::filesystem::exists(kCamera)) {
    MESSAGE("python3-skimage is not installed (scripts/install-deps installs it): camera.png test skipped");
    return;
  }
  auto reader = open_stack(kCamera);
  const std::int64_t w = reader->info().width;
  std::vector<float> whole(static_cast<std::size_t>(w * reader->info().height));
  reader->read_float(0, 1, whole.data());
  const std::int64_t n = 128, x0 = 192, y0 = 64;
  std::vector<float> truth(static_cast<std::size_t>(n * n));
  for (std::int64_t y = 0; y < n; ++y)
    for (std::int64_t x = 0; x < n; ++x)
      truth[static_cast<std::size_t>(y * n + x)] = whole[static_cast<std::size_t>((y0 + y) * w + x0 + x)];
  Device cpu;
  cpu.cpu_threads = 2;
  auto measured = truth;
  blur_and_add_noise(measured, n, n, 4.0, 10.0, 1);
  SmreRunOptions o;
  o.settings.psf_sigma = 4.0;
  o.settings.noise_sigma = 10.0;
  o.settings.projection = Projection::icd;
  o.settings.regularizer = Regularizer::tv;
  o.settings.weights = WeightMethod::closed_form;
  o.settings.max_iterations = kCropIterations;
  o.settings.report_interval = 20;
  o.quiet = true;
  SmreRunner runner(n, n, o, smre_engine_factory(cpu));
  double last_ratio = 0;
  runner.on_report = [&](const ReportLine& r) { last_ratio = r.max_ratio; };
  auto x = measured;
  runner.run(x, 0);
  const double quality = l2_distance(x, truth) / l2_distance(measured, truth);
  MESSAGE("crop, noise 10: |x - x*| / |I - x*| = " << quality << ", max constraint ratio " << last_ratio);
  CHECK(quality < 0.9);
  CHECK(last_ratio < 1.05);
}
