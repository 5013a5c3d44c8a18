// The CUDA FRC engine against the CPU reference on the same seeded random
// pairs, square and not, odd and even. Both window in double with the same
// host-computed window and put every coefficient in the same ring
// (frc_math.hpp, integer arithmetic); they differ only in the FFT (cuFFT vs
// FFTW, both double) and the order of the ring sums (atomics), so the FRC
// values agree to 1e-6 absolute (in practice ~1e-12), the power sums to 1e-9
// relative, the pixel counts exactly; no value may be NaN.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/device.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/frc/frc.hpp"

using namespace nanoscopy;

namespace {

constexpr double frc_tol = 1e-6;

std::vector<float> noisy(const std::vector<float>& base, double sigma, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g(0.0f, static_cast<float>(sigma));
  std::vector<float> v = base;
  for (float& x : v) x += g(rng);
  return v;
}

}  // namespace

TEST_CASE("CUDA FRC ring sums match the CPU reference") {
  const Device gpu = select_device(DeviceRequest::parse("cuda"), true);
  const std::pair<std::int64_t, std::int64_t> sizes[] = {{2, 2},     {7, 5},     {24, 24},   {25, 31},    {64, 48},
                                                         {257, 257}, {256, 300}, {511, 128}, {1024, 1024}};
  std::uint64_t seed = 1;
  for (auto [w, h] : sizes) {
    const std::string what = std::to_string(w) + "x" + std::to_string(h);  // INFO cannot capture a binding (Clang 14)
    INFO(what);
    std::mt19937_64 rng(seed++);
    std::uniform_real_distribution<float> u(0.0f, 100.0f);
    std::vector<float> base(static_cast<std::size_t>(w * h));
    for (float& x : base) x = u(rng);
    const auto a = noisy(base, 20.0, seed * 7), b = noisy(base, 20.0, seed * 13);
    FrcGeometry g;
    g.width = w;
    g.height = h;
    auto cpu = make_cpu_frc_engine(g);
    auto cuda = make_frc_engine(gpu, g);
    CHECK(cuda->name().rfind("cuda:", 0) == 0);
    const FrcRingSums sc = cpu->ring_sums(a, b), sg = cuda->ring_sums(a, b);
    REQUIRE(sg.cross.size() == sc.cross.size());
    const FrcResult rc = frc_from_sums(sc, g, FrcThreshold{}), rg = frc_from_sums(sg, g, FrcThreshold{});
    double worst = 0;
    for (std::size_t r = 0; r < sc.cross.size(); ++r) {
      INFO("ring " << r);
      CHECK(std::isfinite(sg.cross[r]));
      CHECK(std::isfinite(rg.curve[r].frc));
      CHECK(sg.pixels[r] == sc.pixels[r]);
      CHECK(sg.radius[r] == sc.radius[r]);  // the same host values: each ring at its mean radius
      CHECK(rg.curve[r].frequency == rc.curve[r].frequency);
      CHECK(sg.power1[r] == doctest::Approx(sc.power1[r]).epsilon(1e-9));
      CHECK(sg.power2[r] == doctest::Approx(sc.power2[r]).epsilon(1e-9));
      worst = std::max(worst, std::abs(rg.curve[r].frc - rc.curve[r].frc));
    }
    CHECK(worst <= frc_tol);
    CHECK(rg.crossing.status == rc.crossing.status);
    CHECK(rg.crossing.ring == doctest::Approx(rc.crossing.ring).epsilon(1e-6));
    CHECK(rg.crossing.frequency == doctest::Approx(rc.crossing.frequency).epsilon(1e-6));
    CHECK(rg.crossing.resolution_px == doctest::Approx(rc.crossing.resolution_px).epsilon(1e-6));
    // A second pair through the same plan (buffers reused) matches too.
    const FrcRingSums again = cuda->ring_sums(b, a);
    CHECK(again.cross[0] == doctest::Approx(sg.cross[0]).epsilon(1e-12));
  }
}

TEST_CASE("CUDA FRC of an image with itself is 1; wrong sizes are InputErrors") {
  const Device gpu = select_device(DeviceRequest::parse("cuda"), true);
  FrcGeometry g;
  g.width = 100;
  g.height = 60;
  std::mt19937_64 rng(3);
  std::normal_distribution<float> n(5.0f, 1.0f);
  std::vector<float> a(6000);
  for (float& x : a) x = n(rng);
  auto cuda = make_frc_engine(gpu, g);
  const FrcResult r = compute_frc(*cuda, a, a, FrcThreshold{});
  for (const FrcPoint& p : r.curve) CHECK(p.frc == doctest::Approx(1.0).epsilon(1e-12));
  std::vector<float> small(10);
  CHECK_THROWS_AS(cuda->ring_sums(small, a), InputError);
}
