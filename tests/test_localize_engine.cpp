// The CPU localize engine: --regions drops candidates right after detection
// (they are counted, never cut or fitted), the one chunk check, the one box rule.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/loc/detect/detect.hpp"
#include "nanoscopy/loc/localize_engine.hpp"
#include "nanoscopy/loc/regions.hpp"
#include "nanoscopy/sim/movie.hpp"
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
  auto engine = make_cpu_localize_engine(LocalizeSettings{DetectSettings{}, FitSettings{}, regions}, 2);
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
