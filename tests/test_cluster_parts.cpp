// fit2d and smre beyond one process: part files (--frames A:B --partial), merge
// in any order and over several files (--series), with every way to get it
// wrong refused by one line naming the part; and the part-range rules themselves.
// (mpirun and SLURM run in scripts/cluster-test.)
#include <doctest/doctest.h>

#include <filesystem>
#include <tuple>
#include <vector>

#include "nanoscopy/cluster/part_ranges.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

std::string q(const fs::path& p) { return shell_quote(p.string()); }

fs::path movie(const TempDir& dir, const std::string& name, const std::string& options) {
  const fs::path path = dir / name;
  const auto r = run_command(shell_quote(app_path("bench")) + " simulate movie -o " + q(path) + " " + options);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  return path;
}

PartOrigin part(const std::string& path, const std::string& stack, std::int64_t frames, std::int64_t begin,
                std::int64_t end, const std::string& parameters = "p") {
  return {path, stack + ".tif", stack, parameters, frames, begin, end};
}

std::string message_of(const std::vector<PartOrigin>& parts, bool series) {
  return expect_error<InputError>([&] { arrange_parts(parts, series); }).message();
}

}  // namespace

TEST_CASE("part ranges: any order, every frame once, one stack unless --series") {
  SUBCASE("chunks of one stack in any order come back sorted") {
    const std::vector<PartOrigin> parts{part("c", "s", 10, 7, 10), part("a", "s", 10, 0, 3), part("b", "s", 10, 3, 7)};
    const auto order = arrange_parts(parts, false);
    REQUIRE(order.size() == 3);
    CHECK(order[0].index == 1);
    CHECK(order[1].index == 2);
    CHECK(order[2].index == 0);
    for (const auto& p : order) CHECK(p.offset == 0);
    CHECK(merged_frames(parts, order) == 10);
  }
  SUBCASE("a gap, an overlap and a missing end name the part") {
    CHECK(contains(message_of({part("a", "s", 10, 0, 3), part("b", "s", 10, 4, 10)}, false),
                   "b: frames 3:4 are missing between a and this part"));
    CHECK(contains(message_of({part("a", "s", 10, 0, 5), part("b", "s", 10, 4, 10)}, false),
                   "b: frames 4:10 overlap a (which ends at frame 5)"));
    CHECK(contains(message_of({part("a", "s", 10, 0, 5)}, false), "a: frames 5:10 at the end of the stack are missing"));
    CHECK(contains(message_of({part("a", "s", 10, 1, 10)}, false), "frames 0:1 are missing"));
  }
  SUBCASE("another stack or other parameters are refused") {
    CHECK(contains(message_of({part("a", "s", 10, 0, 5), part("b", "t", 10, 5, 10)}, false),
                   "b: made from a different stack (t.tif)"));
    CHECK(contains(message_of({part("a", "s", 10, 0, 5), part("b", "s", 10, 5, 10, "other")}, true),
                   "b: made with different parameters than a"));
  }
  SUBCASE("--series: stacks in the order given, frames numbered on, each stack whole") {
    const std::vector<PartOrigin> parts{part("t2", "t", 4, 2, 4), part("s", "s", 10, 0, 10), part("t1", "t", 4, 0, 2),
                                        part("u", "u", 3, 0, 3)};
    const auto order = arrange_parts(parts, true);
    REQUIRE(order.size() == 4);
    CHECK(order[0].index == 2);  // t first: its first part came first
    CHECK(order[0].offset == 0);
    CHECK(order[1].index == 0);
    CHECK(order[2].index == 1);
    CHECK(order[2].offset == 4);
    CHECK(order[3].offset == 14);
    CHECK(merged_frames(parts, order) == 17);
    CHECK(contains(message_of({part("s", "s", 10, 0, 10), part("t", "t", 4, 0, 3)}, true),
                   "frames 3:4 at the end of the stack are missing (t.tif)"));
  }
  CHECK_THROWS_AS(arrange_parts(std::vector<PartOrigin>{}, false), UsageError);
}

TEST_CASE("fit2d parts merge to the rows and drift of one run, in any order; --series numbers frames on") {
  TempDir dir;
  const auto stack = movie(dir, "m.tif", "--frames 240 --markers 3 --drift-x 0.01 --seed 5");
  const std::string fit = " --quiet --device cpu";
  REQUIRE(run_tool("fit2d", q(stack) + " -o " + q(dir / "whole.csv") + " --track" + fit).exit_code == 0);
  REQUIRE(run_tool("fit2d", q(stack) + " -o " + q(dir / "whole.hdf5") + fit).exit_code == 0);
  for (const auto& [range, name] : {std::pair{"0:70", "p0.h5"}, {"70:71", "p1.h5"}, {"71:240", "p2.h5"}}) {
    const auto r = run_tool("fit2d", q(stack) + " --frames " + range + " --partial " + q(dir / name) + fit);
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  }
  const std::string parts = " " + q(dir / "p2.h5") + " " + q(dir / "p0.h5") + " " + q(dir / "p1.h5");
  auto r = run_tool("fit2d", "merge --quiet" + parts + " -o " + q(dir / "merged.csv") + " --track");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(read_file(dir / "merged.csv") == read_file(dir / "whole.csv"));
  CHECK(read_file(dir / "merged_drift.csv") == read_file(dir / "whole_drift.csv"));
  CHECK(read_file(dir / "merged_drift.txt") == read_file(dir / "whole_drift.txt"));
  r = run_tool("fit2d", "merge --quiet" + parts + " -o " + q(dir / "merged.hdf5"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  // Picasso's float32 rows: rounded once, from the same doubles, as in one run
  const auto merged_rows = read_localizations((dir / "merged.hdf5").string());
  const auto whole_rows = read_localizations((dir / "whole.hdf5").string());
  REQUIRE(merged_rows.size() == whole_rows.size());
  for (std::size_t i = 0; i < whole_rows.size(); ++i) {
    const auto &a = merged_rows[i], &b = whole_rows[i];
    CHECK((a.frame == b.frame && a.x == b.x && a.y == b.y && a.photons == b.photons && a.sigma == b.sigma &&
           a.background == b.background && a.lpx == b.lpx && a.chi2 == b.chi2 && a.iterations == b.iterations &&
           a.status == b.status));
  }
  // The same metadata but for the run each file belongs to (its generation and manifest).
  const auto without_run = [](std::string yaml) {
    for (const char* key : {"Run generation: ", "Run manifest: "}) {
      const auto at = yaml.find(key);
      if (at != std::string::npos) yaml.erase(at, yaml.find('\n', at) - at + 1);
    }
    return yaml;
  };
  CHECK(contains(read_file(dir / "merged.yaml"), "Run manifest: merged.hdf5.run.json\n"));
  CHECK(without_run(read_file(dir / "merged.yaml")) == without_run(read_file(dir / "whole.yaml")));

  SUBCASE("--series: a second file's frames follow the first's") {
    const auto second = movie(dir, "n.tif", "--frames 30 --seed 6");
    REQUIRE(run_tool("fit2d", q(second) + " --partial " + q(dir / "n.h5") + fit).exit_code == 0);
    REQUIRE(run_tool("fit2d", q(second) + " -o " + q(dir / "n_locs.csv") + fit).exit_code == 0);
    r = run_tool("fit2d", "merge --quiet --series" + parts + " " + q(dir / "n.h5") + " -o " + q(dir / "series.hdf5"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const auto merged = read_localizations((dir / "series.hdf5").string());
    const auto first = read_localizations((dir / "whole.hdf5").string());
    const auto alone = read_localizations((dir / "n_locs.csv").string(), 108);
    REQUIRE(merged.size() == first.size() + alone.size());
    CHECK(merged[first.size()].frame == alone[0].frame + 240);
    CHECK(merged.back().frame == alone.back().frame + 240);
    CHECK(merged.back().frame < 270);
  }
  SUBCASE("bad merges: one line naming the part, nothing written") {
    const std::string bad = " -o " + q(dir / "bad.csv");
    check_one_line_error(run_tool("fit2d", "merge " + q(dir / "p0.h5") + " " + q(dir / "p2.h5") + bad), "fit2d", 3, "p2.h5",
                         "frames 70:71 are missing");
    check_one_line_error(run_tool("fit2d", "merge" + parts + " " + q(dir / "p1.h5") + bad), "fit2d", 3, "p1.h5", "overlap");
    check_one_line_error(run_tool("fit2d", "merge " + q(dir / "p0.h5") + " " + q(dir / "p1.h5") + bad), "fit2d", 3, "p1.h5",
                         "frames 71:240 at the end of the stack are missing");
    REQUIRE(run_tool("fit2d", q(stack) + " --frames 71:240 --threshold 7 --partial " + q(dir / "t2.h5") + fit).exit_code == 0);
    check_one_line_error(run_tool("fit2d", "merge " + q(dir / "p0.h5") + " " + q(dir / "p1.h5") + " " + q(dir / "t2.h5") + bad),
                         "fit2d", 3, "t2.h5", "different parameters");
    const auto other = movie(dir, "o.tif", "--frames 240 --seed 9");
    REQUIRE(run_tool("fit2d", q(other) + " --frames 71:240 --partial " + q(dir / "o2.h5") + fit).exit_code == 0);
    check_one_line_error(run_tool("fit2d", "merge " + q(dir / "p0.h5") + " " + q(dir / "p1.h5") + " " + q(dir / "o2.h5") + bad),
                         "fit2d", 3, "o2.h5", "different stack (o.tif)");
    check_one_line_error(run_tool("fit2d", "merge " + q(dir / "whole.hdf5") + bad), "fit2d", 3, "whole.hdf5",
                         "not a part file of this tool");
    check_one_line_error(run_tool("fit2d", "merge " + q(stack) + bad), "fit2d", 3, "m.tif", "not an HDF5 file");
    check_one_line_error(run_tool("fit2d", "merge " + q(dir / "none.h5") + bad), "fit2d", 3, "none.h5", "no such file");
    check_one_line_error(run_tool("fit2d", q(stack) + " --partial " + q(dir / "x.h5") + " --track" + fit), "fit2d", 2,
                         "--partial", "fit2d merge");
    CHECK_FALSE(fs::exists(dir / "bad.csv"));
    CHECK_FALSE(fs::exists(dir / "x.h5"));
  }
}

TEST_CASE("smre parts merge to the pages of one run, streamed into one stack; --series; bad merges refused") {
  TempDir dir;
  const auto stack = movie(dir, "s.tif", "--frames 7 --width 32 --height 32 --seed 2");
  const std::string restore = " --quiet --icd --psf 1.3 --iterations 15 --device cpu";
  REQUIRE(run_tool("smre", q(stack) + " -o " + q(dir / "whole.tif") + restore).exit_code == 0);
  REQUIRE(run_tool("smre", q(stack) + " --frames 0:3 --partial " + q(dir / "a.h5") + restore).exit_code == 0);
  REQUIRE(run_tool("smre", q(stack) + " --frames 3:7 --partial " + q(dir / "b.h5") + restore).exit_code == 0);
  auto r = run_tool("smre", "merge --quiet " + q(dir / "b.h5") + " " + q(dir / "a.h5") + " -o " + q(dir / "merged.tif"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(read_file(dir / "merged.tif") == read_file(dir / "whole.tif"));

  const auto second = movie(dir, "t.tif", "--frames 2 --width 32 --height 32 --seed 3");
  REQUIRE(run_tool("smre", q(second) + " -o " + q(dir / "t_smre.tif") + restore).exit_code == 0);
  REQUIRE(run_tool("smre", q(second) + " --partial " + q(dir / "t.h5") + restore).exit_code == 0);
  r = run_tool("smre", "merge --quiet --series " + q(dir / "a.h5") + " " + q(dir / "t.h5") + " " + q(dir / "b.h5") + " -o " +
                       q(dir / "series.h5"));
  CHECK_MESSAGE(r.exit_code == 0, r.output);  // s's parts come first: its first part was given first
  auto series = open_stack((dir / "series.h5").string() + ":/data");
  REQUIRE(series->info().frames == 9);
  std::vector<float> got(32 * 32), want(32 * 32);
  series->read_float(8, 1, got.data());
  open_stack((dir / "t_smre.tif").string())->read_float(1, 1, want.data());
  CHECK(got == want);
  series->read_float(6, 1, got.data());
  open_stack((dir / "whole.tif").string())->read_float(6, 1, want.data());
  CHECK(got == want);

  const std::string bad = " -o " + q(dir / "bad.tif");
  check_one_line_error(run_tool("smre", "merge " + q(dir / "b.h5") + bad), "smre", 3, "b.h5", "frames 0:3 are missing");
  check_one_line_error(run_tool("smre", "merge " + q(dir / "a.h5") + " " + q(dir / "t.h5") + bad), "smre", 3, "t.h5",
                       "--series");
  REQUIRE(run_tool("smre", q(stack) + " --frames 3:7 --partial " + q(dir / "b2.h5") + restore + " --lambda 2").exit_code == 0);
  check_one_line_error(run_tool("smre", "merge " + q(dir / "a.h5") + " " + q(dir / "b2.h5") + bad), "smre", 3, "b2.h5",
                       "different parameters");
  check_one_line_error(run_tool("smre", q(stack) + " --partial " + q(dir / "p.tif") + restore), "smre", 2, "p.tif", "HDF5");
  check_one_line_error(run_tool("smre", q(stack) + " --partial " + q(dir / "p.h5") + " --log " + q(dir / "l.csv") + restore),
                       "smre", 2, "--partial", "one process");
  CHECK_FALSE(fs::exists(dir / "bad.tif"));
  CHECK_FALSE(fs::exists(dir / "p.tif"));
  CHECK_FALSE(fs::exists(dir / "p.h5"));
}

TEST_CASE("merge refuses a part cut from another movie of the same size and frame count (whole-movie fingerprint)") {
  TempDir dir;
  // Picasso's 100-frame movie, and a copy whose frames 10 to 29 differ (its first, middle and last frames,
  // all the old fingerprint read, are the same).
  const std::string bytes = read_file(peer_file("picasso_testdata.raw"));
  const std::string yaml = read_file(peer_file("picasso_testdata.yaml"));
  const std::size_t frame_bytes = 32 * 32 * 2;
  REQUIRE(bytes.size() == 100 * frame_bytes);
  std::string other = bytes;
  for (std::size_t i = 10 * frame_bytes; i < 30 * frame_bytes; i += 2) other[i] = static_cast<char>(other[i] ^ 1);
  write_file(dir / "a.raw", bytes);
  write_file(dir / "a.yaml", yaml);
  write_file(dir / "b.raw", other);
  write_file(dir / "b.yaml", yaml);
  const std::string fit = " --quiet --device cpu";
  for (const auto& [movie, range, part] : {std::tuple{"a.raw", "0:50", "a0.h5"}, {"a.raw", "50:100", "a1.h5"},
                                           {"b.raw", "50:100", "b1.h5"}}) {
    const auto r = run_tool("fit2d", q(dir / movie) + " --frames " + range + " --partial " + q(dir / part) + fit);
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  }
  REQUIRE(run_tool("fit2d", "merge --quiet " + q(dir / "a0.h5") + " " + q(dir / "a1.h5") + " -o " + q(dir / "ok.csv"))
              .exit_code == 0);
  check_one_line_error(
      run_tool("fit2d", "merge --quiet " + q(dir / "a0.h5") + " " + q(dir / "b1.h5") + " -o " + q(dir / "bad.csv")),
      "fit2d", 3, "b1.h5", "different stack (b.raw)");
  CHECK_FALSE(fs::exists(dir / "bad.csv"));
  // sofi's parts too.
  for (const auto& [movie, range, part] : {std::tuple{"a.raw", "0:50", "sa0.h5"}, {"b.raw", "50:100", "sb1.h5"}}) {
    const auto r = run_tool("sofi", q(dir / movie) + " --block 10 --frames " + range + " --partial " + q(dir / part) +
                                        " --quiet --device cpu");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  }
  const auto s = run_tool("sofi", "merge --quiet " + q(dir / "sa0.h5") + " " + q(dir / "sb1.h5") + " -o " + q(dir / "bad.tif"));
  check_one_line_error(s, "sofi", 3, "sb1.h5", "b.raw");
  CHECK_FALSE(fs::exists(dir / "bad.tif"));
}

TEST_CASE("merge refuses a part made before the whole-movie fingerprint, on one line saying so") {
  TempDir dir;
  const std::string fit = " --quiet --device cpu";
  const auto m = movie(dir, "m.tif", "--frames 20 --seed 3");
  REQUIRE(run_tool("fit2d", q(m) + " --frames 0:10 --partial " + q(dir / "p0.h5") + fit).exit_code == 0);
  REQUIRE(run_tool("fit2d", q(m) + " --frames 10:20 --partial " + q(dir / "p1.h5") + fit).exit_code == 0);
  // An old part: the attribute was stack_fingerprint (h5py renames it as an older build wrote it).
  const auto py = run_command("/usr/bin/python3 -c \"import h5py,sys; f=h5py.File(sys.argv[1],'r+'); "
                              "f.attrs['stack_fingerprint']=f.attrs['movie_fingerprint']; del f.attrs['movie_fingerprint']\" " +
                              q(dir / "p1.h5"));
  REQUIRE_MESSAGE(py.exit_code == 0, py.output);
  check_one_line_error(
      run_tool("fit2d", "merge --quiet " + q(dir / "p0.h5") + " " + q(dir / "p1.h5") + " -o " + q(dir / "bad.csv")),
      "fit2d", 3, "p1.h5", "made by an older version of nanoscopy");
  CHECK_FALSE(fs::exists(dir / "bad.csv"));
}
