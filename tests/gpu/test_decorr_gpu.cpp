// The CUDA decorrelation engine against the CPU reference on the same seeded
// random images (structure plus noise), square and not, odd and even, from the
// 32x32 minimum up. The CPU engine works in double (FFTW), the GPU in float
// (cuFFT, float histograms summed in block order), and a coefficient within a
// float rounding of a radius-bin edge may fall into the neighbouring bin. So:
// prefix sums (what the curves are made of) agree to 2e-4 relative plus a couple
// of coefficients moved to a neighbouring bin, the powers to 1e-4, the curves
// (truncated to 3 decimals like ImDecorr) to 0.0015 plus 2 / (coefficients)
// (0.004 at 32x32, 0.0015 from 256^2 up); nothing is NaN. On images with
// structure (blurred points plus noise, bench decorr's) kcMax agrees to one
// radius step of the coarse grid (1/49) and A0 to 0.002.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/bench/bench_decorr.hpp"
#include "nanoscopy/core/device.hpp"
#include "nanoscopy/frc/decorr.hpp"

using namespace nanoscopy;

namespace {

constexpr double prefix_tol = 2e-4, power_tol = 1e-4, curve_tol = 0.0015, kc_tol = 1.0 / 49 + 1e-9, a0_tol = 0.002;

std::vector<float> random_image(std::int64_t w, std::int64_t h, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::normal_distribution<float> noise(0.0f, 3.0f);
  std::vector<float> v(static_cast<std::size_t>(w * h));
  // A smooth random structure (a sum of a few random waves) plus white noise, on an offset.
  const int waves = 12;
  std::vector<float> fx(waves), fy(waves), ph(waves);
  for (int i = 0; i < waves; ++i) fx[i] = 0.4f * u(rng), fy[i] = 0.4f * u(rng), ph[i] = 6.28f * u(rng);
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x) {
      float s = 100.0f;
      for (int i = 0; i < waves; ++i) s += 10.0f * std::cos(6.2831853f * (fx[i] * x + fy[i] * y) + ph[i]);
      v[static_cast<std::size_t>(y * w + x)] = s + noise(rng);
    }
  return v;
}

// Returns the number of coefficients (for the curves' tolerance).
double check_sums(const DecorrSums& c, const DecorrSums& g, int nr, int nf) {
  REQUIRE(g.count.size() == c.count.size());
  REQUIRE(g.amplitude.size() == c.amplitude.size());
  REQUIRE(g.power.size() == c.power.size());
  double n_c = 0, n_g = 0, total = 0;
  for (double v : c.count) total += v;
  for (int k = 0; k < nr; ++k) {
    n_c += c.count[static_cast<std::size_t>(k)];
    n_g += g.count[static_cast<std::size_t>(k)];
    CHECK(std::isfinite(n_g));
    CHECK(std::abs(n_g - n_c) <= prefix_tol * total + 2);
  }
  for (int f = 0; f < nf; ++f) {
    INFO("filter " << f);
    CHECK(std::isfinite(g.power[static_cast<std::size_t>(f)]));
    CHECK(g.power[static_cast<std::size_t>(f)] ==
          doctest::Approx(c.power[static_cast<std::size_t>(f)]).epsilon(power_tol));
    double a_c = 0, a_g = 0, a_total = 0;
    for (int k = 0; k < nr; ++k) a_total += c.amplitude[static_cast<std::size_t>(f * nr + k)];
    for (int k = 0; k < nr; ++k) {
      a_c += c.amplitude[static_cast<std::size_t>(f * nr + k)];
      a_g += g.amplitude[static_cast<std::size_t>(f * nr + k)];
      CHECK(std::isfinite(a_g));
      CHECK(std::abs(a_g - a_c) <= prefix_tol * a_total + 10 * a_total / total);
    }
  }
  return total;
}

}  // namespace

TEST_CASE("CUDA decorrelation sums and curves match the CPU reference") {
  const Device gpu = select_device(DeviceRequest::parse("cuda"), true);
  const std::pair<std::int64_t, std::int64_t> sizes[] = {{32, 32},   {33, 47},   {64, 48},     {256, 256},
                                                         {255, 300}, {512, 128}, {1024, 1024}, {2048, 2048}};
  std::uint64_t seed = 1;
  for (auto [w, h] : sizes) {
    const std::string what = std::to_string(w) + "x" + std::to_string(h);  // INFO cannot capture a binding (Clang 14)
    INFO(what);
    const auto image = random_image(w, h, seed++);
    DecorrGeometry g;
    g.width = w;
    g.height = h;
    auto cpu = make_cpu_decorr_engine(g);
    auto cuda = make_decorr_engine(gpu, g);
    CHECK(cuda->name().rfind("cuda:", 0) == 0);
    cpu->upload(image);
    cuda->upload(image);
    cpu->transform();
    cuda->transform();
    // One pass of every kind: d0 alone; 11 filters on linspace(0, 1, 50); 10 filters on a refined grid.
    DecorrPass d0;
    d0.g = {0.0};
    DecorrPass coarse;
    coarse.g = {static_cast<double>(h) / 4, 20, 10, 5, 2.5, 1.2, 0.8, 0.5, 0.3, 0.2, 0.15};
    DecorrPass fine;
    fine.r_min = 0.27;
    fine.r_max = 0.69;
    fine.nr = 64;
    fine.g = {3, 2.7, 2.4, 2.1, 1.9, 1.7, 1.5, 1.3, 1.2, 1.1};
    for (const DecorrPass* p : {&d0, &coarse, &fine}) {
      const int nf = static_cast<int>(p->g.size());
      const DecorrSums sc = cpu->sums(*p), sg = cuda->sums(*p);
      const double coefficients = check_sums(sc, sg, p->nr, nf);
      for (int f = 0; f < nf; ++f) {
        const auto dc = decorr_curve(sc, f, p->nr), dg = decorr_curve(sg, f, p->nr);
        double worst = 0;
        for (std::size_t k = 0; k < dc.size(); ++k) worst = std::max(worst, std::abs(dg[k] - dc[k]));
        CHECK(worst <= curve_tol + 2 / coefficients);
      }
    }
  }
}

TEST_CASE("CUDA decorrelation: kcMax and A0 as on the CPU, frame after frame on one engine") {
  const Device gpu = select_device(DeviceRequest::parse("cuda"), true);
  const std::pair<std::int64_t, std::int64_t> sizes[] = {{64, 64}, {256, 256}, {300, 256}, {1024, 1024}, {2048, 2048}};
  for (auto [w, h] : sizes) {
    DecorrGeometry g;
    g.width = w;
    g.height = h;
    auto cuda = make_decorr_engine(gpu, g);
    auto cpu = make_cpu_decorr_engine(g);
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
      const double sigma = seed == 1 ? 1.5 : 3.0;
      const auto image = decorr_with_noise(decorr_blurred_points(w, h, sigma, seed), 2.0, seed + 10);
      const DecorrResult rc = compute_decorr(*cpu, image, DecorrSettings{});
      const DecorrResult rg = compute_decorr(*cuda, image, DecorrSettings{});
      MESSAGE(w << "x" << h << " sigma " << sigma << ": kcMax cpu " << rc.kc_max << " cuda " << rg.kc_max << ", A0 cpu "
                << rc.a0 << " cuda " << rg.a0);
      CHECK(rc.kc_max > 0);
      CHECK(std::abs(rg.kc_max - rc.kc_max) <= kc_tol);
      CHECK(std::abs(rg.a0 - rc.a0) <= a0_tol);
    }
  }
}
