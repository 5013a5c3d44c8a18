// sofi --undrift / --bleach-correction exponential on the GPU (issue 19): the
// CUDA engine's correction kernel (kernels/sofi/correction_kernels.cu) against
// the CPU engine's, through the runner on a simulated drifting, bleaching
// stack. Both apply frame_correction.hpp with explicit fmaf only, so the
// corrected frames are bit-identical; what remains is the cumulant sums'
// summation order, bounded as in test_sofi_gpu.cpp: max |gpu - cpu| <= 1e-9
// max |cpu| per plane and for the mean image.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/device.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/sim/blinking.hpp"
#include "nanoscopy/sofi/corrections.hpp"
#include "nanoscopy/sofi/runner.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;

namespace {

constexpr double kRelTol = 1e-9;

// The planes are float32 images of double sums: allow one float rounding besides.
void check_close(const std::string& what, std::span<const float> gpu, std::span<const float> cpu) {
  test::check_gpu_close(what, gpu, cpu, std::max(kRelTol, 1.2e-7), 1e-300);
}

SofiImages run(const std::string& path, const SofiProblem& problem, const Device& device,
               const SofiCorrections& corrections, bool float_frames, std::int64_t chunk) {
  auto reader = open_stack(path);
  auto engine = make_sofi_engine(device, problem, chunk + problem.max_lag);
  SofiRunInput in;
  in.reader = reader.get();
  in.sequence = {0, 1, reader->info().frames};
  in.end = in.sequence.count;
  in.block = 300;
  in.quiet = true;
  in.corrections = &corrections;
  // An identity filter makes the runner hand float32 frames (the kernel's other source type).
  if (float_frames) in.filter = [](std::span<float>, std::int64_t, std::int64_t) {};
  return finish_images(problem, run_sofi(problem, *engine, in).finished);
}

}  // namespace

TEST_CASE("CUDA SOFI with per-frame corrections (undrift, exponential bleaching) equals the CPU reference") {
  test::TempDir dir;
  BlinkingSettings s;
  s.frames = test::gpu_sanitizer_run() ? 400 : 1200;
  s.width = 61;  // odd: no two-pixel loads on the auto path
  s.height = 48;
  s.emitters = 80;
  s.blinking = "exponential";
  s.bleach_frames = 200;
  s.drift_x_px_per_frame = 2.5 / static_cast<double>(s.frames);
  s.drift_y_px_per_frame = -1.7 / static_cast<double>(s.frames);
  s.drift_wobble_px = 0.4;
  s.seed = 1919;
  const std::string path = (dir / "drift_bleach.tif").string();
  simulate_blinking(s, path);

  SofiCorrectionSettings settings;
  settings.undrift = true;
  settings.drift_block = 100;
  settings.bleach = BleachCorrection::exponential;
  auto reader = open_stack(path);
  const auto corrections =
      measure_sofi_corrections(*reader, {0, s.frames}, settings, [](const CorrelationGeometry& g) {
        return make_cpu_correlation_engine(g, 2);
      });
  REQUIRE(corrections.drift);
  REQUIRE(corrections.bleach);

  const Device gpu = select_device(DeviceRequest::parse("cuda"), true);
  Device cpu;
  cpu.cpu_threads = 8;
  for (const bool cross : {false, true}) {
    SofiProblemOptions o;
    o.orders = cross ? std::vector<int>{2, 3} : std::vector<int>{2, 3, 4};
    o.cross = cross;
    const SofiProblem problem = make_sofi_problem(s.width, s.height, o);
    for (const bool float_frames : {false, true})
      for (const std::int64_t chunk : {std::int64_t{37}, std::int64_t{256}}) {
        const std::string what = problem.describe() + (float_frames ? ", float32 frames" : ", uint16 frames") +
                                 ", chunks of " + std::to_string(chunk);
        INFO(what);
        const SofiImages c = run(path, problem, cpu, corrections, float_frames, chunk);
        const SofiImages g = run(path, problem, gpu, corrections, float_frames, chunk);
        REQUIRE(g.planes.size() == c.planes.size());
        for (std::size_t p = 0; p < c.planes.size(); ++p) check_close(problem.labels[p], g.planes[p], c.planes[p]);
        check_close("mean", g.mean, c.mean);
      }
  }
}
