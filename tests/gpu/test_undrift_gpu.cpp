// The cuFFT correlation engine of RCC (kernels/undrift) against the FFTW CPU
// reference on simulated blinking sites with an imposed drift. Both render the
// same float grid positions with the same bilinear weights (rcc_math.hpp; the
// GPU's atomics only reorder float sums), multiply by the same host-computed
// blur, and transform in float (cuFFT vs FFTW): the correlation maps differ by
// float rounding, far below a peak's curvature. Stated tolerances:
//   - every pair: the same integer maximum and found flag; the window values
//     within 1e-4 of the pair's peak value; the sub-pixel shift within
//     0.01 grid px;
//   - the whole RCC: every segment's drift within 0.01 grid px, the per-frame
//     trace too.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/device.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/loc/undrift/peak_fit.hpp"
#include "nanoscopy/loc/undrift/rcc.hpp"

using namespace nanoscopy;

namespace {

constexpr double kShiftTol = 0.01;  // grid px

// `sites` on a field of `field` px, each on with probability p per frame, precision 0.08 px, displaced by a
// linear drift of (1.5, −0.8) px over the frames plus a slow wobble.
std::vector<Localization> simulate(int sites, double field, std::int64_t frames, double p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(2.0, field - 2.0), on(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 0.08);
  std::vector<double> sx(static_cast<std::size_t>(sites)), sy(sx.size());
  for (std::size_t k = 0; k < sx.size(); ++k) {
    sx[k] = u(rng);
    sy[k] = u(rng);
  }
  std::vector<Localization> locs;
  for (std::int64_t f = 0; f < frames; ++f) {
    const double t = static_cast<double>(f) / static_cast<double>(frames);
    const double dx = 1.5 * t + 0.3 * std::sin(6.0 * t), dy = -0.8 * t + 0.2 * std::cos(5.0 * t);
    for (std::size_t k = 0; k < sx.size(); ++k) {
      if (on(rng) >= p) continue;
      Localization l;
      l.frame = f;
      l.x = sx[k] + dx + g(rng);
      l.y = sy[k] + dy + g(rng);
      l.lpx = l.lpy = 0.08;
      locs.push_back(l);
    }
  }
  return locs;
}

// Both engines for one geometry, each given the same segments.
struct EnginePair {
  std::unique_ptr<CorrelationEngine> cpu, cuda;
};

}  // namespace

TEST_CASE("CUDA RCC correlation engine: per-pair peaks and sub-pixel shifts equal the CPU engine's") {
  const Device gpu = select_device(DeviceRequest::parse("cuda"), true);
  // Two grids: square and not, sizes FFTW and cuFFT transform with different factorizations.
  const CorrelationGeometry geometries[] = {{256, 256, 1.0, 40}, {300, 210, 1.5, 30}};
  std::uint64_t seed = 3;
  for (const CorrelationGeometry& g : geometries) {
    INFO(g.width << " x " << g.height << ", blur " << g.blur_px);
    EnginePair e{make_cpu_correlation_engine(g, 2), make_correlation_engine(gpu, g)};
    CHECK(e.cuda->name().rfind("cuda:", 0) == 0);
    // 6 segments: 4 from points (rendered on each engine), 1 from a ready image, 1 empty (no peak).
    std::mt19937_64 rng(seed++);
    std::uniform_real_distribution<float> ux(20.0f, static_cast<float>(g.width) - 60.0f),
        uy(20.0f, static_cast<float>(g.height) - 60.0f);
    std::normal_distribution<float> jitter(0.0f, 1.0f);
    std::vector<rcc_math::GridPoint> sites(400);
    for (auto& s : sites) s = {ux(rng), uy(rng)};
    const float shifts[4][2] = {{0.0f, 0.0f}, {3.3f, -2.7f}, {-7.61f, 5.05f}, {12.2f, 9.9f}};
    for (const auto& d : shifts) {
      std::vector<rcc_math::GridPoint> points;
      for (int rep = 0; rep < 10; ++rep)
        for (const auto& s : sites) points.push_back({s.u + d[0] + jitter(rng), s.v + d[1] + jitter(rng)});
      // Points off the grid (left out by both) and one NaN.
      points.push_back({-5.0f, 3.0f});
      points.push_back({static_cast<float>(g.width) - 0.5f, 10.0f});
      points.push_back({NAN, 1.0f});
      e.cpu->add_segment_points(points);
      e.cuda->add_segment_points(points);
    }
    std::vector<float> image(static_cast<std::size_t>(g.width * g.height));
    render_segment_points(std::vector<rcc_math::GridPoint>(sites.begin(), sites.end()), g, image);
    e.cpu->add_segment(image);
    e.cuda->add_segment(image);
    e.cpu->add_segment_points({});
    e.cuda->add_segment_points({});
    REQUIRE(e.cuda->segments() == 6);
    CHECK(e.cuda->spectrum_bytes() == e.cpu->spectrum_bytes());

    std::vector<SegmentPair> pairs;
    for (std::int64_t i = 0; i < 6; ++i)
      for (std::int64_t j = 0; j < 6; ++j)
        if (i != j) pairs.push_back({i, j});
    // Twice: all pairs in one call (batches of the engine's size), then one by one (short batches, their plans).
    for (const bool one_by_one : {false, true}) {
      INFO("one by one: " << one_by_one);
      std::vector<CorrelationPeak> pc(pairs.size()), pg(pairs.size());
      e.cpu->correlate(pairs, pc);
      if (one_by_one)
        for (std::size_t k = 0; k < pairs.size(); ++k)
          e.cuda->correlate(std::span(pairs).subspan(k, 1), std::span(pg).subspan(k, 1));
      else
        e.cuda->correlate(pairs, pg);
      double worst_shift = 0, worst_window = 0;
      int found = 0;
      for (std::size_t k = 0; k < pairs.size(); ++k) {
        INFO("pair " << pairs[k].i << ", " << pairs[k].j);
        REQUIRE(pg[k].found == pc[k].found);
        if (!pc[k].found) continue;
        ++found;
        CHECK(pg[k].shift_x == pc[k].shift_x);
        CHECK(pg[k].shift_y == pc[k].shift_y);
        const double peak = pc[k].at(0, 0);
        for (std::size_t w = 0; w < pc[k].window.size(); ++w)
          worst_window = std::max(worst_window, std::abs(pg[k].window[w] - pc[k].window[w]) / peak);
        const SubpixelShift sc = fit_correlation_peak(pc[k]), sg = fit_correlation_peak(pg[k]);
        CHECK(sg.ok == sc.ok);
        worst_shift = std::max({worst_shift, std::abs(sg.x - sc.x), std::abs(sg.y - sc.y)});
      }
      MESSAGE("pairs with a peak: " << found << ", largest window difference " << worst_window
                                    << " of the peak, largest shift difference " << worst_shift << " grid px");
      CHECK(found == 20);  // the empty segment's 10 pairs have none
      CHECK(worst_window <= 1e-4);
      CHECK(worst_shift <= kShiftTol);
    }
    // The imposed shift between segments 0 and 1 is found (a check that the test can fail).
    std::vector<CorrelationPeak> one(1);
    const SegmentPair p01{0, 1};
    e.cuda->correlate(std::span(&p01, 1), one);
    const SubpixelShift s01 = fit_correlation_peak(one[0]);
    CHECK(s01.x == doctest::Approx(3.3).epsilon(0.03));
    CHECK(s01.y == doctest::Approx(-2.7).epsilon(0.03));
  }
}

TEST_CASE("CUDA RCC: fit2d undrift's drift on the GPU equals the CPU's") {
  const Device gpu = select_device(DeviceRequest::parse("cuda"), true);
  // 10,000 frames, 600 sites on a 60 px field on in 4 % of the frames (240,000 localizations); 20 segments.
  const std::int64_t frames = 10000;
  const auto locs = simulate(600, 60, frames, 0.04, 21);
  RccSettings s;
  s.segment_frames = 500;
  const RccResult rc = undrift_rcc(locs, frames, s, "cpu", [](const CorrelationGeometry& g) {
    return make_cpu_correlation_engine(g, 2);
  });
  const RccResult rg = undrift_rcc(locs, frames, s, "cuda", [&](const CorrelationGeometry& g) {
    return make_correlation_engine(gpu, g);
  });
  CHECK(rg.engine.rfind("cuda:", 0) == 0);
  REQUIRE(rg.segments.size() == rc.segments.size());
  CHECK(rg.pairs_used == rc.pairs_used);
  const double tol_px = kShiftTol * rc.grid_pixel_px;  // camera px
  double worst = 0;
  for (std::size_t k = 0; k < rc.segments.size(); ++k) {
    CHECK(rg.segments[k].solved == rc.segments[k].solved);
    worst = std::max({worst, std::abs(rg.segments[k].dx - rc.segments[k].dx), std::abs(rg.segments[k].dy - rc.segments[k].dy)});
  }
  for (std::size_t f = 0; f < rc.trace.dx.size(); ++f)
    worst = std::max({worst, std::abs(rg.trace.dx[f] - rc.trace.dx[f]), std::abs(rg.trace.dy[f] - rc.trace.dy[f])});
  MESSAGE("RCC on " << locs.size() << " localizations, " << rc.segments.size() << " segments: largest GPU − CPU drift "
                    << worst / rc.grid_pixel_px << " grid px (" << worst << " camera px)");
  CHECK(worst <= tol_px);
  // And the drift is the imposed one's size (1.5 px over the run), so the comparison is not of zeros.
  CHECK(std::abs(rc.trace.dx.back() - rc.trace.dx.front()) > 1.0);
}

TEST_CASE("CUDA RCC: a pair naming a segment not added is a UsageError; a grid too small is refused") {
  const Device gpu = select_device(DeviceRequest::parse("cuda"), true);
  auto e = make_correlation_engine(gpu, {64, 64, 1.0, 10});
  std::vector<CorrelationPeak> peaks(1);
  const SegmentPair bad{0, 1};
  CHECK_THROWS_AS(e->correlate(std::span(&bad, 1), peaks), UsageError);
  CHECK_THROWS_AS(make_correlation_engine(gpu, {4, 64, 1.0, 1}), UsageError);
  CHECK_THROWS_AS(e->add_segment(std::vector<float>(10)), InputError);
}
