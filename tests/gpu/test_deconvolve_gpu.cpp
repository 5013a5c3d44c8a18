// Balanced SOFI's Richardson-Lucy on the GPU against the CPU reference
// (nanoscopy/sofi/deconvolve_engine.hpp) on random non-negative images with
// bright spots, dark (zero) regions and odd sizes. Both sum in the same order
// without fused multiply-adds and divide exactly (__fdiv_rn), so the results
// should be bit-identical; the stated tolerance is 1e-5 of the image's largest
// value per pixel, room for one float rounding carried through the iterations.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/device.hpp"
#include "nanoscopy/sofi/deconvolve.hpp"

using namespace nanoscopy;

namespace {

std::vector<float> random_image(std::int64_t w, std::int64_t h, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(w * h));
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x) {
      float value = u(rng) < 0.02f ? 1000.0f * u(rng) : 5.0f * u(rng);
      if (x < w / 4 && y < h / 3) value = 0.0f;  // a dark corner: A x below the floor
      v[static_cast<std::size_t>(y * w + x)] = value;
    }
  return v;
}

}  // namespace

TEST_CASE("Richardson-Lucy on cuda:0 equals the CPU reference") {
  const Device gpu = select_device(DeviceRequest::parse("cuda"), true);
  auto engine = make_deconvolve_engine(gpu);
  struct Case {
    std::int64_t w, h;
    double sigma;
    int order, iterations;
  };
  const Case cases[] = {{64, 64, 1.5, 2, 20}, {97, 53, 2.0, 3, 20}, {128, 40, 2.5, 4, 7},
                        {512, 512, 2.0, 2, 20}, {33, 300, 4.0, 2, 3}, {5, 5, 1.0, 4, 10}};
  std::uint64_t seed = 1;
  for (const auto& c : cases) {
    CAPTURE(c.w);
    CAPTURE(c.h);
    CAPTURE(c.order);
    const PsfKernel k = order_psf_kernel(c.sigma, c.order);
    auto cpu = random_image(c.w, c.h, seed++);
    auto cuda = cpu;
    richardson_lucy(cpu, c.w, c.h, k, c.iterations);
    richardson_lucy(cuda, c.w, c.h, k, c.iterations, *engine);
    const float peak = *std::max_element(cpu.begin(), cpu.end());
    REQUIRE(peak > 0);
    double worst = 0;
    std::size_t differing = 0;
    for (std::size_t i = 0; i < cpu.size(); ++i) {
      worst = std::max(worst, std::abs(static_cast<double>(cpu[i]) - cuda[i]));
      differing += cpu[i] != cuda[i];
    }
    MESSAGE("RL " << c.w << "x" << c.h << " order " << c.order << ": " << differing << " pixels differ, largest "
                  << worst / peak << " of the peak");
    CHECK(worst <= 1e-5 * peak);
  }
}

TEST_CASE("Richardson-Lucy on cuda:0 leaves an all-zero image alone and rejects negative pixels") {
  const Device gpu = select_device(DeviceRequest::parse("cuda"), true);
  auto engine = make_deconvolve_engine(gpu);
  const PsfKernel k = order_psf_kernel(1.5, 2);
  std::vector<float> zero(100, 0.0f);
  richardson_lucy(zero, 10, 10, k, 5, *engine);
  CHECK(std::all_of(zero.begin(), zero.end(), [](float v) { return v == 0.0f; }));
  std::vector<float> bad(100, 1.0f);
  bad[7] = -1.0f;
  CHECK_THROWS(richardson_lucy(bad, 10, 10, k, 5, *engine));
}
