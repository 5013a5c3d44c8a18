// sofi as a user runs it: pages and formats, splits for frc, partial sums and
// merge (in any order, with every way to get it wrong), SMRE before and after,
// and bad input answered by one line with nothing left behind.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nanoscopy/io/stack_reader.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

CommandResult sofi(const std::string& args) { return run_command(shell_quote(app_path("sofi")) + " " + args); }

std::string q(const fs::path& p) { return shell_quote(p.string()); }

// A small quantum-dot stack from bench simulate blinking.
fs::path simulate(const TempDir& dir, const std::string& name, int frames, int size, int seed) {
  const fs::path path = dir / name;
  const auto r = run_command(shell_quote(app_path("bench")) + " simulate blinking --quiet -o " + q(path) +
                             " --frames " + std::to_string(frames) + " --size " + std::to_string(size) +
                             " --emitters 40 --seed " + std::to_string(seed));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  return path;
}

std::vector<float> page(const fs::path& path, std::int64_t k, std::int64_t* frames = nullptr) {
  auto reader = open_stack(path.string());
  if (frames) *frames = reader->info().frames;
  std::vector<float> v(static_cast<std::size_t>(reader->info().pixels_per_frame()));
  reader->read_float(k, 1, v.data());
  return v;
}

double max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double scale = 0, worst = 0;
  for (float v : b) scale = std::max(scale, std::abs(static_cast<double>(v)));
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
  return worst / scale;
}

void expect_one_line_error(const CommandResult& r, int code, const std::string& fragment) {
  CAPTURE(r.output);
  CHECK(r.exit_code == code);
  CHECK(r.output.find(fragment) != std::string::npos);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
}

}  // namespace

TEST_CASE("sofi writes one float32 page per order and the mean, by default beside the stack") {
  TempDir dir;
  const auto stack = simulate(dir, "qd.tif", 1200, 40, 1);
  const auto r = sofi("--quiet " + q(stack));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  std::int64_t pages = 0;
  const auto order2 = page(dir / "qd_sofi.tif", 0, &pages);
  CHECK(pages == 4);
  // the mean page is the mean of the frames
  auto reader = open_stack(stack.string());
  const auto n = reader->info().pixels_per_frame();
  std::vector<double> mean(static_cast<std::size_t>(n));
  std::vector<float> frame(static_cast<std::size_t>(n));
  for (std::int64_t t = 0; t < 1200; ++t) {
    reader->read_float(t, 1, frame.data());
    for (std::int64_t i = 0; i < n; ++i) mean[static_cast<std::size_t>(i)] += frame[static_cast<std::size_t>(i)] / 1200.0;
  }
  const auto mean_page = page(dir / "qd_sofi.tif", 3);
  // Each page is named in the ImageJ metadata (slice labels), as tifffile and ImageJ read them.
  if (python_available()) {
    const auto check = run_python("tiff_check_imagej.py",
                                  {(dir / "qd_sofi.tif").string(), "IYX", "100", "order 2 auto-cumulant, lags 0,1",
                                   "order 3 auto-cumulant, lags 0,1,2", "order 4 auto-cumulant, lags 0,1,2,3", "mean"});
    CHECK_MESSAGE(check.exit_code == 0, check.output);
  }
  for (std::int64_t i = 0; i < n; ++i)
    CHECK(mean_page[static_cast<std::size_t>(i)] == doctest::Approx(mean[static_cast<std::size_t>(i)]).epsilon(1e-5));
  // second-order SOFI of blinking emitters is positive where they are and near zero elsewhere
  const float peak = *std::max_element(order2.begin(), order2.end());
  CHECK(peak > 0);
  std::vector<float> sorted = order2;
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::abs(sorted[sorted.size() / 10]) < 0.05 * peak);

  // HDF5: named datasets; cross-cumulants on finer grids
  REQUIRE(sofi("--quiet " + q(stack) + " -o " + q(dir / "x.h5") + " --cross --orders 2,3 --block 400").exit_code == 0);
  auto o2 = open_stack((dir / "x.h5").string() + ":/order2");
  auto o3 = open_stack((dir / "x.h5").string() + ":/order3");
  auto m = open_stack((dir / "x.h5").string() + ":/mean");
  CHECK(o2->info().width == 80);
  CHECK(o3->info().height == 120);
  CHECK(m->info().width == 40);
  // the same as TIFF: one file per grid
  REQUIRE(sofi("--quiet " + q(stack) + " -o " + q(dir / "x.tif") + " --cross --orders 2 --block 400").exit_code == 0);
  CHECK(fs::exists(dir / "x_order2.tif"));
  CHECK(fs::exists(dir / "x_mean.tif"));
  CHECK(max_rel_diff(page(dir / "x_order2.tif", 0), page((dir / "x.h5").string() + ":/order2", 0)) < 1e-6);
}

TEST_CASE("sofi --split writes the even/odd and half images frc compares") {
  TempDir dir;
  const auto stack = simulate(dir, "qd.tif", 1000, 32, 2);
  REQUIRE(sofi("--quiet " + q(stack) + " -o " + q(dir / "s.tif") + " --orders 2 --split odd-even --block 250").exit_code == 0);
  CHECK(fs::exists(dir / "s.tif"));
  CHECK(fs::exists(dir / "s_even.tif"));
  CHECK(fs::exists(dir / "s_odd.tif"));
  REQUIRE(sofi("--quiet " + q(stack) + " -o " + q(dir / "h.tif") + " --orders 2 --split halves --block 250").exit_code == 0);
  CHECK(fs::exists(dir / "h_first.tif"));
  CHECK(fs::exists(dir / "h_second.tif"));
  // halves: each half alone gives the same image as --frames over that half
  REQUIRE(sofi("--quiet " + q(stack) + " -o " + q(dir / "f.tif") + " --orders 2 --block 250 --frames 0:500").exit_code == 0);
  CHECK(max_rel_diff(page(dir / "h_first.tif", 0), page(dir / "f.tif", 0)) < 1e-6);
}

TEST_CASE("partial sums merge to the single-run image in any order; bad merges are refused") {
  TempDir dir;
  const auto stack = simulate(dir, "qd.tif", 1100, 24, 3);
  const std::string common = " --quiet --orders 2,3,4 --block 300 ";
  REQUIRE(sofi(common + q(stack) + " -o " + q(dir / "whole.tif")).exit_code == 0);
  REQUIRE(sofi(common + q(stack) + " --frames 0:250 --partial " + q(dir / "p0.h5")).exit_code == 0);
  REQUIRE(sofi(common + q(stack) + " --frames 250:701 --partial " + q(dir / "p1.h5")).exit_code == 0);
  REQUIRE(sofi(common + q(stack) + " --frames 701: --partial " + q(dir / "p2.h5")).exit_code == 0);
  for (const std::string parts : {" p0.h5 p1.h5 p2.h5", " p2.h5 p0.h5 p1.h5"}) {
    const auto r = run_command("cd " + q(dir.path()) + " && " + shell_quote(app_path("sofi")) + " merge --quiet" + parts +
                               " -o merged.tif");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    for (int k = 0; k < 4; ++k) CHECK(max_rel_diff(page(dir / "merged.tif", k), page(dir / "whole.tif", k)) < 1e-6);
    fs::remove(dir / "merged.tif");
  }
  const std::string merge = "merge --quiet -o " + q(dir / "bad.tif") + " ";
  expect_one_line_error(sofi(merge + q(dir / "p0.h5") + " " + q(dir / "p2.h5")), 3, "frames 250:701 are missing");
  expect_one_line_error(sofi(merge + q(dir / "p0.h5") + " " + q(dir / "p0.h5") + " " + q(dir / "p1.h5") + " " +
                             q(dir / "p2.h5")),
                        3, "overlap");
  expect_one_line_error(sofi(merge + q(dir / "p0.h5") + " " + q(dir / "p1.h5")), 3, "at the end of the stack are missing");
  // other parameters
  REQUIRE(sofi(" --quiet --orders 2 --block 300 " + q(stack) + " --frames 701: --partial " + q(dir / "o2.h5")).exit_code == 0);
  expect_one_line_error(sofi(merge + q(dir / "p0.h5") + " " + q(dir / "p1.h5") + " " + q(dir / "o2.h5")), 3,
                        "different parameters");
  // another stack of the same shape
  const auto other = simulate(dir, "other.tif", 1100, 24, 4);
  REQUIRE(sofi(common + q(other) + " --frames 701: --partial " + q(dir / "x2.h5")).exit_code == 0);
  expect_one_line_error(sofi(merge + q(dir / "p0.h5") + " " + q(dir / "p1.h5") + " " + q(dir / "x2.h5")), 3,
                        "different stack");
  // not a partial file
  expect_one_line_error(sofi(merge + q(stack)), 3, "qd.tif");
  CHECK_FALSE(fs::exists(dir / "bad.tif"));
}

namespace {
// sofi --pre-smre / --post-smre with the shipped parameter file capped at `iterations`, on `frames` frames in blocks
// of `block`: this checks the wiring (both orders, one device, the mean page), not SMRE's convergence (test_smre_*).
void sofi_with_smre(int frames, int block, int iterations) {
  TempDir dir;
  const auto stack = simulate(dir, "qd.tif", frames, 32, 5);
  std::ifstream shipped(fs::path(NANOSCOPY_SOURCE_DIR) / "params/sofi-smre.prm");
  std::stringstream text;
  text << shipped.rdbuf();
  std::string listing = text.str();
  const std::string cap = "set maximum iterations = 200";
  REQUIRE(listing.find(cap) != std::string::npos);
  listing.replace(listing.find(cap), cap.size(), "set maximum iterations = " + std::to_string(iterations));
  std::ofstream(dir / "sofi-smre.prm") << listing;
  const std::string prm = q(dir / "sofi-smre.prm");
  const std::string common = " --quiet --orders 2 --block " + std::to_string(block) + " --device cpu " + q(stack);
  REQUIRE(sofi(common + " -o " + q(dir / "plain.tif")).exit_code == 0);
  auto r = sofi(common + " -o " + q(dir / "pre.tif") + " --pre-smre " + prm);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = sofi(common + " -o " + q(dir / "post.tif") + " --post-smre " + prm);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const auto plain = page(dir / "plain.tif", 0), pre = page(dir / "pre.tif", 0), post = page(dir / "post.tif", 0);
  CHECK(max_rel_diff(pre, plain) > 1e-3);
  CHECK(max_rel_diff(post, plain) > 1e-3);
  // the mean page of SOFI2(SMRE) is the mean of the restored frames: finite, and near the raw mean in total
  const auto mean_plain = page(dir / "plain.tif", 1), mean_pre = page(dir / "pre.tif", 1);
  double a = 0, b = 0;
  for (std::size_t i = 0; i < mean_plain.size(); ++i) a += mean_plain[i], b += mean_pre[i];
  CHECK(std::isfinite(b));
  CHECK(b == doctest::Approx(a).epsilon(0.1));
  expect_one_line_error(sofi(common + " -o " + q(dir / "x.tif") + " --pre-smre " + q(dir / "missing.prm")), 2,
                        "missing.prm");
}
}  // namespace

// The default tier: 40 frames, SMRE capped at 10 iterations (at 3 the restored mean is still 11 % off).
TEST_CASE("sofi with SMRE before (SOFI2(SMRE)) and after (SMRE(SOFI2)), 40 frames") { sofi_with_smre(40, 20, 10); }

// The full tier: 120 frames, 20 iterations (minutes on two cores).
TEST_CASE("sofi with SMRE before (SOFI2(SMRE)) and after (SMRE(SOFI2))" * doctest::test_suite("full")) {
  sofi_with_smre(120, 60, 20);
}

TEST_CASE("bad sofi input: one line, a distinct exit code, no output") {
  TempDir dir;
  const auto stack = simulate(dir, "qd.tif", 300, 16, 6);
  const std::string out = " -o " + q(dir / "out.tif") + " ";
  expect_one_line_error(sofi(q(stack) + out + "--orders 9 --block 100"), 2, "order 9 is outside 2..6");
  expect_one_line_error(sofi(q(stack) + out + "--orders 2,3 --lags 0,1,1 --block 100"), 2, "lags must be distinct");
  expect_one_line_error(sofi(q(stack) + out + "--orders 2 --lags 0,x"), 2, "--lags");
  expect_one_line_error(sofi(q(stack) + out + "--cross --orders 5"), 2, "outside 2..4");
  expect_one_line_error(sofi(q(stack) + out), 3, "shorter than one block of 500");
  expect_one_line_error(sofi(q(stack) + out + "--orders 2 --lags 0,200 --block 150"), 2, "largest lag (200)");
  expect_one_line_error(sofi(q(dir / "nope.tif") + out), 3, "nope.tif");
  expect_one_line_error(sofi(q(stack) + " -o " + q(dir / "out.png") + " --block 100"), 2, "out.png");
  expect_one_line_error(sofi(q(stack) + " -o " + q(dir / "no/such/dir/out.tif") + " --block 100"), 4, "out.tif");
  CHECK_FALSE(fs::exists(dir / "out.tif"));
  CHECK_FALSE(fs::exists(dir / "out.png"));
  CHECK(sofi("--help").output.find("sofi merge") != std::string::npos);
  // job scripts ask for the frame count
  const auto count = sofi("frames " + q(stack));
  CHECK(count.exit_code == 0);
  CHECK(count.output == "300\n");
  expect_one_line_error(sofi("frames " + q(dir / "nope.tif")), 3, "nope.tif");
  // the SLURM wrapper refuses more chunks than frames before submitting anything
  const std::string submit = "NANOSCOPY_BIN=" + shell_quote(fs::path(app_path("sofi")).parent_path().string()) + " " +
                             shell_quote(std::string(NANOSCOPY_SOURCE_DIR) + "/scripts/nanoscopy-submit");
  expect_one_line_error(run_command(submit + " sofi " + q(stack) + " -o " + q(dir / "c.tif") + " --chunks 301"), 2,
                        "301 chunks for 300 frames");
  expect_one_line_error(run_command(submit + " frc " + q(stack) + " -o " + q(dir / "c.csv")), 2,
                        "TOOL is sofi, fit2d or smre");
  expect_one_line_error(run_command(submit + " sofi --files " + q(stack) + " -o " + q(dir / "c.tif")), 2,
                        "separate files do not");
  fs::create_directories(dir / "c_sofi_parts");
  write_file(dir / "c_sofi_parts" / "part-00000.h5", "stale");
  expect_one_line_error(run_command(submit + " sofi " + q(stack) + " -o " + q(dir / "c.tif")), 2,
                        "already holds part files");
}

// ---- issue 19: drift and bleaching corrections (first pass) ----

TEST_CASE("sofi --undrift writes the drift beside the image; --partial refuses it") {
  TempDir dir;
  const fs::path stack = dir / "drift.tif";
  const auto sim = run_command(shell_quote(app_path("bench")) + " simulate blinking --quiet -o " + q(stack) +
                               " --frames 800 --size 48 --emitters 80 --seed 5 --blinking exponential --drift-x 0.004 --drift-y -0.002");
  REQUIRE_MESSAGE(sim.exit_code == 0, sim.output);
  const fs::path out = dir / "s.tif";
  const auto r = sofi(q(stack) + " -o " + q(out) + " --orders 2 --block 200 --undrift --drift-block 100 " +
                      "--bleach-correction exponential --pixel-size 100");
  CAPTURE(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "first pass over 800 frames"));
  CHECK(contains(r.output, "drift of 8 blocks"));
  CHECK(fs::exists(dir / "s_drift.png"));
  const std::string csv = read_file(dir / "s_drift.csv");
  CHECK(csv.rfind("frame,dx_px,dy_px,dx_nm,dy_nm\n", 0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 801);
  // The last frame's drift: imposed 799 * (0.004, -0.002) px = (3.2, -1.6) px, i.e. (320, -160) nm; this
  // checks the wiring (the accuracy is test_sofi_drift.cpp's): within 0.25 px.
  const auto last = csv.substr(csv.rfind("799,"));
  double frame = 0, dx = 0, dy = 0, dx_nm = 0, dy_nm = 0;
  REQUIRE(std::sscanf(last.c_str(), "%lf,%lf,%lf,%lf,%lf", &frame, &dx, &dy, &dx_nm, &dy_nm) == 5);
  CHECK(std::abs(dx - 3.196) < 0.25);
  CHECK(std::abs(dy + 1.598) < 0.25);
  CHECK(dx_nm == doctest::Approx(100 * dx));

  expect_one_line_error(sofi(q(stack) + " --frames 0:400 --partial " + q(dir / "p.h5") + " --undrift"), 2,
                        "--undrift measures the whole range in a first pass");
  expect_one_line_error(sofi(q(stack) + " -o " + q(dir / "t.tif") + " --bleach-correction linear"), 2,
                        "bleach");
  expect_one_line_error(sofi(q(stack) + " -o " + q(dir / "t.tif") + " --undrift --drift-block 500"), 3,
                        "at least 2 drift blocks");
  CHECK_FALSE(fs::exists(dir / "t.tif"));
}
