// The CUDA eSRRF engine against the CPU reference engine on the same random
// stacks, through the same run (run_esrrf: chunks, time points, finishing). Both
// evaluate esrrf_math.hpp's functions in float in the same order per pixel; nvcc
// contracts multiply-adds and its sqrtf/powf round differently in the last bit,
// so each time point's image meets max |gpu - cpu| <= 1e-5 max |cpu| (issue 28).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/device.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/sofi/esrrf.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;

namespace {

Device gpu_device() { return select_device(DeviceRequest::parse("cuda"), true); }

// Background plus blinking Gaussian spots and noise; integers for a uint16 stack.
void write_random_stack(const std::string& path, std::int64_t w, std::int64_t h, std::int64_t frames, bool u16,
                        std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> ux(1.0, static_cast<double>(w) - 1), uy(1.0, static_cast<double>(h) - 1);
  std::vector<std::pair<double, double>> spots;
  for (int i = 0; i < 12; ++i) spots.emplace_back(ux(rng), uy(rng));
  std::bernoulli_distribution on(0.35);
  std::normal_distribution<double> noise(0.0, 8.0);
  ImageMeta meta;
  meta.width = w, meta.height = h, meta.frames = frames, meta.type = u16 ? PixelType::u16 : PixelType::f32;
  auto writer = create_image_writer(path, meta);
  std::vector<float> f(static_cast<std::size_t>(w * h));
  std::vector<std::uint16_t> g(f.size());
  for (std::int64_t t = 0; t < frames; ++t) {
    for (std::int64_t y = 0; y < h; ++y)
      for (std::int64_t x = 0; x < w; ++x) {
        double v = 200 + noise(rng);
        f[static_cast<std::size_t>(y * w + x)] = static_cast<float>(v);
      }
    for (const auto& [cx, cy] : spots) {
      if (!on(rng)) continue;
      for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) {
          const double dx = x + 0.5 - cx, dy = y + 0.5 - cy;
          f[static_cast<std::size_t>(y * w + x)] += static_cast<float>(1500 * std::exp(-(dx * dx + dy * dy) / 4.5));
        }
    }
    if (u16) {
      for (std::size_t i = 0; i < f.size(); ++i) g[i] = static_cast<std::uint16_t>(std::clamp(std::lround(f[i]), 0L, 65535L));
      writer->write(g.data(), 1);
    } else {
      writer->write(f.data(), 1);
    }
  }
  writer->close();
}

std::vector<std::vector<float>> run_on(const Device& device, const std::string& path, const EsrrfSettings& s,
                                       const std::vector<EsrrfSlot>& tps, std::int64_t chunk) {
  auto reader = open_stack(path);
  const auto& info = reader->info();
  auto engine = make_esrrf_engine(device, {info.width, info.height, esrrf_slots_needed(tps, chunk)}, s, chunk);
  EsrrfRunInput in;
  in.reader = reader.get();
  in.chunk_frames = chunk;
  in.time_points = tps;
  in.quiet = true;
  std::vector<std::vector<float>> out(tps.size());
  run_esrrf(*engine, s, in, [&](EsrrfTimePoint& tp) { out[tp.index] = tp.image; });
  return out;
}

}  // namespace

TEST_CASE("eSRRF: CUDA engine matches the CPU reference on random stacks (1e-5 of the image maximum)") {
  const Device gpu = gpu_device();
  Device cpu;
  cpu.kind = DeviceKind::cpu;
  cpu.cpu_threads = 4;
  test::TempDir dir;
  struct Case {
    std::int64_t w, h, frames;
    bool u16;
    int m;
    double radius, sensitivity;
    esrrf_math::Temporal temporal;
    std::int64_t fpt, step, chunk;
  };
  const std::vector<Case> cases{
      {37, 29, 20, true, 5, 1.5, 1, esrrf_math::Temporal::avg, 0, 0, 7},
      {64, 64, 24, false, 4, 2.0, 2, esrrf_math::Temporal::var, 0, 0, 64},
      {33, 41, 30, true, 3, 1.0, 1, esrrf_math::Temporal::tac2, 10, 4, 5},
      {16, 16, 9, false, 2, 1.25, 3, esrrf_math::Temporal::tac2, 0, 0, 2},
      {128, 96, 12, true, 5, 1.5, 1, esrrf_math::Temporal::avg, 6, 3, 4},
  };
  std::uint64_t seed = 100;
  for (const auto& c : cases) {
    const std::string path = (dir / ("s" + std::to_string(seed) + ".tif")).string();
    write_random_stack(path, c.w, c.h, c.frames, c.u16, seed++);
    EsrrfSettings s;
    s.magnification = c.m;
    s.radius = c.radius;
    s.sensitivity = c.sensitivity;
    s.temporal = c.temporal;
    const auto tps = esrrf_time_points(0, c.frames, c.fpt, c.step);
    const auto want = run_on(cpu, path, s, tps, c.chunk);
    const auto got = run_on(gpu, path, s, tps, c.chunk);
    REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < want.size(); ++k) {
      CAPTURE(c.w);
      CAPTURE(c.m);
      CAPTURE(k);
      float top = 0;
      for (const float v : want[k]) top = std::max(top, std::abs(v));
      REQUIRE(top > 0);
      test::check_gpu_close("esrrf image", got[k], want[k], 1e-5, 0.0);
    }
  }
}

TEST_CASE("eSRRF: the GPU engine's chunks are bounded by its memory share, not by the stack") {
  const Device gpu = gpu_device();
  EsrrfSettings s;
  auto engine = make_esrrf_engine(gpu, {512, 512, 1}, s, 1 << 20);
  CHECK(engine->chunk_capacity() >= 1);
  CHECK(engine->chunk_capacity() < (1 << 20));
}
