// The CUDA SMRE engine against the CPU reference engine on the same frames.
// Both run engine.hpp's iteration with smre_math.hpp's per-pixel math, but the
// GPU sums in other orders (tree reductions, column-then-row square sums),
// contracts multiply-adds and uses fast-math division and square roots, so
// the results agree to float rounding carried through the iterations:
// max |gpu - cpu| <= 1e-3 max |cpu| for x and eps; c1 and c2 to 1e-3
// relative (floor 1e-3 sigma^2); step, a difference of consecutive iterates,
// to 1e-2 relative (floor 1e-3 sigma); Dykstra sweep counts within 2. Dykstra
// runs to a tight tolerance (1e-4 sigma) here so that a sweep more or less (a
// stop decided on a near-tie) moves eps by much less than the tolerance.
// Dykstra is warm-started across iterations (the default,
// SmreSettings::dykstra_warm_start) unless a test says otherwise; the
// comparisons also run once with cold starts.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <chrono>
#include <thread>
#include <vector>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/device.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/smre/engine.hpp"
#include "nanoscopy/smre/psf.hpp"
#include "nanoscopy/smre/runner.hpp"
#include "nanoscopy/smre/weights.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;

namespace {

constexpr double rel_tol = 1e-3;

Device gpu_device() { return select_device(DeviceRequest::parse("cuda"), true); }

int cpu_threads() { return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u)); }

SmreProblem problem_for(std::int64_t w, std::int64_t h, Projection projection, Regularizer reg, int icd_sweeps = 0,
                        bool warm_start = true) {
  SmreSettings s;
  s.dykstra_warm_start = warm_start;
  s.psf_sigma = 1.5;
  s.projection = projection;
  s.regularizer = reg;
  s.mr_depth = 5;
  s.icd_sweeps = icd_sweeps;
  s.dykstra_tolerance = 1e-4;
  s.dykstra_max_sweeps = 100;
  s.lambda = reg == Regularizer::l1 ? 0.5 : 1.0;
  s.tv_iterations = 10;
  s.weights = WeightMethod::closed_form;
  WeightOptions o;
  o.method = WeightMethod::closed_form;
  o.coverage = 0.9;
  o.use_cache = false;
  return make_smre_problem(w, h, s, o);
}

// `count` frames: a background plus random blobs, blurred by the PSF, plus
// Gaussian noise of sigma[f] per frame.
std::vector<float> test_frames(const SmreProblem& p, std::span<const double> sigma, std::uint64_t seed) {
  const std::int64_t w = p.width, h = p.height, n = p.pixels();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> ux(0.0, static_cast<double>(w)), uy(0.0, static_cast<double>(h));
  std::uniform_real_distribution<double> amp(20.0, 200.0);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<float> frames(static_cast<std::size_t>(n) * sigma.size());
  std::vector<float> truth(static_cast<std::size_t>(n)), blurred(static_cast<std::size_t>(n)), scratch;
  for (std::size_t f = 0; f < sigma.size(); ++f) {
    std::fill(truth.begin(), truth.end(), 10.0f);
    for (int b = 0; b < 12; ++b) {
      const double cx = ux(rng), cy = uy(rng), a = amp(rng);
      const auto lo = [](double c) { return std::max<std::int64_t>(0, static_cast<std::int64_t>(c) - 12); };
      const auto hi = [](double c, std::int64_t side) { return std::min<std::int64_t>(side, static_cast<std::int64_t>(c) + 13); };
      for (std::int64_t y = lo(cy); y < hi(cy, h); ++y)
        for (std::int64_t x = lo(cx); x < hi(cx, w); ++x) {
          const double d2 = (static_cast<double>(x) - cx) * (static_cast<double>(x) - cx) +
                            (static_cast<double>(y) - cy) * (static_cast<double>(y) - cy);
          truth[static_cast<std::size_t>(y * w + x)] += static_cast<float>(a * std::exp(-d2 / 8.0));
        }
    }
    apply_psf(p.psf, truth, blurred, w, h, scratch);
    for (std::int64_t i = 0; i < n; ++i)
      frames[f * static_cast<std::size_t>(n) + static_cast<std::size_t>(i)] =
          blurred[static_cast<std::size_t>(i)] + static_cast<float>(sigma[f] * noise(rng));
  }
  return frames;
}

std::span<const float> frame_of(const std::vector<float>& all, std::int64_t n, std::size_t f) {
  return std::span<const float>(all).subspan(f * static_cast<std::size_t>(n), static_cast<std::size_t>(n));
}

// max |gpu - cpu| <= rel_tol max |cpu| (floor: `scale`), every gpu value finite.
void check_close(const std::string& what, std::span<const float> gpu, std::span<const float> cpu, double scale) {
  test::check_gpu_close(what, gpu, cpu, rel_tol, scale);
}

// |gpu - cpu| <= rel max(|cpu|, floor); returns that relative difference.
double check_stat(const std::string& what, double gpu, double cpu, double floor, double rel = rel_tol) {
  const double d = std::fabs(gpu - cpu) / std::max(std::fabs(cpu), floor);
  INFO(what << ": gpu " << gpu << ", cpu " << cpu);
  CHECK(std::isfinite(gpu));
  CHECK(d <= rel);
  return d;
}

struct Harness {
  SmreProblem p;
  std::vector<double> sigma;
  std::vector<float> frames;
  std::unique_ptr<SmreEngine> gpu;
  std::vector<std::unique_ptr<SmreEngine>> cpu;  // one per frame (capacity 1)
  int sweep_mismatches = 0, large_sweep_mismatches = 0, frame_iterations = 0;
  double worst_c = 0, worst_step = 0;  // largest relative differences seen

  Harness(SmreProblem problem, std::vector<double> sigmas, std::uint64_t seed)
      : p(std::move(problem)), sigma(std::move(sigmas)) {
    frames = test_frames(p, sigma, seed);
    gpu = make_smre_engine(gpu_device(), p, 8);
    REQUIRE(gpu->capacity() >= static_cast<std::int64_t>(sigma.size()));
    gpu->start(frames, sigma);
    for (std::size_t f = 0; f < sigma.size(); ++f) {
      cpu.push_back(make_cpu_smre_engine(p, cpu_threads()));
      cpu.back()->start(frame_of(frames, p.pixels(), f), std::span<const double>(sigma).subspan(f, 1));
    }
  }

  std::size_t count() const { return sigma.size(); }
  std::vector<float> gpu_x() const { return read(*gpu, false, count()); }
  std::vector<float> gpu_eps() const { return read(*gpu, true, count()); }
  std::vector<float> read(SmreEngine& e, bool eps, std::size_t frame_count) const {
    std::vector<float> out(frame_count * static_cast<std::size_t>(p.pixels()));
    if (eps)
      e.read_eps(out);
    else
      e.read_x(out);
    return out;
  }

  // One iteration of the active frames on both engines; compares the statistics.
  // Returns the GPU's statistics.
  std::vector<FrameStats> iterate(const std::vector<std::uint8_t>& active, const std::string& label) {
    std::vector<FrameStats> g(count());
    for (auto& s : g) s.sweeps = -7;  // must stay for inactive frames
    gpu->iterate(active, g);
    for (std::size_t f = 0; f < count(); ++f) {
      if (!active[f]) {
        CHECK(g[f].sweeps == -7);
        continue;
      }
      std::vector<FrameStats> c(1);
      const std::vector<std::uint8_t> one{1};
      cpu[f]->iterate(one, c);
      const std::string what = label + " frame " + std::to_string(f);
      const double s2 = sigma[f] * sigma[f];
      worst_c = std::max(worst_c, check_stat(what + " c1", g[f].c1, c[0].c1, 1e-3 * s2));
      worst_c = std::max(worst_c, check_stat(what + " c2", g[f].c2, c[0].c2, 1e-3 * s2));
      worst_step = std::max(worst_step, check_stat(what + " step", g[f].step, c[0].step, 1e-3 * sigma[f], 1e-2));
      CHECK(g[f].sweeps >= 1);
      ++frame_iterations;
      if (g[f].sweeps != c[0].sweeps) ++sweep_mismatches;
      // The stop test compares a float sum with the tolerance; summed in another order
      // it may flip on a near-tie, more so with warm starts (few sweeps, small changes).
      if (std::abs(g[f].sweeps - c[0].sweeps) > 2) ++large_sweep_mismatches;
    }
    return g;
  }

  void compare(const std::string& label, const std::vector<std::uint8_t>& which) {
    const auto x = gpu_x(), eps = gpu_eps();
    for (std::size_t f = 0; f < count(); ++f) {
      if (!which[f]) continue;
      const std::string what = label + " frame " + std::to_string(f);
      check_close(what + " x", frame_of(x, p.pixels(), f), read(*cpu[f], false, 1), 1.0);
      check_close(what + " eps", frame_of(eps, p.pixels(), f), read(*cpu[f], true, 1), sigma[f]);
    }
  }
};

const char* name_of(Regularizer r) { return to_string(r); }
const char* name_of(Projection p) { return to_string(p); }

// The GPU engine against one CPU engine per frame on three frames: start,
// iterations 1..5 with every frame, 6..30 without frame 1 (whose arrays, and
// Dykstra memory, must stay as they are), 31..35 with every frame again.
// Under compute-sanitizer (NANOSCOPY_GPU_SANITIZER=1) the same steps with fewer
// iterations: 1, 2, frame 1 out for 3..4, all again for 5..6.
void compare_engines(const SmreProblem& problem, const std::string& label, std::uint64_t seed) {
  const bool small = nanoscopy::test::gpu_sanitizer_run();
  const int together = small ? 2 : 5, apart = small ? 4 : 30, again = small ? 6 : 35;
  Harness t(problem, {1.5, 2.0, 3.0}, seed);

  // x = I at the start.
  check_close(label + " start x", t.gpu_x(), t.frames, 1.0);

  // Iteration 1: the first projection of I - A I, directly comparable.
  const std::vector<std::uint8_t> all(3, 1), two{1, 0, 1};
  t.iterate(all, label + " it 1");
  t.compare(label + " after 1", all);
  for (int it = 2; it <= together; ++it) t.iterate(all, label + " it " + std::to_string(it));
  t.compare(label + " after " + std::to_string(together), all);

  // Frame 1 sits out the next iterations: its arrays must not change at all.
  const auto x_out = t.gpu_x(), eps_out = t.gpu_eps();
  for (int it = together + 1; it <= apart; ++it) t.iterate(two, label + " it " + std::to_string(it));
  const auto x_back = t.gpu_x(), eps_back = t.gpu_eps();
  const auto n = t.p.pixels();
  CHECK(std::ranges::equal(frame_of(x_back, n, 1), frame_of(x_out, n, 1)));
  CHECK(std::ranges::equal(frame_of(eps_back, n, 1), frame_of(eps_out, n, 1)));
  t.compare(label + " after " + std::to_string(apart), all);

  // Frame 1 goes on from where it stopped (warm start: from its q of then, as on the CPU).
  for (int it = apart + 1; it <= again; ++it) t.iterate(all, label + " it " + std::to_string(it));
  t.compare(label + " after " + std::to_string(again), all);
  CHECK(t.large_sweep_mismatches * 20 <= t.frame_iterations);  // by more than 2 in at most 5 %
  MESSAGE(label << ": sweep counts differed in " << t.sweep_mismatches << " of " << t.frame_iterations
                << " frame-iterations; largest relative differences: c1/c2 " << t.worst_c << ", step "
                << t.worst_step);
}

}  // namespace

TEST_CASE("CUDA SMRE engine equals the CPU reference: sizes, projections, regularizers, inactive frames") {
  struct Size {
    std::int64_t w, h;
  };
  const bool small = nanoscopy::test::gpu_sanitizer_run();
  const std::vector<Size> sizes = small ? std::vector<Size>{{96, 64}} : std::vector<Size>{{64, 64}, {128, 96}};
  std::uint64_t seed = 1000;
  for (const Size& size : sizes)
    for (Projection proj : {Projection::exact, Projection::icd})
      for (Regularizer reg : {Regularizer::l2, Regularizer::tv, Regularizer::l1}) {
        const std::string label = std::to_string(size.w) + "x" + std::to_string(size.h) + " " + name_of(proj) +
                                  " " + name_of(reg) + " warm";
        CAPTURE(label);
        compare_engines(problem_for(size.w, size.h, proj, reg), label, ++seed);
      }
}

TEST_CASE("CUDA SMRE engine equals the CPU reference with cold-started Dykstra (dykstra_warm_start = false)") {
  std::uint64_t seed = 2000;
  const std::int64_t w = nanoscopy::test::gpu_sanitizer_run() ? 64 : 128, h = w == 64 ? 64 : 96;
  for (Projection proj : {Projection::exact, Projection::icd}) {
    const std::string label = std::to_string(w) + "x" + std::to_string(h) + " " + name_of(proj) + " l2 cold";
    CAPTURE(label);
    compare_engines(problem_for(w, h, proj, Regularizer::l2, 0, false), label, ++seed);
  }
}

TEST_CASE("CUDA SMRE warm-started Dykstra needs far fewer sweeps than a cold start") {
  // Sweeps per projection (CPU, this problem): exact first 43, iterations 13..15
  // warm about 6, cold about 18; icd first 25, warm about 8, cold about 14.
  for (Projection proj : {Projection::exact, Projection::icd}) {
    CAPTURE(name_of(proj));
    Harness warm(problem_for(128, 96, proj, Regularizer::tv), {1.5}, 77);
    Harness cold(problem_for(128, 96, proj, Regularizer::tv, 0, false), {1.5}, 77);
    const std::vector<std::uint8_t> one{1};
    int first = 0;
    double warm_late = 0, cold_late = 0;
    for (int it = 1; it <= 15; ++it) {
      const int w = warm.iterate(one, "warm it " + std::to_string(it))[0].sweeps;
      const int c = cold.iterate(one, "cold it " + std::to_string(it))[0].sweeps;
      if (it == 1) {
        first = w;
        CHECK(c == w);  // the first projection is cold either way
      }
      if (it >= 13) {
        warm_late += w / 3.0;
        cold_late += c / 3.0;
      }
    }
    MESSAGE(name_of(proj) << ": Dykstra sweeps of the first projection " << first
                          << ", mean of iterations 13..15: warm " << warm_late << ", cold " << cold_late);
    CHECK(warm_late <= 0.5 * first);
    CHECK(warm_late <= 0.75 * cold_late);
    warm.compare("warm after 15", one);
    cold.compare("cold after 15", one);
  }
}

TEST_CASE("CUDA SMRE projections meet the constraints they were asked to") {
  for (Projection proj : {Projection::exact, Projection::icd}) {
    CAPTURE(name_of(proj));
    Harness t(problem_for(128, 96, proj, Regularizer::l2), {4.0}, 77);
    t.iterate({1}, "it 1");
    // Both engines leave eps as feasible (or not: Dykstra stops on the change) as each other.
    const double gpu_ratio = max_constraint_ratio(t.gpu_eps(), t.p.family, t.p.weights, t.sigma[0]);
    const double cpu_ratio = max_constraint_ratio(t.read(*t.cpu[0], true, 1), t.p.family, t.p.weights, t.sigma[0]);
    MESSAGE(name_of(proj) << ": largest constraint ratio after one projection: gpu " << gpu_ratio << ", cpu "
                          << cpu_ratio);
    CHECK(gpu_ratio == doctest::Approx(cpu_ratio).epsilon(1e-2));
    if (proj == Projection::exact) CHECK(gpu_ratio <= 1.1);
    t.compare("after 1", {1});
  }
}

TEST_CASE("CUDA ICD with a fixed number of sweeps does exactly that many") {
  Harness t(problem_for(96, 64, Projection::icd, Regularizer::l2, 1), {2.0, 2.5}, 5);
  for (int it = 1; it <= 4; ++it) {
    std::vector<FrameStats> g(2);
    const std::vector<std::uint8_t> all{1, 1};
    t.gpu->iterate(all, g);
    CHECK(g[0].sweeps == 1);
    CHECK(g[1].sweeps == 1);
    for (std::size_t f = 0; f < 2; ++f) {
      std::vector<FrameStats> c(1);
      t.cpu[f]->iterate(std::vector<std::uint8_t>{1}, c);
      CHECK(c[0].sweeps == 1);
    }
  }
  t.compare("after 4", {1, 1});
}

TEST_CASE("CUDA SMRE batches of another size reuse the engine (exact: the sweep graph is re-captured)") {
  const SmreProblem p = problem_for(64, 64, Projection::exact, Regularizer::l2);
  auto gpu = make_smre_engine(gpu_device(), p, 4);
  const std::vector<double> sigma3{2.0, 2.0, 2.0}, sigma1{2.5};
  const auto frames3 = test_frames(p, sigma3, 11), frames1 = test_frames(p, sigma1, 12);
  std::vector<FrameStats> stats(3);
  gpu->start(frames3, sigma3);
  for (int it = 0; it < 3; ++it) gpu->iterate(std::vector<std::uint8_t>{1, 1, 1}, stats);
  gpu->start(frames1, sigma1);
  auto cpu = make_cpu_smre_engine(p, cpu_threads());
  cpu->start(frames1, sigma1);
  for (int it = 0; it < 3; ++it) {
    std::vector<FrameStats> g(1), c(1);
    gpu->iterate(std::vector<std::uint8_t>{1}, g);
    cpu->iterate(std::vector<std::uint8_t>{1}, c);
    check_stat("c1", g[0].c1, c[0].c1, 1e-3 * 6.25);
  }
  std::vector<float> gx(static_cast<std::size_t>(p.pixels())), cx(gx.size());
  gpu->read_x(gx);
  cpu->read_x(cx);
  check_close("x of the second batch", gx, cx, 1.0);
}

TEST_CASE("CUDA SMRE engine sizes batches by max_batch and by free memory") {
  const Device gpu = gpu_device();
  const SmreProblem p = problem_for(64, 64, Projection::icd, Regularizer::l2);
  auto engine = make_smre_engine(gpu, p, 2);
  CHECK(engine->capacity() == 2);
  CHECK(engine->name().rfind("cuda:", 0) == 0);
  const std::vector<double> sigma3{1.0, 1.0, 1.0};
  const auto frames3 = test_frames(p, sigma3, 3);
  CHECK_THROWS_AS(engine->start(frames3, sigma3), Error);
  CHECK_NOTHROW(engine->start(std::span<const float>(frames3).first(2 * static_cast<std::size_t>(p.pixels())),
                              std::span<const double>(sigma3).first(2)));

  // Exact Dykstra with squares up to 256 px on an 8192^2 frame keeps ~5.6 million
  // full-frame q arrays: no GPU holds one frame of that.
  SmreSettings s;
  s.projection = Projection::exact;
  s.mr_depth = 256;
  s.weights = WeightMethod::closed_form;
  WeightOptions o;
  o.method = WeightMethod::closed_form;
  o.use_cache = false;
  const SmreProblem huge = make_smre_problem(8192, 8192, s, o);
  try {
    make_smre_engine(gpu, huge, 1);
    FAIL("a frame that cannot fit was accepted");
  } catch (const DeviceError& e) {
    MESSAGE(e.message());
    CHECK(std::string(e.what()).find("GB") != std::string::npos);
  }
}

// Not run by default (nanoscopy_gpu_tests -tc="*timing*" --no-skip): the
// engine's iteration time on padded 1056^2 frames (a 1024^2 image) and a stack
// of padded 544^2 frames; no comparison with the CPU.
TEST_CASE("CUDA SMRE timing" * doctest::skip()) {
  using clock = std::chrono::steady_clock;
  const auto run = [](const SmreProblem& p, std::int64_t frames, int iterations, std::int64_t max_batch) {
    const std::vector<double> sigma(static_cast<std::size_t>(frames), 2.0);
    const auto data = test_frames(p, sigma, 99);
    auto gpu = make_smre_engine(gpu_device(), p, max_batch);
    REQUIRE(gpu->capacity() >= frames);
    gpu->start(data, sigma);
    const std::vector<std::uint8_t> active(static_cast<std::size_t>(frames), 1);
    std::vector<FrameStats> stats(static_cast<std::size_t>(frames));
    gpu->iterate(active, stats);  // warm-up: module load, graph capture
    long long sweeps = 0;
    int most = 0;
    const auto t0 = clock::now();
    for (int it = 0; it < iterations; ++it) {
      gpu->iterate(active, stats);
      for (const auto& s : stats) {
        sweeps += s.sweeps;
        most = std::max(most, s.sweeps);
      }
    }
    const double seconds = std::chrono::duration<double>(clock::now() - t0).count();
    MESSAGE(gpu->name() << ": " << p.width << "x" << p.height << " x " << frames << " frames, "
                        << p.family.describe() << ", " << to_string(p.settings.regularizer) << ": " << iterations
                        << " iterations in " << seconds << " s (" << 1e3 * seconds / iterations
                        << " ms each; mean sweeps " << static_cast<double>(sweeps) / static_cast<double>(iterations * frames)
                        << ", max " << most << ")");
    return seconds;
  };
  auto settings = [](Projection proj, int mr_depth) {
    SmreSettings s;
    s.psf_sigma = 3.0;
    s.projection = proj;
    s.mr_depth = mr_depth;
    s.weights = WeightMethod::closed_form;
    WeightOptions o;
    o.method = WeightMethod::closed_form;
    o.use_cache = false;
    return std::make_pair(s, o);
  };
  {
    const auto [s, o] = settings(Projection::icd, 15);
    const double t = run(make_smre_problem(1056, 1056, s, o), 1, 200, 1);
    MESSAGE("ICD 1024^2, 200 iterations: " << t << " s (target <= 0.5 s)");
    const double ts = run(make_smre_problem(544, 544, s, o), 64, 100, 64);
    MESSAGE("ICD 512^2 stack, 100 iterations: " << 64.0 / ts << " frames/s (target >= 50)");
  }
  {
    const auto [s, o] = settings(Projection::exact, 15);
    const double t = run(make_smre_problem(1056, 1056, s, o), 1, 10, 1);
    MESSAGE("exact MRdepth 15 1024^2: " << 20.0 * t << " s per 200 iterations (from 10; target <= 20 s)");
  }
}
