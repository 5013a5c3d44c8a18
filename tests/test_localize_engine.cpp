// The CPU localize engine: --regions drops candidates right after detection
// (they are counted, never cut or fitted), the one chunk check, the one box rule,
// and re-centring (loc/recenter.hpp: which fits get a second box, and what it does
// to spline fits far from focus).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/loc/detect/detect.hpp"
#include "nanoscopy/loc/localize_engine.hpp"
#include "nanoscopy/loc/recenter.hpp"
#include "nanoscopy/loc/regions.hpp"
#include "nanoscopy/sim/movie.hpp"
#include "support/spline_movie.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using nanoscopy::test::contains;
using nanoscopy::test::expect_error;

namespace {

struct Output {
  std::vector<Candidate> candidates;
  std::vector<RoiOrigin> origins;
  std::vector<FitResult> fits;
  std::int64_t detected = 0;
};

Output localize(const std::vector<Region>& regions, const ChunkPixels& chunk) {
  auto engine = make_cpu_localize_engine(LocalizeSettings{DetectSettings{}, FitSettings{}, regions, {}, 0}, 2);
  Output out;
  out.detected = engine->localize(chunk, out.candidates, out.origins, out.fits);
  return out;
}

}  // namespace

TEST_CASE("region_mask marks the pixels in_regions holds, clipped to the frame") {
  const std::vector<Region> regions{{1, 1, 2, 3}, {4, 0, 9, 1}};
  const auto mask = region_mask(regions, 6, 5);
  REQUIRE(mask.size() == 30);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 6; ++x) CHECK(mask[static_cast<std::size_t>(y * 6 + x)] == (in_regions(regions, x, y) ? 1 : 0));
  for (const auto v : region_mask({}, 3, 2)) CHECK(v == 1);  // no regions: everywhere
}

TEST_CASE("CPU localize engine: candidates outside the regions are counted but not fitted") {
  MovieSettings m;
  m.frames = 12;
  m.width = 80;
  m.height = 64;
  m.emitters = 50;
  m.on_fraction = 0.3;
  m.seed = 21;
  const std::vector<std::uint16_t> movie = nanoscopy::test::simulated_movie_u16(m);
  const ChunkPixels chunk{movie.data(), PixelType::u16, 40, m.frames, static_cast<int>(m.width),
                          static_cast<int>(m.height)};

  const Output all = localize({}, chunk);
  REQUIRE(all.candidates.size() > 20);  // the movie has spots: the test is not vacuous
  CHECK(all.detected == static_cast<std::int64_t>(all.candidates.size()));

  const std::vector<Region> regions{{0, 0, 30, 64}, {50, 10, 20, 20}};
  const Output some = localize(regions, chunk);
  // The same number detected; only the candidates inside reach the fitter, one fit each.
  CHECK(some.detected == all.detected);
  REQUIRE(some.fits.size() == some.candidates.size());
  REQUIRE(some.origins.size() == some.candidates.size());
  CHECK(some.fits.size() < all.fits.size());
  CHECK(!some.fits.empty());
  // ... and they are exactly the inside ones of the unrestricted run, with the same fits.
  std::size_t k = 0;
  for (std::size_t i = 0; i < all.candidates.size(); ++i) {
    const Candidate& c = all.candidates[i];
    if (!in_regions(regions, c.x, c.y)) continue;
    REQUIRE(k < some.candidates.size());
    CHECK(some.candidates[k].frame == c.frame);
    CHECK(some.candidates[k].x == c.x);
    CHECK(some.candidates[k].y == c.y);
    CHECK(some.origins[k].x0 == all.origins[i].x0);
    CHECK(some.origins[k].y0 == all.origins[i].y0);
    CHECK(std::memcmp(&some.fits[k], &all.fits[i], sizeof(FitResult)) == 0);
    ++k;
  }
  CHECK(k == some.candidates.size());

  // A region without spots: everything detected, nothing fitted.
  const Output none = localize({{0, 0, 1, 1}}, chunk);
  CHECK(none.detected == all.detected);
  CHECK(none.candidates.empty());
  CHECK(none.fits.empty());
}

TEST_CASE("validate_chunk: pixel type, missing pixels, frames smaller than the box") {
  const std::vector<std::uint16_t> pixels(64 * 64, 100);
  CHECK_NOTHROW(validate_chunk(ChunkPixels{pixels.data(), PixelType::u16, 0, 1, 64, 64}, 7));
  CHECK_NOTHROW(validate_chunk(ChunkPixels{nullptr, PixelType::f32, 0, 0, 64, 64}, 7));
  CHECK(contains(expect_error<UsageError>([&] {
                   validate_chunk(ChunkPixels{pixels.data(), PixelType::u8, 0, 1, 64, 64}, 7);
                 }).message(),
                 "uint16 or float32"));
  CHECK(contains(
      expect_error<UsageError>([&] { validate_chunk(ChunkPixels{nullptr, PixelType::u16, 0, 1, 64, 64}, 7); }).message(),
      "no frames given"));
  CHECK(contains(expect_error<InputError>([&] {
                   validate_chunk(ChunkPixels{pixels.data(), PixelType::u16, 0, 1, 5, 5}, 7);
                 }).message(),
                 "smaller than the detection box of 7"));
  // The CPU engine applies it.
  auto engine = make_cpu_localize_engine(LocalizeSettings{}, 1);
  std::vector<Candidate> c;
  std::vector<RoiOrigin> o;
  std::vector<FitResult> f;
  CHECK_THROWS_AS(engine->localize(ChunkPixels{pixels.data(), PixelType::u16, 0, 1, 5, 5}, c, o, f), InputError);
}

TEST_CASE("the one box rule: its messages name the caller's source") {
  CHECK_NOTHROW(validate_detect_box(3));
  CHECK_NOTHROW(validate_detect_box(31));
  const auto even = expect_error<UsageError>([] { validate_detect_box(4, "--box"); });
  CHECK(even.where() == "--box");
  CHECK(std::string(even.what()) == "the box must be odd (3, 5, 7, ...), not 4");
  CHECK(contains(expect_error<UsageError>([] { validate_detect_box(33); }).message(), "from 3 to 31"));
  DetectSettings s;
  s.box = 6;
  CHECK(expect_error<UsageError>([&] { validate_detect_settings(s, "params.yaml:3"); }).where() == "params.yaml:3");
  CHECK_THROWS_AS(cut_rois<float>(nullptr, 0, 0, 16, 16, {}, 6), UsageError);
}

TEST_CASE("recentred_origin: which fits get a second box, and where") {
  FitResult f;
  f.status = FitStatus::converged_min_delta;
  f.x = 6.4f;  // box 13: the centre pixel is (6, 6)
  f.y = 6.0f;
  RoiOrigin moved{-1, -1};
  CHECK_FALSE(recentred_origin(f, RoiOrigin{20, 30}, 13, 100, 100, 1.0f, moved));  // within 1 px
  f.y = 8.6f;                                                                        // 2.6 px below the centre
  REQUIRE(recentred_origin(f, RoiOrigin{20, 30}, 13, 100, 100, 1.0f, moved));
  CHECK(moved.x0 == 20);  // the pixel of (26.4, 38.6) is (26, 39): its box starts at (20, 33)
  CHECK(moved.y0 == 33);
  CHECK_FALSE(recentred_origin(f, RoiOrigin{20, 30}, 13, 100, 100, 3.0f, moved));  // a larger distance
  CHECK_FALSE(recentred_origin(f, RoiOrigin{20, 30}, 13, 100, 100, 0.0f, moved));  // off
  // At the frame's edge the box cannot move further: no second fit.
  CHECK_FALSE(recentred_origin(f, RoiOrigin{20, 87}, 13, 100, 100, 1.0f, moved));
  // Shifted inside the frame as every box is.
  f.y = 11.9f;
  REQUIRE(recentred_origin(f, RoiOrigin{20, 84}, 13, 100, 100, 1.0f, moved));
  CHECK(moved.y0 == 87);
  // Only converged fits, and only finite centres inside the box.
  for (const FitStatus s : {FitStatus::max_iterations, FitStatus::not_converged, FitStatus::nan, FitStatus::left_roi,
                            FitStatus::invalid_roi}) {
    FitResult bad = f;
    bad.status = s;
    CHECK_FALSE(recentred_origin(bad, RoiOrigin{20, 30}, 13, 100, 100, 1.0f, moved));
  }
  for (const float v : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), 40.0f}) {
    FitResult bad = f;
    bad.x = v;
    CHECK_FALSE(recentred_origin(bad, RoiOrigin{20, 30}, 13, 100, 100, 1.0f, moved));
  }
  CHECK(recenter_distance_px("auto", true, "w") == 1.0);
  CHECK(recenter_distance_px("auto", false, "w") == 0.0);
  CHECK(recenter_distance_px("off", true, "w") == 0.0);
  CHECK(recenter_distance_px("2.5", false, "w") == 2.5);
  for (const char* bad : {"", "on", "-1", "0", "1px", "nan"})
    CHECK(expect_error<UsageError>([&] { static_cast<void>(recenter_distance_px(bad, true, "--recenter")); }).where() ==
          "--recenter");
}

TEST_CASE("CPU localize engine, spline model: fits far from their box's centre fitted again in a box around it") {
  // At z 450..560 nm the spot's peak, where the detector puts the box, lies 2.3-2.8 px from the emitter.
  // (What re-centring gains on a real PSF: test_fit2d_spline, and bench spline3d.)
  const SplinePsf psf = nanoscopy::test::drifting_spline_psf();
  const nanoscopy::test::SplineMovie mv = nanoscopy::test::spline_movie(psf, 40, 450, 560);
  const ChunkPixels chunk{mv.pixels.data(), PixelType::u16, 0, mv.frames, nanoscopy::test::SplineMovie::kWidth,
                          nanoscopy::test::SplineMovie::kWidth};
  struct Run {
    Output out;
    int off_centre = 0, converged = 0;
    double sq_error = 0;  // of the converged fits, px²
  };
  const auto run = [&](double recenter_px) {
    auto engine = make_cpu_localize_engine(nanoscopy::test::spline_movie_settings(psf, recenter_px), 2);
    Run r;
    r.out.detected = engine->localize(chunk, r.out.candidates, r.out.origins, r.out.fits);
    for (std::size_t k = 0; k < r.out.fits.size(); ++k) {
      const FitResult& f = r.out.fits[k];
      if (!converged(f.status)) continue;
      ++r.converged;
      r.off_centre += std::max(std::fabs(f.x - 6.0f), std::fabs(f.y - 6.0f)) > 1.0f;
      const double x = r.out.origins[k].x0 + static_cast<double>(f.x), y = r.out.origins[k].y0 + static_cast<double>(f.y);
      double best = 1e9;
      for (const auto& e : mv.truth)
        if (e.frame == r.out.candidates[k].frame) best = std::min(best, std::hypot(x - e.x, y - e.y));
      r.sq_error += best * best;
    }
    return r;
  };
  const Run off = run(0), on = run(1.0);
  MESSAGE(off.converged << " fits; more than 1 px from their box's centre: " << off.off_centre << " without, "
                        << on.off_centre << " with re-centring; RMS error " << std::sqrt(off.sq_error / off.converged)
                        << " px, " << std::sqrt(on.sq_error / on.converged) << " px");
  // The same candidates, one fit each.
  REQUIRE(on.out.candidates.size() == off.out.candidates.size());
  REQUIRE(on.out.fits.size() == on.out.candidates.size());
  REQUIRE(on.out.origins.size() == on.out.candidates.size());
  REQUIRE(off.converged > 100);  // 160 emitters: the test is not vacuous
  CHECK(off.off_centre > off.converged / 2);
  CHECK(on.off_centre * 10 < off.off_centre);
  CHECK(on.converged >= off.converged);
  CHECK(on.sq_error / on.converged < 1.1 * off.sq_error / off.converged);  // the spot stays inside either box
  int moved = 0;
  for (std::size_t k = 0; k < on.out.candidates.size(); ++k) {
    const bool was_moved = on.out.origins[k].x0 != off.out.origins[k].x0 || on.out.origins[k].y0 != off.out.origins[k].y0;
    moved += was_moved;
    CHECK(on.out.candidates[k].frame == off.out.candidates[k].frame);
    if (was_moved) {  // the candidate is the new box's centre pixel
      CHECK(on.out.candidates[k].x == on.out.origins[k].x0 + 6);
      CHECK(on.out.candidates[k].y == on.out.origins[k].y0 + 6);
    } else {
      CHECK(std::memcmp(&on.out.fits[k], &off.out.fits[k], sizeof(FitResult)) == 0);  // untouched
    }
  }
  CHECK(moved > off.converged / 2);
}
