// fit2d --calibration psf.h5 end to end (the spline model): a movie whose
// spots are drawn from a spline PSF, localized with that spline's calibration
// file; z and lpz in Picasso's HDF5 (and no d_zcalib) and ThunderSTORM's CSV,
// the depth error against the truth, --z-factor, and the one-line errors
// (the calibration named as the output, --model spline without a calibration,
// --z-range with a spline).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

#include "nanoscopy/bench/spline_spots.hpp"
#include "nanoscopy/core/spline_psf_io.hpp"
#include "nanoscopy/fit/models/spline3d.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "support/spline_movie.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;

namespace {

using Emitter = SplineEmitter;

// spline_movie's 40 frames (four emitters per frame, z in [z_min, z_max] nm) as a uint16 TIFF of 100 nm pixels.
std::vector<Emitter> write_movie(const std::string& path, const SplinePsf& psf, double z_min = -400, double z_max = 400) {
  const SplineMovie mv = spline_movie(psf, 40, z_min, z_max);
  ImageMeta meta;
  meta.width = meta.height = SplineMovie::kWidth;
  meta.frames = mv.frames;
  meta.type = PixelType::u16;
  meta.pixel_size_nm = 100;
  auto w = create_image_writer(path, meta);
  w->write(mv.pixels.data(), mv.frames);
  w->close();
  return mv.truth;
}

}  // namespace

TEST_CASE("fit2d --calibration psf.h5: spline 3D fits, z and lpz without d_zcalib, depth near the truth") {
  TempDir dir;
  const SplinePsf psf = astigmatic_spline_psf(21, 61, 20.0, 100.0);
  const std::string cal = (dir / "psf.h5").string(), movie = (dir / "movie.tif").string();
  write_spline_calibration(cal, psf, nullptr);
  const auto truth = write_movie(movie, psf);
  const std::string common = shell_quote(movie) + " --calibration " + shell_quote(cal) +
                             " --box 13 --baseline 100 --sensitivity 1 --pixel-size 100 --device cpu";
  std::vector<double> z_plain;
  for (const std::string ext : {".hdf5", ".csv"}) {
    CAPTURE(ext);
    const std::string out = (dir / ("locs" + ext)).string();
    const auto r = run_tool("fit2d", common + " -o " + shell_quote(out));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.output, "fit:                mle"));
    CHECK(contains(r.output, "spline model (3D: "));
    const auto locs = read_localizations(out, 100.0);
    REQUIRE(locs.size() >= truth.size() * 95 / 100);
    std::vector<double> dz;
    for (const auto& l : locs) {
      CHECK(std::isfinite(l.z));
      CHECK(l.lpz > 3);
      CHECK(l.lpz < 100);
      const Emitter* best = nullptr;
      double d2 = 1e9;
      for (const auto& e : truth)
        if (e.frame == l.frame && (e.x - l.x) * (e.x - l.x) + (e.y - l.y) * (e.y - l.y) < d2) {
          d2 = (e.x - l.x) * (e.x - l.x) + (e.y - l.y) * (e.y - l.y);
          best = &e;
        }
      REQUIRE(best);
      CHECK(d2 < 0.5 * 0.5);
      dz.push_back(l.z - best->z);
      if (ext == ".hdf5") z_plain.push_back(l.z);
    }
    std::vector<double> adz;
    for (double d : dz) adz.push_back(std::fabs(d));
    std::sort(adz.begin(), adz.end());
    double bias = 0;
    for (double d : dz) bias += d;
    bias /= static_cast<double>(dz.size());
    MESSAGE(ext << ": " << locs.size() << " localizations, median |dz| " << adz[adz.size() / 2] << " nm, bias " << bias
                << " nm");
    CHECK(adz[adz.size() / 2] < 25);  // the z CRB is ~10–20 nm at 3000 photons
    CHECK(std::fabs(bias) < 8);
  }
  if (python_available()) {
    const auto py = run_command("/usr/bin/python3 -c " + shell_quote(
        "import sys, h5py, pandas\n"
        "names = h5py.File(sys.argv[1])['locs'].dtype.names\n"
        "assert 'z' in names and 'lpz' in names, names\n"
        "assert 'd_zcalib' not in names, names\n"
        "cols = list(pandas.read_csv(sys.argv[2]).columns)\n"
        "assert 'z [nm]' in cols and 'uncertainty_z [nm]' in cols, cols\n"
        "print('ok')\n") + " " + shell_quote((dir / "locs.hdf5").string()) + " " + shell_quote((dir / "locs.csv").string()));
    INFO(py.output);
    CHECK(py.exit_code == 0);
  }
  // --z-factor scales z.
  {
    const std::string out = (dir / "scaled.hdf5").string();
    const auto r = run_tool("fit2d", common + " --z-factor 0.79 -o " + shell_quote(out));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto locs = read_localizations(out, 100.0);
    REQUIRE(locs.size() == z_plain.size());
    for (std::size_t i = 0; i < locs.size(); ++i) CHECK(locs[i].z == doctest::Approx(0.79 * z_plain[i]).epsilon(1e-4).scale(0.01));
  }
  // One-line errors.
  const auto refused = [&](const std::string& args, int code, const std::string& part) {
    const auto r = run_tool("fit2d", args);
    INFO(r.output);
    CHECK(r.exit_code == code);
    CHECK(contains(r.output, part));
  };
  refused(common + " -o " + shell_quote(cal), 2, "psf.h5");  // the calibration is an input
  refused(shell_quote(movie) + " --model spline -o " + shell_quote((dir / "x.csv").string()), 2,
          "the spline model needs a calibration");
  refused(common + " --z-range -300:300 -o " + shell_quote((dir / "y.csv").string()), 2, "--z-range is for astigmatic");
  refused(common + " --model astigmatic -o " + shell_quote((dir / "z.csv").string()), 2, "spline model");
  test::write_file(dir / "bad.h5", "not hdf5");
  refused(shell_quote(movie) + " --calibration " + shell_quote((dir / "bad.h5").string()) + " -o " +
              shell_quote((dir / "w.csv").string()),
          3, "not a spline calibration");
}

// A calibration and a movie of emitters far above focus (450-560 nm), where the spots are stretched.
struct FarMovie {
  TempDir dir;
  SplinePsf psf = astigmatic_spline_psf(21, 61, 20.0, 100.0);
  std::string cal = (dir / "psf.h5").string(), movie = (dir / "far.tif").string();
  std::vector<Emitter> truth;
  FarMovie() {
    write_spline_calibration(cal, psf, nullptr);
    truth = write_movie(movie, psf, 450, 560);
  }
};

TEST_CASE("fit2d --calibration: the width filter (Gaussian models) keeps every spline fit, near focus or far") {
  const FarMovie far;
  const auto& [dir, psf, cal, movie, truth] = far;
  // A width cut every one of these spots fails: the spline's sx, sy are its second moments (1.5-2.5 px here,
  // wider than 3 px far from focus on a real PSF), not fitted widths, so a cut on them would drop emitters by depth.
  const std::string prm = (dir / "narrow.prm").string();
  write_file(prm, "subsection Filter\n  set max sigma = 1.0\nend\n");
  const std::string out = (dir / "far.hdf5").string();
  const auto r = run_tool("fit2d", shell_quote(movie) + " --calibration " + shell_quote(cal) + " --params " +
                                       shell_quote(prm) + " --box 13 --baseline 100 --sensitivity 1 --pixel-size 100 " +
                                       "--device cpu -o " + shell_quote(out));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto locs = read_localizations(out, 100.0);
  CHECK(locs.size() >= truth.size() * 95 / 100);
  int wide = 0;
  double bias = 0;
  for (const auto& l : locs) {
    wide += std::max(l.sigma, l.sy()) > 1.0;
    bias += l.z;
  }
  bias = locs.empty() ? 0 : bias / static_cast<double>(locs.size()) - 505.0;
  MESSAGE(locs.size() << " of " << truth.size() << " kept, " << wide << " wider than the cut, mean z - 505 nm: " << bias);
  CHECK(wide == static_cast<int>(locs.size()));
  CHECK(std::fabs(bias) < 25);
}

TEST_CASE("fit2d --calibration psf.h5: one localization per emitter and frame (--duplicates auto), off, and errors") {
  const FarMovie far;
  // Plain references: a lambda may not capture structured bindings before C++20 P1091 (clang 14 rejects it).
  const auto& dir = far.dir;
  const std::string& cal = far.cal;
  const std::string& movie = far.movie;
  const auto& truth = far.truth;
  // A low threshold puts two candidates on some of these stretched spots (and more on the noise around them).
  const auto fit = [&](const std::string& extra, const std::string& name) {
    const std::string out = (dir / name).string();
    const auto r = run_tool("fit2d", shell_quote(movie) + " --calibration " + shell_quote(cal) +
                                         " --box 13 --threshold 1.5 --baseline 100 --sensitivity 1 --pixel-size 100 " +
                                         "--device cpu -o " + shell_quote(out) + extra);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    return read_localizations(out, 100.0);
  };
  const auto pairs_within_1px = [](const std::vector<Localization>& locs) {
    int n = 0;
    for (std::size_t i = 0; i < locs.size(); ++i)
      for (std::size_t j = i + 1; j < locs.size(); ++j)
        n += locs[i].frame == locs[j].frame && std::hypot(locs[i].x - locs[j].x, locs[i].y - locs[j].y) < 1.0;
    return n;
  };
  const auto kept = fit("", "auto.hdf5"), all = fit(" --duplicates off", "off.hdf5");
  MESSAGE(all.size() << " localizations without the duplicate filter (" << pairs_within_1px(all)
                     << " pairs within 1 px), " << kept.size() << " with it, " << truth.size() << " emitters");
  CHECK(pairs_within_1px(all) > 0);  // the case exists
  CHECK(pairs_within_1px(kept) == 0);
  CHECK(kept.size() + static_cast<std::size_t>(pairs_within_1px(all)) >= all.size());
  CHECK(kept.size() < all.size());
  const auto bad = run_tool("fit2d", shell_quote(movie) + " --calibration " + shell_quote(cal) +
                                         " --duplicates 1px --device cpu -o " + shell_quote((dir / "x.hdf5").string()));
  CHECK(bad.exit_code != 0);
  CHECK(bad.output.find("--duplicates") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "x.hdf5"));
}

TEST_CASE("fit2d --calibration psf.h5, pupil-PSF spots above focus: --recenter auto moves the boxes onto them") {
  // As bench spline3d: beads of the pupil PSF (astigmatism, coma, spherical), the spline calibrated from them,
  // then emitters at +300..+600 nm, where astigmatism stretches each spot along y into several maxima and the
  // detector puts the box on any of them (bench spline3d: y 1.15-1.37x the bound without re-centring).
  TempDir dir;
  const auto at = [&](const char* name) { return shell_quote((dir / name).string()); };
  const std::string optics = " --psf pupil --pixel-size 108 --background 20";
  auto r = run_tool("bench", "--quiet --seed 1 simulate movie --z-stack" + optics +
                                 " --width 96 --height 96 --photons 20000 --z-min -800 --z-max 800 --z-step 10"
                                 " --beads 3 -o " + at("beads.tif"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  r = run_tool("fit2d", "calibrate " + at("beads.tif") + " --z-step 10 --model spline -o " + at("psf.h5"));
  REQUIRE(r.exit_code == 0);
  r = run_tool("bench", "--quiet --seed 2 simulate movie" + optics +
                            " --structure grid --emitters 16 --width 120 --height 120 --on-fraction 1 --z-even"
                            " --frames 25 --photons 2000 --z-min 300 --z-max 600 -o " + at("movie.tif"));
  REQUIRE(r.exit_code == 0);
  LocReadOptions read;
  read.pixel_size_nm = 108;
  const auto truth = read_localization_file((dir / "movie_truth.csv").string(), read).locs;
  REQUIRE(truth.size() > 250);  // 16 grid points in 25 frames (the simulator leaves out some near the edges)
  // y's RMS error (px) of the localizations matched to an emitter (within 250 nm), and how many matched.
  const auto y_rms = [&](const std::string& recenter) {
    const std::string out = (dir / ("locs_" + recenter + ".hdf5")).string();
    const auto fit = run_tool("fit2d", at("movie.tif") + " --calibration " + at("psf.h5") + " --box 13 --device cpu" +
                                           " --recenter " + recenter + " -o " + shell_quote(out));
    INFO(fit.output);
    REQUIRE(fit.exit_code == 0);
    double sum = 0;
    int n = 0;
    for (const auto& l : read_localizations(out, 108.0)) {
      double best = 1e9, dy = 0;
      for (const auto& e : truth)
        if (e.frame == l.frame && std::hypot(e.x - l.x, e.y - l.y) < best) {
          best = std::hypot(e.x - l.x, e.y - l.y);
          dy = l.y - e.y;
        }
      if (best * 108 > 250) continue;
      sum += dy * dy;
      ++n;
    }
    return std::pair{std::sqrt(sum / std::max(n, 1)), n};
  };
  const auto [off, n_off] = y_rms("off");
  const auto [on, n_on] = y_rms("auto");
  MESSAGE("y RMS " << off * 108 << " nm without re-centring (" << n_off << " matched), " << on * 108 << " nm with ("
                   << n_on << ")");
  CHECK(n_off >= static_cast<int>(truth.size()) * 9 / 10);
  CHECK(n_on >= static_cast<int>(truth.size()) * 9 / 10);  // (n_off may count one emitter twice)
  CHECK(on < 0.9 * off);
}
