// remove_duplicates (loc/duplicates.hpp): of the localizations of one frame
// closer than the distance, the most precise is kept, the others dropped, the
// order of the kept ones unchanged; other frames and far neighbours untouched;
// linear in a dense frame; and the values of "Filter/duplicates" (fit2d end to
// end: test_fit2d_spline).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/loc/duplicates.hpp"

using namespace nanoscopy;

namespace {

Localization at(std::int64_t frame, double x, double y, double precision) {
  Localization l;
  l.frame = frame;
  l.x = x;
  l.y = y;
  l.lpx = l.lpy = precision;
  return l;
}

}  // namespace

TEST_CASE("remove_duplicates keeps the most precise of a frame's close localizations, in order") {
  std::vector<Localization> locs{
      at(0, 10.0, 10.0, 0.20),  // dropped: 0.3 px from the next, less precise
      at(0, 10.3, 10.0, 0.10),  // kept
      at(0, 10.0, 10.9, 0.15),  // dropped: 0.95 px from the kept one
      at(0, 20.0, 20.0, 0.30),  // kept: far
      at(1, 10.1, 10.0, 0.50),  // kept: another frame
      at(1, 11.2, 10.0, 0.40),  // kept: 1.1 px away
  };
  CHECK(remove_duplicates(locs, 1.0) == 2);
  REQUIRE(locs.size() == 4);
  CHECK(locs[0].x == 10.3);
  CHECK(locs[1].x == 20.0);
  CHECK(locs[2].frame == 1);
  CHECK(locs[2].x == 10.1);
  CHECK(locs[3].x == 11.2);
}

TEST_CASE("remove_duplicates: off at distance 0, chains resolved from the most precise, NaN precisions last") {
  std::vector<Localization> locs{at(3, 0.0, 0.0, 0.1), at(3, 0.5, 0.0, 0.2)};
  CHECK(remove_duplicates(locs, 0.0) == 0);
  CHECK(locs.size() == 2);
  // 0 - 0.8 - 1.6 px: the middle one is the most precise and drops both neighbours.
  std::vector<Localization> chain{at(3, 0.0, 0.0, 0.3), at(3, 0.8, 0.0, 0.1), at(3, 1.6, 0.0, 0.2)};
  CHECK(remove_duplicates(chain, 1.0) == 2);
  REQUIRE(chain.size() == 1);
  CHECK(chain[0].x == 0.8);
  std::vector<Localization> nan{at(4, 0.0, 0.0, NAN), at(4, 0.2, 0.0, 0.5)};
  CHECK(remove_duplicates(nan, 1.0) == 1);
  REQUIRE(nan.size() == 1);
  CHECK(nan[0].x == 0.2);
  std::vector<Localization> none;
  CHECK(remove_duplicates(none, 1.0) == 0);
}

TEST_CASE("Filter/duplicates: auto is 1 px for the spline model and off otherwise; a distance; errors") {
  CHECK(duplicate_distance_px("auto", true, "w") == 1.0);
  CHECK(duplicate_distance_px("auto", false, "w") == 0.0);
  CHECK(duplicate_distance_px("off", true, "w") == 0.0);
  CHECK(duplicate_distance_px("0.5", false, "w") == 0.5);
  for (const char* bad : {"", "0", "-1", "1px", "nan", "inf", "x"})
    CHECK_THROWS_AS(duplicate_distance_px(bad, true, "--duplicates"), UsageError);
}

TEST_CASE("remove_duplicates: a dense frame of 200,000 localizations in linear time; non-finite positions kept") {
  std::vector<Localization> locs;
  for (int k = 0; k < 200000; ++k)  // pairs 0.5 px apart on a 2 px grid: every second one goes
    locs.push_back(at(7, 2.0 * (k / 2 % 500) + 0.5 * (k % 2), 2.0 * (k / 1000), k % 2 ? 0.2 : 0.1));
  locs.push_back(at(7, NAN, 1.0, 0.01));
  CHECK(remove_duplicates(locs, 1.0) == 100000);
  CHECK(locs.size() == 100001);
  CHECK(std::isnan(locs.back().x));
  std::size_t precise = 0;
  for (std::size_t i = 0; i + 1 < locs.size(); ++i) precise += locs[i].lpx == 0.1;
  CHECK(precise == 100000);  // of each pair the more precise
}
