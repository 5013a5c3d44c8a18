// fit2d in 3D end to end: an astigmatic movie from bench simulate (with the
// calibration that made it) localized with --calibration; z and its CRLB in
// both formats (read back by us, and by h5py and pandas as Picasso and
// ThunderSTORM users would), the depth error against the truth, and the
// one-line errors (a z range the calibration does not cover, a conflicting
// model, a missing calibration).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/sim/truth_match.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

struct Movie3d {
  std::string movie, calibration, truth;
};

Movie3d simulate_3d(const TempDir& dir) {
  const auto path = (dir / "movie.tif").string();
  const auto r = run_tool("bench", "-q simulate movie -o " + shell_quote(path) +
                                   " --astigmatic --z-min -400 --z-max 400 --frames 300 --emitters 25 --photons 1500 "
                                   "--background 10");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return {path, (dir / "movie_astig.json").string(), (dir / "movie_truth.csv").string()};
}

}  // namespace

TEST_CASE("fit2d --calibration: z and lpz in both formats, depth error near the bound") {
  TempDir dir;
  const Movie3d m = simulate_3d(dir);
  const auto truth = read_localizations(m.truth, 108.0);
  REQUIRE(std::any_of(truth.begin(), truth.end(), [](const Localization& l) { return l.z != 0; }));
  for (const std::string estimator : {"auto", "lsq"}) {
    CAPTURE(estimator);
    for (const std::string ext : {".csv", ".hdf5"}) {
      CAPTURE(ext);
      const auto out = (dir / ("locs_" + estimator + ext)).string();
      const auto r = run_tool("fit2d", shell_quote(m.movie) + " --calibration " + shell_quote(m.calibration) + " -o " +
                                       shell_quote(out) + " --estimator " + estimator + " --device cpu");
      INFO(r.output);
      REQUIRE(r.exit_code == 0);
      // The movie's .yaml gives the camera: auto is mle.
      CHECK(contains(r.output, std::string("fit:                ") + (estimator == "lsq" ? "lsq" : "mle")));
      CHECK(contains(r.output, "astigmatic model (3D: "));
      const auto locs = read_localizations(out, 108.0);
      REQUIRE(locs.size() > 100);
      for (const auto& l : locs) {
        CHECK(std::isfinite(l.z));
        CHECK(l.lpz > 5);  // nm: 1500 photons give a z CRLB of ~20–30 nm
        CHECK(l.lpz < 200);
        CHECK(l.sigma_y > 0);
      }
      const TruthMatch t = match_to_truth(locs, truth, 1.0, true);
      MESSAGE(estimator << ext << ": " << t.true_positives << " matches, z RMS " << t.rms_z_nm << " nm, median |dz| "
                        << t.median_z_nm << " nm, bias " << t.bias_z_nm << " nm, lateral RMS " << t.rms_px * 108
                        << " nm");
      CHECK(t.true_positives >= static_cast<std::int64_t>(truth.size()) * 9 / 10);
      CHECK(t.median_z_nm < 35);      // the CRB is 19–28 nm over ±400 nm (test_fit_astigmatic)
      CHECK(std::abs(t.bias_z_nm) < 10);
    }
  }
  // The columns Picasso and ThunderSTORM users read, by independent readers.
  if (python_available()) {
    const auto py = run_command("/usr/bin/python3 -c " + shell_quote(
        "import sys, h5py, pandas\n"
        "names = h5py.File(sys.argv[1])['locs'].dtype.names\n"
        "assert names[11:17] == ('log_likelihood', 'iterations', 'photons_unc', 'bg_unc', 'sx_unc', 'sy_unc'), names\n"
        "assert names[17:20] == ('z', 'd_zcalib', 'lpz'), names\n"
        "d = pandas.read_csv(sys.argv[2])\n"
        "assert list(d.columns[:5]) == ['id', 'frame', 'x [nm]', 'y [nm]', 'z [nm]'], list(d.columns)\n"
        "assert 'uncertainty_z [nm]' in d.columns and 'sigma1 [nm]' in d.columns and 'sigma2 [nm]' in d.columns\n"
        "assert d['z [nm]'].abs().max() <= 600 and (d['uncertainty_z [nm]'] > 0).all()\n"
        "print('ok')\n") + " " + shell_quote((dir / "locs_auto.hdf5").string()) + " " +
        shell_quote((dir / "locs_auto.csv").string()));
    INFO(py.output);
    CHECK(py.exit_code == 0);
  }
}

TEST_CASE("fit2d 3D: one-line errors for a z range outside the calibration, a 2D model, no calibration") {
  TempDir dir;
  const Movie3d m = simulate_3d(dir);
  const auto out = shell_quote((dir / "l.csv").string());
  const auto cal = " --calibration " + shell_quote(m.calibration);
  check_one_line_error(run_tool("fit2d", shell_quote(m.movie) + cal + " --z-range -800:300 -o " + out), "fit2d", 2,
                       "--z-range", "is outside the range");
  check_one_line_error(run_tool("fit2d", shell_quote(m.movie) + cal + " --z-range 300 -o " + out), "fit2d", 2, "--z-range",
                       "min:max");
  check_one_line_error(run_tool("fit2d", shell_quote(m.movie) + cal + " --model elliptical -o " + out), "fit2d", 2,
                       "--model", "astigmatic");
  check_one_line_error(run_tool("fit2d", shell_quote(m.movie) + " --model astigmatic -o " + out), "fit2d", 2, "--model",
                       "needs a calibration");
  check_one_line_error(run_tool("fit2d", shell_quote(m.movie) + " --calibration " +
                                         shell_quote((dir / "missing.json").string()) + " -o " + out),
                       "fit2d", 3, "missing.json", "cannot open");
  CHECK_FALSE(fs::exists(dir / "l.csv"));
}
