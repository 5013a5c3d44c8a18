// fit2d STACK --undrift --link --render (fit2d/postprocess.hpp) end to end on a
// simulated drifting movie: every file in its place, read back; the drift
// recovered against the simulator's truth; the chain equal to the subcommands
// typed one after another; linking fewer rows; the picture's size and pixel
// size. And the bad inputs, refused before any fitting. Also bench simulate
// movie's imposed drift and structures against their own truth files.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

// RMS per axis (nm) of estimate − truth over the frames after removing the mean difference; both drift
// CSVs as fit2d undrift writes them (frame, dx [nm], dy [nm], ...).
double drift_rms_error(const std::vector<std::vector<double>>& estimate, const std::vector<std::vector<double>>& truth) {
  REQUIRE(estimate.size() == truth.size());
  double mx = 0, my = 0;
  const auto n = static_cast<double>(truth.size());
  for (std::size_t i = 0; i < truth.size(); ++i) {
    mx += (estimate[i][1] - truth[i][1]) / n;
    my += (estimate[i][2] - truth[i][2]) / n;
  }
  double s = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    const double ex = estimate[i][1] - truth[i][1] - mx, ey = estimate[i][2] - truth[i][2] - my;
    s += ex * ex + ey * ey;
  }
  return std::sqrt(s / (2 * n));
}

// The files in `dir`, sorted, for "nothing was written" checks.
std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

const std::string kCamera = " --baseline 100 --sensitivity 0.5 --gain 1 ";

}  // namespace

TEST_CASE("bench simulate movie: imposed drift (linear + walk) and structures, each with its truth file") {
  TempDir dir;
  const auto movie = (dir / "m.tif").string();
  const auto r = run_tool("bench", "-q simulate movie -o " + shell_quote(movie) +
                                   " --frames 200 --width 48 --height 48 --emitters 24 --structure rings --rings 2 "
                                   "--drift-linear 500 --drift-angle 90 --drift-walk 2 --pixel-size 100");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto drift = read_numeric_csv(dir / "m_drift.csv");
  const auto emitters = read_numeric_csv(dir / "m_emitters.csv");
  const auto truth = read_numeric_csv(dir / "m_truth.csv");
  REQUIRE(drift.size() == 200);
  REQUIRE(emitters.size() == 24);
  REQUIRE(!truth.empty());
  // Frame 0 is undrifted; 500 nm per 1000 frames straight along +y plus a walk of 2 nm/√frame per axis:
  // after 199 frames y has moved 99.5 nm ± a walk of ≈ 28 nm, x only by the walk.
  CHECK(drift[0][1] == 0.0);
  CHECK(drift[0][2] == 0.0);
  CHECK(std::abs(drift[199][2] - 99.5) < 4 * 2 * std::sqrt(199.0));
  CHECK(std::abs(drift[199][1]) < 4 * 2 * std::sqrt(199.0));
  double step2 = 0;  // the walk's steps about the linear part: 2 nm per frame per axis
  for (std::size_t t = 1; t < drift.size(); ++t) {
    const double sx = drift[t][1] - drift[t - 1][1];
    step2 += sx * sx;
  }
  CHECK(std::sqrt(step2 / 199.0) == doctest::Approx(2.0).epsilon(0.2));
  // Every emitter image sits at its emitter plus the frame's drift.
  for (const auto& row : truth) {
    const auto f = static_cast<std::size_t>(row[1]) - 1;  // frames from 1
    double best = 1e9;
    for (const auto& e : emitters) best = std::min(best, std::hypot(row[2] - e[1] - drift[f][1], row[3] - e[2] - drift[f][2]));
    CHECK(best < 1e-6);
  }
  // Two rings of 12: each emitter of a ring at one distance (150–300 nm) from the ring's centre.
  for (std::size_t ring = 0; ring < 2; ++ring) {
    double cx = 0, cy = 0;
    for (std::size_t k = 0; k < 12; ++k) cx += emitters[ring * 12 + k][1] / 12, cy += emitters[ring * 12 + k][2] / 12;
    const double radius = std::hypot(emitters[ring * 12][1] - cx, emitters[ring * 12][2] - cy);
    CHECK(radius >= 150 - 1e-6);
    CHECK(radius <= 300 + 1e-6);
    for (std::size_t k = 0; k < 12; ++k)
      CHECK(std::hypot(emitters[ring * 12 + k][1] - cx, emitters[ring * 12 + k][2] - cy) == doctest::Approx(radius));
  }
}

TEST_CASE("fit2d STACK --undrift --link --render: the pipeline in one line, read back against the truth") {
  TempDir dir;
  // 3,000 frames of 64 × 64 px (108 nm), 40 emitters blinking 10 % of the time, drifting 200 nm per 1000 frames
  // (600 nm in all) plus a walk: RCC with segments of 500 frames (6 segments).
  const auto movie = (dir / "movie.tif").string();
  auto r = run_tool("bench", "-q simulate movie -o " + shell_quote(movie) +
                             " --frames 3000 --emitters 40 --photons 3000 --drift-linear 200 --drift-walk 0.3");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // The undrift settings from a parameter file's subsections, the others on the command line.
  write_file(dir / "post.prm",
             "subsection Postprocess\n  set undrift = true\nend\nsubsection Undrift\n  set segment = 500\nend\n");
  const auto out = (dir / "locs.hdf5").string();
  r = run_tool("fit2d", "-q " + shell_quote(movie) + " -o " + shell_quote(out) + kCamera + " --params " +
                        shell_quote((dir / "post.prm").string()) + " --link --render --render-pixel 20");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // Every file, in Picasso's naming, and the summary names each.
  for (const char* name : {"locs.hdf5", "locs.yaml", "locs_undrift.hdf5", "locs_undrift.yaml", "locs_undrift_drift.txt",
                           "locs_undrift_drift.csv", "locs_undrift_drift.png", "locs_undrift_link.hdf5",
                           "locs_undrift_link.yaml", "locs_undrift_link.tif", "locs_undrift_link.png"}) {
    CHECK_MESSAGE(fs::exists(dir / name), name);
    if (std::string(name).ends_with(".yaml")) continue;  // named with its .hdf5
    CHECK_MESSAGE(contains(r.output, (dir / name).string()), name);
  }
  for (const auto& name : listing(dir.path())) CHECK_MESSAGE(name.find(".tmp") == std::string::npos, name);

  // The drift: recovered to well within the imposed one's size.
  const auto truth = read_numeric_csv(dir / "movie_drift.csv");
  const auto estimate = read_numeric_csv(dir / "locs_undrift_drift.csv");
  const std::vector<std::vector<double>> zero(truth.size(), std::vector<double>{0, 0, 0});
  const double error = drift_rms_error(estimate, truth), imposed = drift_rms_error(zero, truth);
  MESSAGE("pipeline drift: RMS error " << error << " nm per axis against an imposed drift of RMS " << imposed << " nm");
  CHECK(imposed > 100);
  CHECK(error < 6);  // 2.3 nm measured: 11,429 localizations of 40 emitters, 6 segments

  // The chain is the subcommands typed one after another: the same drift, the same groups.
  r = run_tool("fit2d", "undrift " + shell_quote(out) + " -o " + shell_quote((dir / "by_hand.hdf5").string()) +
                        " --segment 500 -q");
  REQUIRE(r.exit_code == 0);
  CHECK(read_file(dir / "by_hand_drift.txt") == read_file(dir / "locs_undrift_drift.txt"));

  // Localizations: undrift keeps them (less any Picasso's rules drop at the border), link merges blinks.
  const auto locs = read_localization_file(out);
  const auto undrifted = read_localization_file((dir / "locs_undrift.hdf5").string());
  const auto linked = read_localization_file((dir / "locs_undrift_link.hdf5").string());
  CHECK(undrifted.locs.size() <= locs.locs.size());
  CHECK(undrifted.locs.size() > locs.locs.size() * 9 / 10);
  CHECK(linked.locs.size() < undrifted.locs.size() * 3 / 4);  // blinks of 3 frames on average
  std::int64_t merged = 0;
  for (const auto& l : linked.locs) merged += l.n;
  CHECK(merged == static_cast<std::int64_t>(undrifted.locs.size()));
  // Undrifted, the localizations sit on their emitters (less the drift's mean over the frames: the
  // estimate's free constant, which undrift sets to zero mean); before, the drift spreads them.
  const auto emitters = read_numeric_csv(dir / "movie_emitters.csv");
  double mean_dx = 0, mean_dy = 0;
  for (const auto& row : truth) mean_dx += row[1] / static_cast<double>(truth.size()), mean_dy += row[2] / static_cast<double>(truth.size());
  const auto median_miss_nm = [&](const std::vector<Localization>& v, double ox, double oy) {
    std::vector<double> d;
    for (const auto& l : v) {
      double best = 1e300;
      for (const auto& e : emitters)
        best = std::min(best, std::hypot((l.x + 0.5) * 108 - ox - e[1], (l.y + 0.5) * 108 - oy - e[2]));
      d.push_back(best);
    }
    std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2), d.end());
    return d[d.size() / 2];
  };
  const double miss_before = median_miss_nm(locs.locs, 0, 0), miss_after = median_miss_nm(undrifted.locs, mean_dx, mean_dy);
  MESSAGE("median distance to the nearest emitter: " << miss_before << " nm as fitted, " << miss_after << " nm undrifted");
  CHECK(miss_after < 25);
  CHECK(miss_before > 4 * miss_after);
  // frc reads localization files: the resolution of the result.
  r = run_tool("frc", "-q " + shell_quote((dir / "locs_undrift_link.hdf5").string()));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "nm"));
  auto picture = open_stack((dir / "locs_undrift_link.tif").string());
  CHECK(picture->info().width == 346);  // 64 px × 108 nm / 20 nm, rounded up
  CHECK(picture->info().height == 346);
  CHECK(picture->info().frames == 1);
  CHECK(picture->info().pixel_size_nm == doctest::Approx(20.0));
}

TEST_CASE("fit2d pipeline: bad options are one-line errors before any fitting, and leave nothing") {
  TempDir dir;
  // A movie that does not say its pixel size: a TIFF without metadata and no .yaml.
  const auto movie = (dir / "bare.tif").string();
  {
    MovieSettings m;
    m.frames = 40;
    m.width = m.height = 32;
    const auto frames = simulated_movie_u16(m);
    ImageMeta meta;
    meta.width = meta.height = 32;
    meta.frames = 40;
    meta.type = PixelType::u16;
    auto writer = create_image_writer(movie, meta);
    writer->write(frames.data(), 40);
    writer->close();
  }
  const auto before = listing(dir.path());
  const auto run = [&](const std::string& args) {
    return run_tool("fit2d", shell_quote(movie) + " -o " + shell_quote((dir / "locs.hdf5").string()) + kCamera + args);
  };
  check_one_line_error(run("--render"), "fit2d", 2, "--render", "pixel size");
  check_one_line_error(run("--link --link-radius 30nm"), "fit2d", 2, "--link-radius", "pixel size");
  check_one_line_error(run("--pixel-size 100 --link --link-radius 30"), "fit2d", 2, "--link-radius",
                       "30nm, 0.3px or 3x");
  check_one_line_error(run("--pixel-size 100 --undrift --undrift-segment 1000"), "fit2d", 2, "--undrift-segment",
                       "at least 2");
  // auto: the localizations are not known before the fit; 40 frames are two of its shortest segments (20), 25 not.
  check_one_line_error(run("--pixel-size 100 --undrift --frames 0:25"), "fit2d", 2, "--undrift-segment", "at least 2");
  check_one_line_error(run("--pixel-size 100 --undrift --undrift-method sideways"), "fit2d", 2, "--undrift-method",
                       "sideways");
  check_one_line_error(run("--pixel-size 100 --render --render-pixel -5"), "fit2d", 2, "--render-pixel", "");
  check_one_line_error(run("--pixel-size 100 --render --frames 0:20 --partial " +
                           shell_quote((dir / "p.h5").string())),
                       "fit2d", 2, "--partial", "fit2d merge");
  write_file(dir / "markers.txt", "10 10\n");
  check_one_line_error(run("--pixel-size 100 --render --roi " + shell_quote((dir / "markers.txt").string())), "fit2d",
                       2, "--roi", "undrift, link or render");
  fs::remove(dir / "markers.txt");
  CHECK(listing(dir.path()) == before);
}
