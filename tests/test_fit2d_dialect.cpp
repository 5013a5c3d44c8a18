// fit2d speaking Picasso's dialect (issue 25): the .yaml's Picasso Localize keys (Box Size, Min.
// Net Gradient in camera counts, Fit method), --min-net-gradient dropping candidates before the fit,
// a CSV and an HDF5 of one stem written by two runs each keeping its own .yaml; and the baseline
// check: wlsq and mle on pixels far below the camera baseline are refused, auto falls back to lsq.
#include <doctest/doctest.h>

#include <filesystem>
#include <vector>

#include "nanoscopy/fit2d/baseline_check.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

std::string simulate(const TempDir& dir, const std::string& args) {
  const auto path = (dir / "movie.tif").string();
  const auto r = run_tool("bench", "-q simulate movie -o " + shell_quote(path) +
                                       " --frames 30 --width 48 --height 48 --emitters 20 --seed 4 " + args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return path;
}

CommandResult fit2d(const std::string& args) { return run_tool("fit2d", "-q --device cpu " + args); }

}  // namespace

TEST_CASE("the .yaml carries Picasso Localize's Box Size, Min. Net Gradient and Fit method; --min-net-gradient") {
  TempDir dir;
  const auto movie = simulate(dir, "");
  const auto all = fit2d(shell_quote(movie) + " -o " + shell_quote((dir / "all.hdf5").string()) +
                         " --estimator mle --box 9");
  REQUIRE_MESSAGE(all.exit_code == 0, all.output);
  const std::string yaml = read_file(dir / "all.yaml");
  CHECK(contains(yaml, "\nBox Size: 9\n"));
  CHECK(contains(yaml, "\nMin. Net Gradient: 0\n"));
  CHECK(contains(yaml, "\nFit method: gaussmle\n"));
  CHECK(contains(yaml, "\nDetection/min net gradient: 0.0\n"));  // ours beside Picasso's
  const auto lsq = fit2d(shell_quote(movie) + " -o " + shell_quote((dir / "lsq.csv").string()) +
                         " --estimator lsq --min-net-gradient 4500");
  const auto plain = fit2d(shell_quote(movie) + " -o " + shell_quote((dir / "plain.csv").string()) +
                           " --estimator lsq");
  REQUIRE_MESSAGE(plain.exit_code == 0, plain.output);
  REQUIRE_MESSAGE(lsq.exit_code == 0, lsq.output);
  const std::string csv_yaml = read_file(dir / "lsq.csv.yaml");
  CHECK(contains(csv_yaml, "\nBox Size: 7\n"));
  CHECK(contains(csv_yaml, "\nMin. Net Gradient: 4500\n"));  // camera counts, an integer as Picasso writes it
  CHECK(contains(csv_yaml, "\nFit method: gausslq\n"));
  // Candidates below the minimum are not fitted: fewer localizations than without it.
  const auto fewer = read_localizations((dir / "lsq.csv").string());
  const auto every = read_localizations((dir / "plain.csv").string());
  CHECK(fewer.size() < every.size());
  CHECK_FALSE(fewer.empty());
  const auto bad = fit2d(shell_quote(movie) + " -o " + shell_quote((dir / "bad.hdf5").string()) +
                         " --min-net-gradient -5");
  CHECK(bad.exit_code == 2);
  const auto params = run_tool("fit2d", "--print-params");
  CHECK(contains(params.output, "min net gradient"));
  CHECK(contains(params.output, "Min. Net Gradient"));
  CHECK(contains(params.output, "registration"));
}

TEST_CASE("fit2d x.csv, then fit2d x.hdf5: both .yaml survive and read back") {
  TempDir dir;
  const auto movie = simulate(dir, "");
  const auto x = (dir / "x").string();
  REQUIRE(fit2d(shell_quote(movie) + " -o " + shell_quote(x + ".csv") + " --box 9").exit_code == 0);
  const std::string csv_yaml = read_file(dir / "x.csv.yaml");
  REQUIRE(fit2d(shell_quote(movie) + " -o " + shell_quote(x + ".hdf5")).exit_code == 0);
  CHECK(read_file(dir / "x.csv.yaml") == csv_yaml);
  CHECK(contains(read_file(dir / "x.csv.yaml"), "\nBox Size: 9\n"));
  CHECK(contains(read_file(dir / "x.yaml"), "\nBox Size: 7\n"));
  const LocalizationFile csv = read_localization_file(x + ".csv"), h5 = read_localization_file(x + ".hdf5");
  CHECK(csv.width == 48);
  CHECK(csv.pixel_size_from_yaml);
  CHECK(h5.width == 48);
  CHECK_FALSE(csv.locs.empty());
  CHECK_FALSE(h5.locs.empty());
  // The pipeline reads its CSV back through the new name: undrift and link of a CSV.
  const auto piped = fit2d(shell_quote(movie) + " -o " + shell_quote((dir / "p.csv").string()) + " --link");
  REQUIRE_MESSAGE(piped.exit_code == 0, piped.output);
  CHECK(fs::exists(dir / "p_link.csv.yaml"));
}

TEST_CASE("baseline evidence: read noise around the baseline passes, pixels far below it do not") {
  const std::int64_t frames = 4, pixels = 1000;
  std::vector<float> at_baseline(static_cast<std::size_t>(frames * pixels)), offset0(at_baseline.size());
  std::uint32_t state = 12345;
  const auto noise = [&] {  // a crude symmetric noise of sd ~3 ADU, deterministic
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(static_cast<int>(state >> 24) % 11 - 5);
  };
  for (std::size_t i = 0; i < at_baseline.size(); ++i) {
    at_baseline[i] = 100.0f + noise();
    offset0[i] = 4.0f + noise();
  }
  const BaselineEvidence fine = baseline_evidence(at_baseline.data(), frames, pixels, 100);
  CHECK_FALSE(fine.below);
  CHECK(fine.noise > 1);
  CHECK(fine.noise < 6);
  const BaselineEvidence garbage = baseline_evidence(offset0.data(), frames, pixels, 100);
  CHECK(garbage.below);
  CHECK(garbage.low < 0);
  // Noise-free frames a fraction of an ADU below: not refused.
  std::vector<float> flat(at_baseline.size(), 99.6f);
  CHECK_FALSE(baseline_evidence(flat.data(), frames, pixels, 100).below);
}

TEST_CASE("mle on a movie recorded with offset 0 under the default baseline 100: refused; auto falls back to lsq") {
  TempDir dir;
  const auto movie = simulate(dir, "--baseline 0");
  fs::remove(dir / "movie.yaml");  // its camera (Baseline 0) unknown: the default baseline 100 is in effect
  const auto out = shell_quote((dir / "l.hdf5").string());
  const auto refused = fit2d(shell_quote(movie) + " -o " + out + " --estimator mle --sensitivity 0.5");
  check_one_line_error(refused, "fit2d", 2, "movie.tif", "--baseline");
  CHECK_FALSE(fs::exists(dir / "l.hdf5"));
  const auto wlsq = fit2d(shell_quote(movie) + " -o " + out + " --estimator wlsq --sensitivity 0.5");
  CHECK(wlsq.exit_code == 2);
  // auto with a camera would pick mle: a warning naming --baseline, and lsq.
  const auto fallback = fit2d(shell_quote(movie) + " -o " + out + " --sensitivity 0.5");
  REQUIRE_MESSAGE(fallback.exit_code == 0, fallback.output);
  CHECK(contains(fallback.output, "fit2d: warning: "));
  CHECK(contains(fallback.output, "--baseline"));
  CHECK(contains(read_file(dir / "l.yaml"), "\nFit method: gausslq\n"));
  // The right baseline: mle, no warning.
  const auto right = fit2d(shell_quote(movie) + " -o " + out + " --estimator mle --sensitivity 0.5 --baseline 0");
  REQUIRE_MESSAGE(right.exit_code == 0, right.output);
  CHECK_FALSE(contains(right.output, "warning"));
  CHECK(contains(read_file(dir / "l.yaml"), "\nFit method: gaussmle\n"));
}
