// fit2d end to end: simulated movies with known emitters, Picasso's own test
// movie against Picasso's localizations, outputs read by independent readers,
// and the awkward cases (borders, empty and NaN frames, one frame, bad input).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/sim/truth_match.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

// bench simulate movie's truth: a ThunderSTORM CSV (frames from 1, nm), read like
// the localizations themselves (simulate() uses the default 108 nm pixels).
std::vector<Localization> read_truth(const fs::path& csv) { return read_localizations(csv.string(), 108.0); }

struct Match {
  std::int64_t true_positives = 0, false_positives = 0, false_negatives = 0;
  double rms = 0;  // px
};

// Nearest truth in the same frame within `radius` px, each truth used once.
Match match(const std::vector<Localization>& locs, const std::vector<Localization>& truth, double radius) {
  const TruthMatch m = match_to_truth(locs, truth, radius);
  return {m.true_positives, m.false_positives, m.false_negatives, m.rms_px};
}

std::string simulate(const TempDir& dir, const std::string& args) {
  const auto path = (dir / "movie.tif").string();
  const auto r = run_tool("bench", "-q simulate movie -o " + shell_quote(path) + " " + args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return path;
}

const std::string kCamera = " --baseline 100 --sensitivity 0.5 --gain 1 ";

}  // namespace

TEST_CASE("fit2d finds the simulated emitters: recall, false positives, RMS error, photons") {
  TempDir dir;
  const auto movie = simulate(dir, "--frames 100 --width 96 --height 80 --emitters 40 --photons 2000 --background 10");
  const auto csv = (dir / "locs.csv").string();
  const auto r = run_tool("fit2d", "-q " + shell_quote(movie) + " -o " + shell_quote(csv) + kCamera + "--device cpu");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("localizations:") != std::string::npos);
  CHECK(r.output.find("median precision:") != std::string::npos);
  const auto locs = read_localizations(csv, 108.0);
  const auto truth = read_truth(dir / "movie_truth.csv");
  const auto m = match(locs, truth, 1.0);
  const double recall = static_cast<double>(m.true_positives) / static_cast<double>(truth.size());
  const double fp = static_cast<double>(m.false_positives) / static_cast<double>(locs.size());
  MESSAGE("recall " << recall << ", false positives " << fp << ", RMS " << m.rms << " px over " << truth.size());
  CHECK(recall >= 0.9);  // overlapping emitters are lost, as in any single-emitter fitter
  CHECK(fp <= 0.05);
  CHECK(m.rms < 0.1);
  double photons = 0;
  for (const auto& l : locs) photons += l.photons;
  CHECK(photons / static_cast<double>(locs.size()) == doctest::Approx(2000).epsilon(0.15));
}

TEST_CASE("fit2d --fit-precision: float (the GPU's default) and double give the same localizations") {
  TempDir dir;
  const auto movie = simulate(dir, "--frames 40 --width 64 --height 64 --emitters 30 --photons 1500 --background 10");
  std::map<std::string, std::vector<Localization>> locs;
  for (const std::string precision : {"auto", "double", "float"}) {
    const auto csv = (dir / (precision + ".csv")).string();
    const auto r = run_tool("fit2d", "-q " + shell_quote(movie) + " -o " + shell_quote(csv) + kCamera +
                                     "--device cpu --fit-precision " + precision);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    locs[precision] = read_localizations(csv, 108.0);
  }
  // auto on the CPU is the double reference, row for row.
  REQUIRE(locs["auto"].size() == locs["double"].size());
  for (std::size_t k = 0; k < locs["auto"].size(); ++k) {
    CHECK(locs["auto"][k].x == locs["double"][k].x);
    CHECK(locs["auto"][k].y == locs["double"][k].y);
  }
  // float: the same spots (filters may drop a borderline fit either way), within 1e-3 px for ≥ 99 % of them.
  const auto& d = locs["double"];
  const auto& f = locs["float"];
  REQUIRE(d.size() > 80);
  CHECK(std::abs(static_cast<double>(f.size()) - static_cast<double>(d.size())) <= 0.01 * static_cast<double>(d.size()));
  const auto m = match(f, d, 0.01);
  MESSAGE("float vs double: " << f.size() << " / " << d.size() << " localizations, " << m.true_positives
                              << " within 0.01 px, RMS " << m.rms << " px");
  CHECK(static_cast<double>(m.true_positives) >= 0.99 * static_cast<double>(d.size()));
  CHECK(m.rms < 1e-3);
}

TEST_CASE("fit2d --estimator mle|wlsq: photons from the camera, the CRLB as precision, Picasso's likelihood") {
  TempDir dir;
  const auto movie = simulate(dir, "--frames 60 --width 64 --height 64 --emitters 30 --photons 1500 --background 10");
  const auto truth = read_truth(dir / "movie_truth.csv");
  std::map<std::string, std::vector<Localization>> locs;
  for (const std::string est : {"lsq", "wlsq", "mle"}) {
    const auto csv = (dir / (est + ".csv")).string();
    const auto r = run_tool("fit2d", "-q " + shell_quote(movie) + " -o " + shell_quote(csv) + kCamera +
                                     "--device cpu --estimator " + est);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    locs[est] = read_localizations(csv, 108.0);
  }
  const auto ml = match(locs["mle"], truth, 1.0), ls = match(locs["lsq"], truth, 1.0),
             wl = match(locs["wlsq"], truth, 1.0);
  MESSAGE("fit2d RMS vs truth: lsq " << ls.rms << " px (" << ls.true_positives << "), wlsq " << wl.rms << " ("
                                     << wl.true_positives << "), mle " << ml.rms << " (" << ml.true_positives << ")");
  REQUIRE(ls.true_positives > 100);
  CHECK(static_cast<double>(ml.true_positives) >= 0.98 * static_cast<double>(ls.true_positives));
  CHECK(static_cast<double>(wl.true_positives) >= 0.98 * static_cast<double>(ls.true_positives));
  CHECK(ml.rms <= 1.05 * ls.rms);
  // Photons in the same units as lsq's (the camera's conversion applied once).
  double lsq_photons = 0, mle_photons = 0, mle_lpx = 0;
  for (const auto& l : locs["lsq"]) lsq_photons += l.photons / static_cast<double>(locs["lsq"].size());
  for (const auto& l : locs["mle"]) {
    mle_photons += l.photons / static_cast<double>(locs["mle"].size());
    mle_lpx += l.lpx / static_cast<double>(locs["mle"].size());
  }
  CHECK(mle_photons == doctest::Approx(lsq_photons).epsilon(0.05));
  // The CRLB column: about the spread of the matched errors (isolated spots of 1500 photons).
  CHECK(mle_lpx > 0.3 * ml.rms);
  CHECK(mle_lpx < 1.5 * ml.rms);

  // Picasso HDF5: gaussmle's fields for mle (log_likelihood, iterations, the bounds), gausslq's for lsq.
  for (const std::string est : {"lsq", "mle"}) {
    const auto h5 = (dir / (est + ".hdf5")).string();
    const auto r = run_tool("fit2d", "-q " + shell_quote(movie) + " -o " + shell_quote(h5) + kCamera +
                                     "--device cpu --estimator " + est);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto back = read_localizations(h5, 108.0);
    REQUIRE(!back.empty());
    const bool mle = est == "mle";
    CHECK(std::isfinite(back[0].log_likelihood) == mle);
    CHECK(std::isfinite(back[0].photons_unc) == mle);
    if (!mle) continue;
    // Each bound near its parameter's scatter scale and below its value; the likelihood ratio ≤ 0 up to noise.
    std::vector<double> ll, photons_rel, bg_rel, sx_unc;
    for (const auto& l : back) {
      ll.push_back(l.log_likelihood);
      photons_rel.push_back(l.photons_unc / l.photons);
      bg_rel.push_back(l.bg_unc / l.background);
      sx_unc.push_back(l.sx_unc);
      CHECK(l.iterations >= 1);
      CHECK(l.sy_unc == l.sx_unc);  // round model: Picasso copies σ's bound into both
    }
    const auto median = [](std::vector<double> v) {
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
      return v[v.size() / 2];
    };
    MESSAGE("mle medians: log_likelihood " << median(ll) << ", photons_unc/photons " << median(photons_rel)
                                           << ", bg_unc/bg " << median(bg_rel) << ", sx_unc " << median(sx_unc));
    // 7×7 boxes of Poisson data at the estimate: the saturated-model ratio is about −(49 − 5)/2.
    CHECK(median(ll) < -5);
    CHECK(median(ll) > -60);
    // 1500 photons on 10 background: √CRLB(N) ≈ √N·(a little more than 1) → 2.6–5 %.
    CHECK(median(photons_rel) > 0.02);
    CHECK(median(photons_rel) < 0.06);
    CHECK(median(bg_rel) > 0.02);
    CHECK(median(bg_rel) < 0.3);
    CHECK(median(sx_unc) > 0.005);
    CHECK(median(sx_unc) < 0.1);
  }
}

TEST_CASE("fit2d --estimator mle on an sCMOS movie: the camera maps (from its .yaml or --camera-maps) help") {
  TempDir dir;
  const auto movie =
      simulate(dir, "--frames 200 --width 64 --height 64 --emitters 40 --photons 800 --background 10 --camera scmos");
  const auto truth = read_truth(dir / "movie_truth.csv");
  // The same movie without the .yaml's "Camera maps:" entry.
  fs::copy_file(movie, dir / "plain.tif");
  {
    std::ifstream in(dir / "movie.yaml");
    std::ofstream out(dir / "plain.yaml");
    for (std::string line; std::getline(in, line);)
      if (line.rfind("Camera maps:", 0) != 0) out << line << "\n";
  }
  const auto run = [&](const std::string& input, const std::string& name, const std::string& extra) {
    const auto csv = (dir / name).string();
    const auto r = run_tool("fit2d", "-q " + shell_quote(input) + " -o " + shell_quote(csv) + " --device cpu " + extra);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    return match(read_localizations(csv, 108.0), truth, 1.0);
  };
  const auto from_yaml = run(movie, "yaml.csv", "--estimator mle");
  const auto given = run((dir / "plain.tif").string(), "given.csv",
                         "--estimator mle --camera-maps " + shell_quote((dir / "movie_maps.h5").string()));
  const auto without = run((dir / "plain.tif").string(), "without.csv", "--estimator mle");
  MESSAGE("sCMOS mle RMS: maps from the .yaml " << from_yaml.rms << " px, --camera-maps " << given.rms
                                                << " px, without maps " << without.rms << " px");
  REQUIRE(from_yaml.true_positives > 200);
  CHECK(given.rms == doctest::Approx(from_yaml.rms).epsilon(1e-9));
  CHECK(from_yaml.rms < without.rms);
  // lsq fits the ADU as they are: --camera-maps is refused.
  const auto r = run_tool("fit2d", "-q " + shell_quote(movie) + " -o " + shell_quote((dir / "l.csv").string()) +
                                   " --device cpu --estimator lsq --camera-maps " +
                                   shell_quote((dir / "movie_maps.h5").string()));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--camera-maps") != std::string::npos);
}

TEST_CASE("fit2d on a structured sample: a grid of emitters about 7 px apart") {
  TempDir dir;
  const auto movie = simulate(dir, "--frames 60 --width 64 --height 64 --emitters 64 --structure grid --on-fraction 0.3");
  const auto csv = (dir / "grid.csv").string();
  const auto r = run_tool("fit2d", "-q " + shell_quote(movie) + " -o " + shell_quote(csv) + kCamera);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto m = match(read_localizations(csv, 108.0), read_truth(dir / "movie_truth.csv"), 1.0);
  MESSAGE("grid: " << m.true_positives << " found, " << m.false_negatives << " missed, " << m.false_positives
                   << " false, RMS " << m.rms << " px");
  CHECK(m.true_positives >= 0.8 * static_cast<double>(m.true_positives + m.false_negatives));  // neighbours on at once merge
  CHECK(m.false_positives <= m.true_positives / 20);
  CHECK(m.rms < 0.12);
}

TEST_CASE("fit2d writes Picasso HDF5 that h5py and pandas read, with its YAML") {
  REQUIRE_MESSAGE(python_available(), "Debian's python3 with h5py is needed (scripts/install-deps)");
  TempDir dir;
  const auto movie = simulate(dir, "--frames 30 --width 64 --height 64 --emitters 20");
  const auto h5 = (dir / "movie_locs.hdf5").string();
  const auto r = run_tool("fit2d", "-q " + shell_quote(movie) + kCamera);  // default output name
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  REQUIRE(fs::exists(h5));
  REQUIRE(fs::exists(dir / "movie_locs.yaml"));
  const auto check = run_command(
      shell_quote(NANOSCOPY_TEST_PYTHON) + " -c " +
      shell_quote("import sys, h5py, pandas, yaml\n"
                  "f = h5py.File(sys.argv[1], 'r'); locs = f['locs'][...]\n"
                  "for k in ('frame','x','y','photons','sx','sy','bg','lpx','lpy','net_gradient'): assert k in locs.dtype.names, k\n"
                  "assert locs.dtype['frame'].name == 'uint32' and locs.dtype['x'].name == 'float32'\n"
                  "assert len(locs) > 30 and (locs['frame'][1:] >= locs['frame'][:-1]).all()\n"
                  "df = pandas.read_hdf(sys.argv[1], key='locs'); assert len(df) == len(locs)\n"
                  "docs = list(yaml.safe_load_all(open(sys.argv[2])))\n"
                  "assert docs[0]['Width'] == 64 and docs[0]['Frames'] == 30 and docs[0]['Pixelsize'] == 108, docs[0]\n") +
      " " + shell_quote(h5) + " " + shell_quote((dir / "movie_locs.yaml").string()));
  INFO(check.output);
  CHECK(check.exit_code == 0);
}

TEST_CASE("Picasso's test movie: the spots Picasso found, at the same places") {
  TempDir dir;
  const auto ours = (dir / "ours.hdf5").string();
  // Picasso's simulation camera: baseline 0? Its yaml has no camera section; photons are irrelevant here.
  const auto r = run_tool("fit2d", "-q " + shell_quote(peer_file("picasso_testdata.raw").string()) + " -o " +
                                   shell_quote(ours) + " --box 7 --pixel-size 160 --baseline 0");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto mine = read_localizations(ours);
  const auto theirs = read_localizations(peer_file("picasso_testdata_locs.hdf5").string());
  std::vector<Localization> reference;
  // Picasso localized 1000 frames; the movie in tests/data/picasso holds the first 100.
  for (const auto& l : theirs)
    if (l.frame < 100) reference.push_back(l);
  REQUIRE(reference.size() >= 20);
  const auto m = match(mine, reference, 1.0);
  const double found = static_cast<double>(m.true_positives) / static_cast<double>(reference.size());
  MESSAGE("Picasso's " << reference.size() << " localizations: " << m.true_positives << " found by us too (" << found
                       << "), ours " << mine.size() << ", RMS distance " << m.rms << " px");
  CHECK(found >= 0.9);
  CHECK(m.rms < 0.1);  // px; Picasso fitted by MLE, we by least squares
  CHECK(m.false_positives <= reference.size() / 10);  // spots Picasso did not report
}

TEST_CASE("the camera comes from the movie's .yaml unless the user sets it; the summary says which") {
  TempDir dir;
  // bench simulate movie renders at 0.5 e-/ADU and records it in movie.yaml.
  const auto movie = simulate(dir, "--frames 60 --width 64 --height 64 --emitters 20 --photons 2000 --background 10");
  const auto yaml = read_file(dir / "movie.yaml");
  CHECK(yaml.find("Sensitivity: 0.5\n") != std::string::npos);
  CHECK(yaml.find("Baseline: 100\n") != std::string::npos);
  CHECK(yaml.find("Pixelsize: 108\n") != std::string::npos);
  const auto mean_photons = [&](const std::string& extra) {
    const auto csv = (dir / "locs.csv").string();
    const auto r = run_tool("fit2d", "-q --device cpu " + shell_quote(movie) + " -o " + shell_quote(csv) + extra);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto locs = read_localizations(csv, 108.0);
    REQUIRE(locs.size() > 20);
    double sum = 0;
    for (const auto& l : locs) sum += l.photons;
    return std::pair{sum / static_cast<double>(locs.size()), r.output};
  };
  const auto [from_movie, summary] = mean_photons("");
  CHECK(from_movie == doctest::Approx(2000).epsilon(0.15));  // not doubled: 0.5 e-/ADU was read
  CHECK(summary.find("0.5 e-/ADU") != std::string::npos);
  CHECK(summary.find("Sensitivity") != std::string::npos);
  CHECK(summary.find("from the movie: " + movie + ", " + (dir / "movie.yaml").string()) != std::string::npos);
  const auto [given, summary_given] = mean_photons(" --sensitivity 1");
  CHECK(given == doctest::Approx(2 * from_movie).epsilon(0.01));  // the command line wins
  CHECK(summary_given.find(" 1 e-/ADU") != std::string::npos);
  // A camera value that is not a number is one line naming the .yaml.
  write_file(dir / "movie.yaml", "Width: 64\nSensitivity: fast\n");
  const auto bad = run_tool("fit2d", "-q " + shell_quote(movie) + " -o " + shell_quote((dir / "x.csv").string()));
  CHECK(bad.exit_code == 3);
  CHECK(bad.output.find("movie.yaml: Sensitivity is not a number") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "x.csv"));
  // movie.tif -o movie.hdf5 would write movie.yaml over the movie's own: refused before any work.
  write_file(dir / "movie.yaml", yaml);
  const auto clash = run_tool("fit2d", "-q " + shell_quote(movie) + " -o " + shell_quote((dir / "movie.hdf5").string()));
  CHECK(clash.exit_code == 2);
  CHECK(clash.output.find("would write over the movie's metadata") != std::string::npos);
  CHECK(read_file(dir / "movie.yaml") == yaml);
  CHECK_FALSE(fs::exists(dir / "movie.hdf5"));
  // movie.tif -o movie.csv: the CSV's .yaml is movie.csv.yaml, the movie's own is left as it was.
  const auto csv = run_tool("fit2d", "-q " + shell_quote(movie) + " -o " + shell_quote((dir / "movie.csv").string()));
  CHECK(csv.exit_code == 0);
  CHECK(read_file(dir / "movie.yaml") == yaml);
  CHECK(fs::exists(dir / "movie.csv.yaml"));
}

TEST_CASE("Picasso's movie: its metadata leads the YAML, one pixel size, no second camera") {
  if (!python_available()) return;
  TempDir dir;
  const auto ours = (dir / "ours.hdf5").string();
  const auto r = run_tool("fit2d", "-q " + shell_quote(peer_file("picasso_testdata.raw").string()) + " -o " +
                                   shell_quote(ours) + " --baseline 0");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto check = run_command(
      shell_quote(NANOSCOPY_TEST_PYTHON) + " -c " +
      shell_quote("import sys, yaml\n"
                  "movie = yaml.safe_load(open(sys.argv[1]))\n"
                  "docs = list(yaml.load_all(open(sys.argv[2]), Loader=yaml.UnsafeLoader))  # picasso.io.load_info\n"
                  "assert len(docs) == 2, len(docs)\n"
                  "for k, v in movie.items():\n"
                  "    if k not in ('Frames', 'Pixelsize'): assert docs[0][k] == v, (k, docs[0].get(k), v)\n"
                  "assert docs[0]['Frames'] == 100 and docs[0]['Width'] == 32 and docs[0]['Height'] == 32\n"
                  "sizes = {d['Pixelsize'] for d in docs}\n"
                  "assert sizes == {160}, sizes  # the movie's Camera.Pixelsize, once\n"
                  "assert not [k for d in docs for k in d if k.startswith('Camera/')], 'a second camera'\n"
                  "assert docs[1]['Generated by'].startswith('nanoscopy fit2d')\n") +
      " " + shell_quote(peer_file("picasso_testdata.yaml").string()) + " " + shell_quote((dir / "ours.yaml").string()));
  INFO(check.output);
  CHECK(check.exit_code == 0);
}

TEST_CASE("truth and localizations share their conventions: bench compare scores CSV and Picasso alike") {
  TempDir dir;
  const auto movie = simulate(dir, "--frames 80 --width 64 --height 64 --emitters 25 --photons 2000 --background 10");
  const auto truth = read_file(dir / "movie_truth.csv");
  CHECK(truth.rfind("\"id\",\"frame\",\"x [nm]\",\"y [nm]\",\"intensity [photon]\"\n1,1,", 0) == 0);  // frames from 1
  std::map<std::string, std::string> json;
  for (const std::string name : {"l.csv", "l.hdf5"}) {
    const auto out = (dir / name).string();
    REQUIRE(run_tool("fit2d", "-q --device cpu " + shell_quote(movie) + " -o " + shell_quote(out)).exit_code == 0);
    const auto j = (dir / (name + ".json")).string();
    const auto r = run_tool("bench", "compare " + shell_quote(out) + " " + shell_quote((dir / "movie_truth.csv").string()) +
                                     " --radius 108 --json " + shell_quote(j));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(r.output.find("recall:") != std::string::npos);
    CHECK(r.output.find("RMS error:") != std::string::npos);
    json[name] = read_file(j);
  }
  // Equal counts and errors (nm) from both formats (float32 px against 7-digit nm).
  auto csv = nlohmann::json::parse(json["l.csv"]), h5 = nlohmann::json::parse(json["l.hdf5"]);
  for (const char* key : {"true_positives", "false_positives", "false_negatives"}) CHECK(csv[key] == h5[key]);
  for (const char* key : {"rms_nm", "median_error_nm", "bias_x_nm", "bias_y_nm"})
    CHECK(csv[key].get<double>() == doctest::Approx(h5[key].get<double>()).epsilon(1e-3));
  // Against the library's own matching of the rows.
  const auto m = match(read_localizations((dir / "l.csv").string(), 108.0), read_truth(dir / "movie_truth.csv"), 1.0);
  CHECK(csv["true_positives"] == m.true_positives);
  CHECK(m.true_positives >= 0.9 * static_cast<double>(m.true_positives + m.false_negatives));
  CHECK(m.rms < 0.1);
}

TEST_CASE("awkward stacks: spots on borders, empty frames, one frame, NaN frames") {
  TempDir dir;
  SUBCASE("an empty movie gives an empty but valid file") {
    const auto movie = simulate(dir, "--frames 5 --emitters 0");
    const auto csv = (dir / "empty.csv").string();
    const auto r = run_tool("fit2d", "-q " + shell_quote(movie) + " -o " + shell_quote(csv) + kCamera);
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(read_localizations(csv, 108).empty());
  }
  SUBCASE("a stack of one frame") {
    const auto movie = simulate(dir, "--frames 1 --emitters 10 --on-fraction 1");
    const auto csv = (dir / "one.csv").string();
    CHECK(run_tool("fit2d", "-q " + shell_quote(movie) + " -o " + shell_quote(csv) + kCamera).exit_code == 0);
    CHECK(read_localizations(csv, 108).size() >= 5);
  }
  SUBCASE("frames smaller than the box") {
    const auto movie = simulate(dir, "--frames 2 --width 5 --height 5 --emitters 0");
    const auto r = run_tool("fit2d", "-q " + shell_quote(movie) + " -o " + shell_quote((dir / "x.csv").string()));
    CHECK(r.exit_code == 3);
    CHECK(r.output.find("movie.tif") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "x.csv"));
  }
  SUBCASE("unknown output extension and contradictory camera settings") {
    const auto movie = simulate(dir, "--frames 2 --emitters 2");
    auto r = run_tool("fit2d", "-q " + shell_quote(movie) + " -o " + shell_quote((dir / "x.xlsx").string()));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("x.xlsx") != std::string::npos);
    r = run_tool("fit2d", "-q " + shell_quote(movie) + " --gain 0");
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("Gain") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "movie_locs.hdf5"));
  }
}

TEST_CASE("fit2d --track recovers the imposed drift from fiducial markers") {
  TempDir dir;
  const double dx = 0.01, dy = -0.006;  // px per frame
  const auto movie = simulate(dir, "--frames 300 --width 80 --height 80 --emitters 15 --markers 5 --drift-x 0.01 "
                                   "--drift-y -0.006 --photons 1500");
  const auto out = (dir / "locs.hdf5").string();
  const auto r = run_tool("fit2d", "-q " + shell_quote(movie) + " -o " + shell_quote(out) + kCamera + "--track");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("markers") != std::string::npos);
  std::istringstream drift(read_file(dir / "locs_drift.txt"));
  std::vector<double> mx, my;
  double a = 0, b = 0;
  while (drift >> a >> b) mx.push_back(a), my.push_back(b);
  REQUIRE(mx.size() == 300);  // one line per frame, from frame 0
  // The trace is relative (zero mean over the frames); compare with the truth less its mean.
  const double mean_t = 149.5;
  double sum2 = 0;
  for (std::size_t t = 0; t < mx.size(); ++t) {
    const double ex = mx[t] - dx * (static_cast<double>(t) - mean_t);
    const double ey = my[t] - dy * (static_cast<double>(t) - mean_t);
    sum2 += ex * ex + ey * ey;
  }
  const double rms = std::sqrt(sum2 / static_cast<double>(mx.size()));
  MESSAGE("drift RMS error " << rms << " px over 300 frames (imposed: 3 px in x, -1.8 px in y)");
  CHECK(rms < 0.05);
  CHECK(fs::exists(dir / "locs_drift.csv"));
  CHECK(fs::exists(dir / "locs_tracks.csv"));
}

TEST_CASE("fit2d --roi follows fixed markers and streams one line per frame") {
  TempDir dir;
  const auto movie = simulate(dir, "--frames 40 --width 64 --height 64 --emitters 0 --markers 4 --drift-x 0.02");
  // The markers' positions from the truth of frame 0.
  std::string rois;
  for (const auto& t : read_truth(dir / "movie_truth.csv"))
    if (t.frame == 0) rois += std::to_string(t.x) + " " + std::to_string(t.y) + "\n";
  write_file(dir / "markers.txt", rois);
  // stdout alone: the summary goes to stderr with --stream (the parentheses keep run_command's 2>&1 off it).
  const auto r = run_command("(" + shell_quote(app_path("fit2d")) + " -q " + shell_quote(movie) + " --roi " +
                             shell_quote((dir / "markers.txt").string()) + " --box 9 --stream" + kCamera +
                             " 2>/dev/null)");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::istringstream lines(r.output);
  std::string line;
  int count = 0;
  double last_dx = 0;
  while (std::getline(lines, line)) {
    std::istringstream f(line);
    std::int64_t frame = 0;
    double dx_nm = 0, dy_nm = 0;
    f >> frame >> dx_nm >> dy_nm;
    CHECK(frame == count);
    last_dx = dx_nm;
    ++count;
  }
  CHECK(count == 40);
  CHECK(last_dx == doctest::Approx(0.02 * 39 * 108).epsilon(0.1));  // nm
  CHECK(fs::exists(dir / "movie_roi_drift.csv"));

  write_file(dir / "outside.txt", "10 10\n70 20\n");
  const auto bad = run_tool("fit2d", "-q " + shell_quote(movie) + " --roi " + shell_quote((dir / "outside.txt").string()));
  CHECK(bad.exit_code == 3);
  CHECK(bad.output.find("outside.txt:2") != std::string::npos);
}

TEST_CASE("fit2d --regions localizes only inside the given regions") {
  TempDir dir;
  const auto movie = simulate(dir, "--frames 40 --width 64 --height 64 --emitters 30 --on-fraction 0.3");
  write_file(dir / "left.txt", "# x0 y0 width height\n0 0 32 64\n");
  const auto all_csv = (dir / "all.csv").string(), left_csv = (dir / "left.csv").string();
  REQUIRE(run_tool("fit2d", "-q " + shell_quote(movie) + " -o " + shell_quote(all_csv) + kCamera).exit_code == 0);
  const auto r = run_tool("fit2d", "-q " + shell_quote(movie) + " -o " + shell_quote(left_csv) + kCamera + "--regions " +
                                   shell_quote((dir / "left.txt").string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto all = read_localizations(all_csv, 108), left = read_localizations(left_csv, 108);
  std::size_t expected = 0;
  for (const auto& l : all) expected += l.x < 31.5 ? 1 : 0;
  CHECK(left.size() > 0);
  CHECK(left.size() < all.size());
  for (const auto& l : left) CHECK(l.x < 32.5);
  CHECK(left.size() >= expected - expected / 20);  // spots straddling the edge may go either way

  write_file(dir / "bad.txt", "0 0 32 64\n40 40 40 10\n");
  const auto bad = run_tool("fit2d", "-q " + shell_quote(movie) + " --regions " + shell_quote((dir / "bad.txt").string()));
  CHECK(bad.exit_code == 3);
  CHECK(bad.output.find("bad.txt:2") != std::string::npos);
}

TEST_CASE("fit2d on an EMCCD movie: mle's precision carries the excess-noise factor √2 and matches the error") {
  TempDir dir;
  const auto movie = simulate(dir, "--camera emccd --frames 300 --emitters 30 --photons 1500 --background 10");
  const auto csv = (dir / "locs.csv").string();
  const auto r = run_tool("fit2d", "-q " + shell_quote(movie) + " -o " + shell_quote(csv) + " --device cpu");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "mle (auto: camera data)"));  // the movie's .yaml names the EMCCD
  const auto locs = read_localizations(csv, 108.0);
  const auto truth = read_truth(dir / "movie_truth.csv");
  // Each localization against its nearest truth in the frame (within 1 px).
  std::vector<double> errors;
  double lp2 = 0;
  for (const auto& l : locs) {
    double best = 1.0, dx = 0;
    for (const auto& t : truth)
      if (t.frame == l.frame && std::hypot(l.x - t.x, l.y - t.y) < best) best = std::hypot(l.x - t.x, l.y - t.y), dx = l.x - t.x;
    if (best >= 1.0) continue;
    errors.push_back(std::abs(dx));
    lp2 += l.lpx * l.lpx;
  }
  REQUIRE(errors.size() > 500);
  std::nth_element(errors.begin(), errors.begin() + static_cast<std::ptrdiff_t>(errors.size() / 2), errors.end());
  const double spread = errors[errors.size() / 2] / 0.6745;  // robust sd of x̂ − x (px)
  const double reported = std::sqrt(lp2 / static_cast<double>(errors.size()));
  MESSAGE("EMCCD mle: error sd " << spread * 108 << " nm, reported precision " << reported * 108 << " nm");
  CHECK(reported == doctest::Approx(spread).epsilon(0.15));
  CHECK(std::abs(reported / std::sqrt(2.0) - spread) > 0.2 * spread);  // without √2 it would be ~30 % low
}
