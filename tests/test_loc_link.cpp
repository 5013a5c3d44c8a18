// fit2d link (loc/link.hpp): simulated blinks of known emitters (runs of frames
// with gaps) are merged one group per blink, with the precision-weighted
// position, summed photons, len and n; the command on our file and on
// Picasso's own, its fields read back from both formats; bad input.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "nanoscopy/bench/link_table.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/fit2d/link_cmd.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/loc/link.hpp"
#include "nanoscopy/params/tool_schemas.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;

namespace {

struct Blink {
  double x, y;
  std::int64_t first, frames;  // on from `first` for `frames` frames
};

CommandResult fit2d(const std::string& args) { return run_command(shell_quote(app_path("fit2d")) + " " + args); }

}  // namespace

TEST_CASE("link: one group per blink, weighted position, summed photons, len and n; a dark frame bridged") {
  // 60 emitters on a grid 3 px apart, each blinking three times with gaps of ≥ 3 frames; precision 0.03 px.
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise(0.0, 0.03);
  std::vector<Blink> blinks;
  for (int e = 0; e < 60; ++e)
    for (int b = 0; b < 3; ++b) blinks.push_back({3.0 + 3.0 * (e % 10), 3.0 + 3.0 * (e / 10), 10 * b + e % 4, 1 + (e + b) % 5});
  std::vector<Localization> locs;
  for (std::int64_t f = 0; f < 40; ++f)
    for (const Blink& b : blinks) {
      if (f < b.first || f >= b.first + b.frames) continue;
      Localization l;
      l.frame = f;
      l.x = b.x + noise(rng);
      l.y = b.y + noise(rng);
      l.lpx = l.lpy = 0.03;
      l.photons = 1000;
      l.sigma = 1.3;
      locs.push_back(l);
    }
  const auto groups = link_localizations(locs, LinkSettings{-5.0, 1});  // 5x, the old default
  REQUIRE(groups.size() == blinks.size());
  double photons = 0, err2 = 0;
  for (const auto& g : groups) {
    photons += g.photons;
    CHECK(g.n == g.len);  // no dark frames here
    CHECK(g.lpx == doctest::Approx(0.03 / std::sqrt(g.n)).epsilon(1e-9));
    const double ex = g.x - std::round(g.x / 3.0) * 3.0, ey = g.y - std::round(g.y / 3.0) * 3.0;
    err2 += ex * ex + ey * ey;
  }
  CHECK(photons == doctest::Approx(1000.0 * static_cast<double>(locs.size())));
  CHECK(std::sqrt(err2 / (2.0 * static_cast<double>(groups.size()))) < 0.03);  // better than one localization

  // One missed frame in a blink: bridged with max_dark 1 (len 3, n 2), split with max_dark 0.
  std::vector<Localization> gap;
  for (std::int64_t f : {5, 7}) {
    Localization l;
    l.frame = f;
    l.x = 10;
    l.y = 10;
    l.lpx = l.lpy = 0.05;
    gap.push_back(l);
  }
  const auto bridged = link_localizations(gap, LinkSettings{-3.0, 1});
  REQUIRE(bridged.size() == 1);
  CHECK(bridged[0].len == 3);
  CHECK(bridged[0].n == 2);
  CHECK(link_localizations(gap, LinkSettings{-3.0, 0}).size() == 2);
  // A fixed radius in px: 0.5 px apart are one emitter with radius 1 px, two with 0.2 px.
  gap[1].x = 10.5;
  CHECK(link_localizations(gap, LinkSettings{1.0, 1}).size() == 1);
  CHECK(link_localizations(gap, LinkSettings{0.2, 1}).size() == 2);
  // Unsorted input is linked as if sorted by frame (stably), and group_of still indexes the input.
  const auto sorted_result = link_localizations(gap, LinkSettings{1.0, 1});
  std::swap(gap[0], gap[1]);
  std::vector<std::int64_t> group_of;
  const auto unsorted_result = link_localizations(gap, LinkSettings{1.0, 1}, &group_of);
  REQUIRE(unsorted_result.size() == sorted_result.size());
  CHECK(unsorted_result[0].len == sorted_result[0].len);
  CHECK(unsorted_result[0].x == doctest::Approx(sorted_result[0].x));
  REQUIRE(group_of.size() == gap.size());
  for (const std::int64_t g : group_of) CHECK(g == 0);
  CHECK_THROWS_AS(link_localizations(gap, LinkSettings{1.0, -1}), UsageError);
}

TEST_CASE("fit2d link: Picasso's own file in, len and n out (read back from HDF5 and as ThunderSTORM's detections)") {
  TempDir dir;
  const auto picasso = peer_file("picasso_testdata_locs.hdf5").string();
  const auto total = read_localization_file(picasso).locs.size();
  for (const std::string ext : {".hdf5", ".csv"}) {
    const auto out = (dir / ("linked" + ext)).string();
    const auto r = fit2d("link " + shell_quote(picasso) + " -o " + shell_quote(out) + " --radius 5x --max-dark 1");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto linked = read_localization_file(out);
    REQUIRE(!linked.locs.empty());
    CHECK(linked.locs.size() < total);
    std::int64_t merged = 0;
    for (const auto& l : linked.locs) {
      CHECK(l.n >= 1);
      if (ext == ".hdf5") CHECK(l.len >= l.n);
      merged += l.n;
    }
    CHECK(merged == static_cast<std::int64_t>(total));  // every localization is in exactly one group
  }
  check_one_line_error(fit2d("link " + shell_quote(picasso) + " -o " + shell_quote((dir / "x.csv").string()) +
                             " --radius 30 "),
                       "fit2d", 2, "--radius", "30nm, 0.3px or 3x");
  CHECK_FALSE(std::filesystem::exists(dir / "x.csv"));
}

TEST_CASE("fit2d link carries the camera and the input's columns (mean per link), links within Picasso's groups") {
  if (!python_available()) return;
  TempDir dir;
  const auto in = (dir / "in.hdf5").string();
  const auto made = run_python("locs_carried.py", {"make", peer_file("picasso_testdata_locs.hdf5").string(), in});
  REQUIRE_MESSAGE(made.exit_code == 0, made.output);
  const auto out = (dir / "linked.hdf5").string();
  const auto r = fit2d("link " + shell_quote(in) + " -o " + shell_quote(out) + " --radius 5x --max-dark 1");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const auto check = run_python("locs_carried.py", {"check", in, out, "link"});
  INFO(check.output);
  CHECK(check.exit_code == 0);
}

TEST_CASE("link_by_group: a link never joins two groups; extra columns become each link's mean in their dtype") {
  // One place: group 0's emitter in frames 0 and 1, group 1's in frames 2 and 3.
  std::vector<Localization> locs;
  for (int f = 0; f < 4; ++f) {
    Localization l;
    l.frame = f;
    l.x = l.y = 10;
    l.lpx = l.lpy = 0.05;
    l.photons = 100;
    locs.push_back(l);
  }
  CarriedMetadata carried;
  carried.extra = {{"group", ColumnType::i32, {0, 0, 1, 1}},
                   {"w", ColumnType::f32, {1, 3, 10, 30}},
                   {"k", ColumnType::u8, {1, 2, 2, 2}}};
  LinkSettings settings;
  settings.radius_px = 0.5;
  settings.max_dark = 1;
  CHECK(link_localizations(locs, settings).size() == 1);  // without the groups: one blink of four
  std::vector<std::int64_t> group_of;
  const auto linked = link_by_group(locs, carried.extra_column("group"), settings, group_of);
  REQUIRE(linked.size() == 2);
  CHECK(linked[0].n == 2);
  CHECK(linked[1].n == 2);
  CHECK(linked[1].frame == 2);
  CHECK(group_of == std::vector<std::int64_t>{0, 0, 1, 1});
  link_extra_columns(carried, group_of, linked.size());
  CHECK(carried.extra[0].values == std::vector<double>{0, 1});
  CHECK(carried.extra[1].values == std::vector<double>{2, 20});
  CHECK(carried.extra[2].values == std::vector<double>{2, 2});  // (1 + 2) / 2 = 1.5, to nearest (even) in u8
}

TEST_CASE("link: Picasso's photon_rate, and the MLE columns by the README's rules (sum, quadrature, mean)") {
  // One blink of three frames with known bounds; a second blink without MLE columns keeps NaN (none to combine).
  std::vector<Localization> locs;
  for (int f = 0; f < 3; ++f) {
    Localization l;
    l.frame = f;
    l.x = l.y = 10;
    l.lpx = l.lpy = 0.05;
    l.photons = 1000 + 100 * f;
    l.background = 10 + f;
    l.sigma = 1.2;
    l.log_likelihood = -20 - f;
    l.iterations = 4 + f;
    l.photons_unc = 30 + 10 * f;
    l.bg_unc = 1 + f;
    l.sx_unc = 0.02;
    l.sy_unc = 0.04;
    locs.push_back(l);
  }
  Localization plain;
  plain.frame = 1;
  plain.x = plain.y = 20;
  plain.lpx = plain.lpy = 0.05;
  plain.photons = 500;
  locs.insert(locs.begin() + 1, plain);
  const auto groups = link_localizations(locs, LinkSettings{1.0, 1});
  REQUIRE(groups.size() == 2);
  const auto& g = groups[0].n == 3 ? groups[0] : groups[1];
  const auto& p = groups[0].n == 3 ? groups[1] : groups[0];
  CHECK(g.photons == doctest::Approx(3300));
  CHECK(g.photon_rate == doctest::Approx(1100));
  CHECK(g.log_likelihood == doctest::Approx(-63));
  CHECK(g.iterations == doctest::Approx(5));  // the mean, as Picasso's link (f4 in the file)
  CHECK(g.photons_unc == doctest::Approx(std::sqrt(900.0 + 1600 + 2500)));
  CHECK(g.bg_unc == doctest::Approx(std::sqrt(1.0 + 4 + 9) / 3));
  CHECK(g.sx_unc == doctest::Approx(std::sqrt(3 * 0.0004) / 3));
  CHECK(g.sy_unc == doctest::Approx(std::sqrt(3 * 0.0016) / 3));
  CHECK(p.photon_rate == doctest::Approx(500));
  CHECK(std::isnan(p.photons_unc));
  CHECK(std::isnan(p.log_likelihood));
}

TEST_CASE("link's default (0.8px, max dark 1) against the true blinks of dense simulated structures") {
  // bench postprocess's link table (README): 12 localizations per frame, 5 % of the detections missed and
  // 4 % overlap outliers. Split: a true blink in more than one group; merge: a group of more than one blink.
  const Params p = fit2d_schema().defaults();
  CHECK(p.get_string("Link/radius") == "0.8px");
  CHECK(p.get_int("Link/max dark") == 1);
  const LinkSettings settings = link_step_settings(p, 130);
  CHECK(settings.radius_px == doctest::Approx(0.8));
  const auto rates = [&](const std::string& structure) {
    const SimulatedLocalizations s = simulate_link_set({structure, 12, 0.04}, 10000, 1);
    std::vector<std::int64_t> group_of;
    static_cast<void>(link_localizations(s.locs, settings, &group_of));
    const LinkRates r = score_link_groups(s.blink, group_of);
    MESSAGE(structure << " dense: " << r.blinks << " blinks, " << r.groups << " groups, split " << 100 * r.split_rate()
                      << " %, merge " << 100 * r.merge_rate() << " %");
    return r;
  };
  const LinkRates lines = rates("lines");
  CHECK(lines.split_rate() < 0.01);
  CHECK(lines.merge_rate() < 0.01);
  // Dense rings put neighbours within 0.8 px that blink together; matching each frame closest first keeps
  // their merges below 1 % (0.84 % with this seed; 1.06 % when rows took the nearest group in row order).
  const LinkRates rings = rates("rings");
  CHECK(rings.split_rate() < 0.01);
  CHECK(rings.merge_rate() < 0.01);
  // The old default 5x splits the outliers' blinks: several times more.
  const SimulatedLocalizations s = simulate_link_set({"lines", 12, 0.04}, 10000, 1);
  std::vector<std::int64_t> group_of;
  static_cast<void>(link_localizations(s.locs, LinkSettings{-5.0, 1}, &group_of));
  CHECK(score_link_groups(s.blink, group_of).split_rate() > 3 * lines.split_rate());
}

TEST_CASE("link matches each frame closest first, not in row order") {
  // Two blinks 0.6 px apart (within the 0.8 px radius of each other). In frame 1 B's row comes first and,
  // displaced (an overlap outlier), lies nearer A's group (0.25 px) than its own (0.35 px); A's row lies
  // 0.02 px from A's group. Taken in row order, B's row would take A's group and A's row B's: a split and
  // a merge. Closest first, each keeps its own.
  std::vector<Localization> locs;
  const auto add = [&](std::int64_t f, double x) {
    Localization l;
    l.frame = f;
    l.x = x;
    l.y = 5;
    l.lpx = l.lpy = 0.05;
    l.photons = 500;
    l.sigma = 1.3;
    locs.push_back(l);
  };
  add(0, 5.0), add(0, 5.6);   // A, B
  add(1, 5.25), add(1, 5.02);  // B first, then A
  add(2, 5.0), add(2, 5.6);
  std::vector<std::int64_t> group_of;
  const auto groups = link_localizations(locs, LinkSettings{0.8, 1}, &group_of);
  REQUIRE(groups.size() == 2);
  CHECK(group_of == std::vector<std::int64_t>{0, 1, 1, 0, 0, 1});
  CHECK(groups[0].n == 3);
  CHECK(groups[0].x == doctest::Approx((5.0 + 5.02 + 5.0) / 3));
  CHECK(groups[1].x == doctest::Approx((5.6 + 5.25 + 5.6) / 3));
}
