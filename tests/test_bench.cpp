// bench as a user runs it: simulated data read back by independent readers,
// the JSON that every figure is drawn from, and the plots themselves.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <stdexcept>
#include <nlohmann/json.hpp>

#include "nanoscopy/bench/read_alone.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {
CommandResult bench(const std::string& args) { return run_command(shell_quote(app_path("bench")) + " -q " + args); }
}  // namespace

TEST_CASE("bench simulate spots writes the paper's ROIs and their truth") {
  REQUIRE_MESSAGE(python_available(), "Debian's python3 with numpy/tifffile/h5py is needed (scripts/install-deps)");
  TempDir dir;
  const auto tif = (dir / "spots.tif").string();
  const auto r = bench("simulate spots -o " + shell_quote(tif) + " --size 9 --count 200 --signal 400 --background 40");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto check = run_command(shell_quote(NANOSCOPY_TEST_PYTHON) + " -c " +
                                 shell_quote("import sys, tifffile, csv\n"
                                             "a = tifffile.imread(sys.argv[1])\n"
                                             "rows = list(csv.DictReader(open(sys.argv[2])))\n"
                                             "assert a.shape == (200, 9, 9) and a.dtype.name == 'uint16', a.shape\n"
                                             "assert len(rows) == 200\n"
                                             "x = [float(r['x [px]']) for r in rows]\n"
                                             "assert all(2 < v < 6 for v in x), min(x)\n"
                                             "s = sum(a.reshape(200, -1).sum(1)) / 200\n"
                                             "assert 400 < s < 480, s\n") +
                                 " " + shell_quote(tif) + " " + shell_quote((dir / "spots_truth.csv").string()));
  INFO(check.output);
  CHECK(check.exit_code == 0);
}

TEST_CASE("bench fit2d writes every cell, the machine and the parameters; plot_bench draws them") {
  TempDir dir;
  const auto json_path = dir / "fit.json";
  const auto r = bench("fit2d --devices cpu --sizes 5,9 --batches 10,300 --accuracy-fits 3000 --repeats 2 --json " +
                       shell_quote(json_path.string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("### fits/s — cpu, host to host") != std::string::npos);
  CHECK(r.output.find("### Accuracy") != std::string::npos);
  const auto doc = nlohmann::json::parse(read_file(json_path));
  CHECK(doc["machine"].contains("cpu"));
  CHECK(doc["machine"].contains("gpus"));
  CHECK(doc["commit"].get<std::string>().size() >= 7);
  CHECK(doc["parameters"]["sizes"].size() == 2);
  REQUIRE(doc["throughput"].size() == 4);
  for (const auto& c : doc["throughput"]) {
    for (const char* key : {"size", "batch", "device", "timing", "fits_per_s", "latency_us"}) CHECK(c.contains(key));
    CHECK(c["fits_per_s"].get<double>() > 0);
    CHECK(c["timing"] == "host");
  }
  REQUIRE(doc["accuracy"].size() == 3);
  for (const auto& c : doc["accuracy"]) {
    for (const char* key : {"size", "signal", "background", "n", "x_median", "x_mean", "x_std", "y_median", "y_mean",
                            "y_std", "sigma_median", "sigma_mean", "sigma_std", "crb_x_median", "iterations_hist",
                            "stop_shares"})
      CHECK(c.contains(key));
    CHECK(c["converged_fraction"].get<double>() >= 0.999);
    // The estimator cannot beat the Cramér–Rao bound, and stays near the paper's figures.
    CHECK(c["x_median"].get<double>() > c["crb_x_median"].get<double>());
    if (c["signal"] == 400) CHECK(c["x_median"].get<double>() == doctest::Approx(0.0464).epsilon(0.15));
  }
  REQUIRE_MESSAGE(python_available(), "Debian's python3 is needed for the plots");
  const auto plots = run_command(shell_quote(NANOSCOPY_TEST_PYTHON) + " " +
                                 shell_quote(std::string(NANOSCOPY_SOURCE_DIR) + "/scripts/plot_bench.py") + " " +
                                 shell_quote(json_path.string()) + " -o " + shell_quote(dir.path().string()));
  INFO(plots.output);
  CHECK(plots.exit_code == 0);
  for (const char* png : {"fig2_time_per_call.png", "fig3_fits_per_s.png", "fig7_errors.png", "fig8_iterations.png"})
    CHECK(fs::file_size(dir / png) > 1000);
}

TEST_CASE("bench io indexes and reads a stack and reports it") {
  TempDir dir;
  const auto r = bench("io --pages 3000 --size 4 --dir " + shell_quote(dir.path().string()) + " --json " +
                       shell_quote((dir / "io.json").string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto doc = nlohmann::json::parse(read_file(dir / "io.json"));
  CHECK(doc["pages"] == 3000);
  CHECK(doc["index_s"].get<double>() > 0);
  CHECK(fs::directory_iterator(dir.path())->path().filename() == "io.json");  // the test stack is removed
}

TEST_CASE("bench localize: the pipeline beside reading alone (plain and the engine's buffers) and the localizer alone") {
  TempDir dir;
  const auto r = bench("localize --devices cpu --frames 300 --size 64 --memory-frames 256 --dir " +
                       shell_quote(dir.path().string()) + " --json " + shell_quote((dir / "loc.json").string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("pinned chunk buffers") != std::string::npos);
  const auto doc = nlohmann::json::parse(read_file(dir / "loc.json"));
  CHECK(doc["read_only"]["frames_per_s"].get<double>() > 0);
  REQUIRE(doc["cells"].size() == 1);
  const auto& c = doc["cells"][0];
  CHECK(c["frames"] == 300);
  CHECK(c["candidates"].get<std::int64_t>() > 0);
  CHECK(c["localizations"].get<std::int64_t>() > 0);
  CHECK(c["written"] == c["localizations"]);
  CHECK(c["pipeline_runs_s"].size() == 3);
  for (const char* key : {"frames_per_s", "localize_only_frames_per_s", "read_pinned_frames_per_s", "pipeline_over_read",
                          "pipeline_over_read_paired"})
    CHECK(c[key].get<double>() > 0);
  CHECK(c["read_beside_runs_s"].size() == 3);  // a read-alone pass before each pipeline run
  CHECK(r.output.find("against a read-alone pass just before it") != std::string::npos);
}

TEST_CASE("bench: each run against the read pass beside it, the median of the pairs") {
  CHECK(nanoscopy::median_paired_ratio({2.0, 3.0, 10.0}, {1.0, 2.0, 2.0}) == doctest::Approx(2.0));  // ratios 2, 1.5, 5
  CHECK(nanoscopy::median_paired_ratio({1.0, 3.0}, {1.0, 1.0}) == doctest::Approx(2.0));
  CHECK_THROWS_AS(nanoscopy::median_paired_ratio({1.0}, {}), std::logic_error);
}

TEST_CASE("bench --dir creates the folder it is given") {
  TempDir dir;
  const fs::path fresh = dir / "new" / "deeper";
  const auto r = bench("io --pages 20 --size 4 --dir " + shell_quote(fresh.string()));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(fs::is_directory(fresh));
  write_file(dir / "afile", "x");  // a file where the folder should be: one line naming it
  check_one_line_error(bench("io --pages 20 --size 4 --dir " + shell_quote((dir / "afile").string())), "bench", 4,
                       "afile", "not a folder");
}

TEST_CASE("bench refuses bad grids before measuring") {
  CHECK(bench("fit2d --sizes 40").exit_code == 2);
  CHECK(bench("fit2d --batches 0").exit_code == 2);
  CHECK(bench("fit2d --devices nowhere").exit_code == 2);
  CHECK(bench("fit2d --json /nonexistent/dir/x.json").exit_code == 4);
}

TEST_CASE("bench postprocess --quick: drift error of every method, link recall, render time; plausible numbers") {
  TempDir dir;
  const auto json_path = dir / "post.json";
  const auto r = bench("postprocess --quick --devices cpu --json " + shell_quote(json_path.string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "| method |"));
  CHECK(contains(r.output, "| render |"));
  const auto j = nlohmann::json::parse(read_file(json_path));
  CHECK(j["simulation"]["frames"] == 4000);
  const double locs = j["simulation"]["localizations"];
  CHECK(locs > 0.9e5);
  CHECK(locs < 1.1e5);
  std::map<std::string, double> error;  // method (first word) → RMS per axis, nm
  for (const auto& row : j["drift"]) {
    const std::string method = row["method"];
    error[method.substr(0, method.find(' '))] = row["rms_per_axis_nm"];
  }
  MESSAGE("drift RMS per axis: imposed " << error["none"] << " nm, RCC " << error["rcc"] << " nm, markers raw "
                                         << error["markers"] << " nm, fiducial " << error["fiducial"] << " nm, combined "
                                         << error["combined"] << " nm");
  // 20 nm per 1000 frames over 4,000 frames: RMS 23 nm per axis; 25,000 localizations per segment of 10 nm
  // precision put RCC's error well below 2 nm; four markers of 20 nm raw per frame give about 10 nm, which
  // the smoothing over 100 frames takes to about 1.2 nm.
  CHECK(error["none"] > 15);
  CHECK(error["rcc"] < 2.0);
  CHECK(error["markers"] > 5.0);
  CHECK(error["fiducial"] < error["markers"] / 3);
  CHECK(error["combined"] < 2.5);
  const double recall = j["link"]["recall"], over = j["link"]["over_merging"];
  MESSAGE("link recall " << recall << ", over-merged groups " << over);
  CHECK(recall > 0.9);
  CHECK(over < 0.05);
  CHECK(j["link"]["groups"] < j["link"]["localizations"]);
  // The auto segment against fixed ones (the short scenarios with --quick): every one within its limit, or the
  // run would have exited 1; the link candidates scored against the true blinks, fit2d's default marked.
  CHECK(contains(r.output, "| RCC segment: drift error (nm) |"));
  CHECK(contains(r.output, "RCC segment auto: "));
  REQUIRE(j["segment_table"].size() == 4);
  for (const auto& row : j["segment_table"]) {
    CHECK(row["pass"] == true);
    CHECK(row["auto_nm"].get<double>() <= row["limit_nm"].get<double>());
  }
  int defaults = 0;
  for (const auto& row : j["link_table"]) {
    REQUIRE(row["sets"].size() == 4);
    if (row["default"] == true) {
      ++defaults;
      CHECK(row["radius"] == "0.8px");
      for (const auto& set : row["sets"]) CHECK(set["split_rate"].get<double>() < 0.02);
    }
  }
  CHECK(defaults == 1);
  int timed = 0;
  for (const auto& row : j["render"]) {
    CHECK(row["device"] == "cpu");
    CHECK(row["seconds"].get<double>() > 0);
    ++timed;
  }
  CHECK(timed == 4);  // 10^5 and 10^6, Gaussian and histogram
}
