// Localization files: ThunderSTORM CSV and Picasso HDF5 + YAML, read back by
// Python (csv, pandas, h5py, PyTables through pandas.read_hdf, PyYAML; see
// tests/python/locs_*.py), by our own readers, and Picasso's own file read by us.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <locale>
#include <nlohmann/json.hpp>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/table_writer.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "support/test_support.hpp"

namespace {

using namespace nanoscopy;
namespace fs = std::filesystem;

// What each Picasso/ThunderSTORM rule should do with a row of the test data.
enum class Expect { kept, non_finite, outside_image, negative };

struct TestLoc {
  Localization loc;
  Expect picasso = Expect::kept;
  bool csv_kept = true;  // CSV drops non-finite rows only
};

LocWriterContext test_context() {
  LocWriterContext ctx;
  ctx.camera.pixel_size_nm = 160.5;  // not an integer: the decimal point must survive any locale
  ctx.camera.baseline = 100;
  ctx.camera.sensitivity = 0.45;
  ctx.camera.qe = 0.9;
  ctx.width = 64;
  ctx.height = 48;
  ctx.frames = 50;
  ctx.data_type = "uint16";
  ctx.version = "0.1.0";
  ctx.fit_diagnostics = true;  // the default (Picasso's and ThunderSTORM's columns alone) has its own test
  ctx.parameters = {{"Box Size", "7"},
                    {"Min. Net Gradient", "5000"},
                    {"Fit method", "lsq, sampled Gaussian"},
                    {"Source", "/data/movie: a.tif"}};
  return ctx;
}

// Deterministic rows in frame order, 4 per frame, with the invalid rows below spread in.
// Row 0 is the "known row" that tests/python/locs_check_csv.py checks by hand (keep in step).
std::vector<TestLoc> test_locs() {
  std::vector<TestLoc> out;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (std::int64_t f = 0; f < 50; ++f) {
    for (int k = 0; k < 4; ++k) {
      TestLoc t;
      Localization& l = t.loc;
      l.frame = f;
      const double u = std::fmod(0.1 + 0.61803398875 * static_cast<double>(f * 4 + k), 1.0);
      const double v = std::fmod(0.3 + 0.41421356237 * static_cast<double>(f * 4 + k), 1.0);
      l.x = 1.0 + 61.0 * u;
      l.y = 1.0 + 45.0 * v;
      l.sigma = 1.0 + 0.05 * k + 0.001 * static_cast<double>(f);
      l.photons = 500.0 + 13.25 * static_cast<double>(f) + k;
      l.background = 3.0 + 0.1 * k;
      l.lpx = 0.02 + 0.001 * k;
      l.lpy = 0.021 + 0.001 * k;
      l.chi2 = 1.5 + 0.01 * static_cast<double>(f);
      l.net_gradient = 4000.0 + static_cast<double>(f * 10 + k);
      l.iterations = 3 + k;
      l.status = static_cast<FitStatus>(k % 3);
      if (f == 0 && k == 0) {
        l.x = 10.0, l.y = 20.0, l.sigma = 1.25, l.photons = 1000, l.background = 4, l.lpx = 0.05, l.lpy = 0.06;
        l.chi2 = 2.5, l.iterations = 5, l.status = FitStatus::converged_min_step;
      }
      if (k == 1) {
        switch (f) {
          case 5:
            l.x = nan, t.picasso = Expect::non_finite, t.csv_kept = false;
            break;
          case 6:
            l.chi2 = inf, t.picasso = Expect::non_finite, t.csv_kept = false;
            break;
          case 7:
            l.x = 64.2, t.picasso = Expect::outside_image;
            break;
          case 8:
            l.x = 64.0 - 1e-9, t.picasso = Expect::outside_image;
            break;  // 64.0f as stored
          case 9:
            l.y = -0.3, t.picasso = Expect::outside_image;
            break;
          case 10:
            l.photons = -5, t.picasso = Expect::negative;
            break;
          case 11:
            l.lpx = 0, t.picasso = Expect::negative;
            break;
          case 12:
            l.sigma = -1, t.picasso = Expect::negative;
            break;
          case 13:
            l.x = 1e39, t.picasso = Expect::non_finite, t.csv_kept = false;
            break;  // inf as float
          case 14:
            l.y = 48.0, t.picasso = Expect::outside_image;
            break;
          default:
            break;
        }
      }
      out.push_back(t);
    }
  }
  return out;
}

std::vector<Localization> plain(const std::vector<TestLoc>& rows) {
  std::vector<Localization> locs;
  for (const auto& r : rows) locs.push_back(r.loc);
  return locs;
}

// Appends in per-frame batches, as the pipeline does.
LocWriteCounts write_by_frame(LocalizationWriter& writer, const std::vector<Localization>& locs) {
  std::size_t i = 0;
  while (i < locs.size()) {
    std::size_t j = i;
    while (j < locs.size() && locs[j].frame == locs[i].frame) ++j;
    writer.append(std::span(locs).subspan(i, j - i));
    i = j;
  }
  writer.finish();
  return writer.counts();
}

// The input rows and the context, for the Python checks (which apply the rules themselves).
// nlohmann writes NaN and infinities as null; the Python side reads null as NaN.
void write_expectation(const fs::path& path, const LocWriterContext& ctx, const std::vector<Localization>& locs) {
  nlohmann::json j;
  j["pixel_size"] = ctx.camera.pixel_size_nm;
  j["width"] = ctx.width;
  j["height"] = ctx.height;
  j["frames"] = ctx.frames;
  j["generated_by"] = ctx.program + " " + ctx.version;
  j["fit_diagnostics"] = ctx.fit_diagnostics;
  j["parameters"] = nlohmann::json::array();
  for (const auto& [k, v] : ctx.parameters) j["parameters"].push_back({k, v});
  j["locs"] = nlohmann::json::array();
  for (const auto& l : locs)
    j["locs"].push_back({{"frame", l.frame},
                         {"x", l.x},
                         {"y", l.y},
                         {"sigma", l.sigma},
                         {"photons", l.photons},
                         {"background", l.background},
                         {"lpx", l.lpx},
                         {"lpy", l.lpy},
                         {"chi2", l.chi2},
                         {"net_gradient", l.net_gradient},
                         {"iterations", l.iterations},
                         {"status", static_cast<int>(l.status)}});
  test::write_file(path, j.dump());
}

// Writes `locs` to each of `names` in `dir` and checks each with its Python reader.
void write_and_check_with_python(const fs::path& dir, const LocWriterContext& ctx, const std::vector<Localization>& locs,
                                 const std::vector<std::string>& names) {
  write_expectation(dir / "expected.json", ctx, locs);
  for (const std::string& name : names) {
    CAPTURE(name);
    const auto path = (dir / name).string();
    write_localizations(path, "", ctx, locs);
    const auto check =
        test::run_python(fs::path(name).extension() == ".csv" ? "locs_check_csv.py" : "locs_check_picasso.py",
                         {path, (dir / "expected.json").string()});
    CHECK_MESSAGE(check.exit_code == 0, check.output);
  }
}

void require_python() {
  REQUIRE_MESSAGE(test::python_available(), "the cross-checks need /usr/bin/python3 with numpy, h5py and pandas");
}


// Round trip tolerance: float32 storage (Picasso) or 7 significant digits (CSV).
void check_close(double got, double want, double rel, const char* what) {
  CAPTURE(what);
  CAPTURE(got);
  CAPTURE(want);
  CHECK(std::abs(got - want) <= rel * std::max(1.0, std::abs(want)));
}

}  // namespace

TEST_CASE("ThunderSTORM CSV: read by Python's csv and pandas; header, ids, frames, nm with the half pixel") {
  require_python();
  test::TempDir dir;
  const auto ctx = test_context();
  const auto rows = test_locs();
  const auto locs = plain(rows);
  const auto path = (dir / "locs.csv").string();

  std::int64_t kept = 0;
  for (const auto& r : rows) kept += r.csv_kept;

  auto writer = create_localization_writer(path, "", ctx);
  CHECK(writer->format() == LocFormat::thunderstorm_csv);
  CHECK(writer->files() == std::vector<std::string>{path, (dir / "locs.csv.yaml").string()});
  const LocWriteCounts counts = write_by_frame(*writer, locs);
  CHECK(counts.written == kept);
  CHECK(counts.non_finite == 3);
  CHECK(counts.dropped() == 3);

  write_expectation(dir / "expected.json", ctx, locs);
  const auto check = test::run_python("locs_check_csv.py", {path, (dir / "expected.json").string()});
  CHECK_MESSAGE(check.exit_code == 0, check.output);
  MESSAGE(check.output);

  // The header, byte for byte.
  const std::string text = test::read_file(path);
  CHECK(text.substr(0, text.find('\n')) ==
        "\"id\",\"frame\",\"x [nm]\",\"y [nm]\",\"sigma [nm]\",\"intensity [photon]\",\"offset [photon]\","
        "\"bkgstd [photon]\",\"uncertainty_xy [nm]\",\"chi2\",\"iterations\",\"status\"");
}

TEST_CASE("Picasso HDF5 + YAML: h5py, pandas.read_hdf, PyYAML; Picasso's filtering rules") {
  require_python();
  test::TempDir dir;
  const auto ctx = test_context();
  const auto rows = test_locs();
  const auto locs = plain(rows);
  const auto path = (dir / "movie_locs.hdf5").string();

  LocWriteCounts want;
  for (const auto& r : rows) {
    want.written += r.picasso == Expect::kept;
    want.non_finite += r.picasso == Expect::non_finite;
    want.outside_image += r.picasso == Expect::outside_image;
    want.negative += r.picasso == Expect::negative;
  }
  REQUIRE(want.non_finite == 3);
  REQUIRE(want.outside_image == 4);
  REQUIRE(want.negative == 3);

  auto writer = create_localization_writer(path, "", ctx);
  CHECK(writer->format() == LocFormat::picasso_hdf5);
  REQUIRE(writer->files().size() == 2);
  CHECK(writer->files()[1] == (dir / "movie_locs.yaml").string());
  const LocWriteCounts counts = write_by_frame(*writer, locs);
  CHECK(counts.written == want.written);
  CHECK(counts.non_finite == want.non_finite);
  CHECK(counts.outside_image == want.outside_image);
  CHECK(counts.negative == want.negative);
  CHECK(fs::exists(dir / "movie_locs.yaml"));

  write_expectation(dir / "expected.json", ctx, locs);
  const auto check = test::run_python("locs_check_picasso.py", {path, (dir / "expected.json").string()});
  CHECK_MESSAGE(check.exit_code == 0, check.output);
  MESSAGE(check.output);
}

TEST_CASE("by default: Picasso Localize's least-squares fields and ThunderSTORM's header, nothing else") {
  require_python();
  test::TempDir dir;
  auto ctx = test_context();
  ctx.fit_diagnostics = false;
  const auto locs = plain(test_locs());
  write_and_check_with_python(dir.path(), ctx, locs, {"l.csv", "l_locs.hdf5"});
  const std::string text = test::read_file(dir / "l.csv");
  CHECK(text.substr(0, text.find('\n')) ==
        "\"id\",\"frame\",\"x [nm]\",\"y [nm]\",\"sigma [nm]\",\"intensity [photon]\",\"offset [photon]\","
        "\"bkgstd [photon]\",\"uncertainty_xy [nm]\"");
  // A fit's chi2 is not written, so a non-finite one drops nothing.
  const auto back = read_localizations((dir / "l.csv").string(), ctx.camera.pixel_size_nm);
  std::size_t finite_written = 0;
  for (const auto& l : locs)
    finite_written += std::isfinite(static_cast<float>((l.x + 0.5) * 160.5)) && std::isfinite(static_cast<float>((l.y + 0.5) * 160.5)) &&
                      std::isfinite(static_cast<float>(l.sigma)) && std::isfinite(static_cast<float>(l.photons)) &&
                      std::isfinite(static_cast<float>(l.background)) && std::isfinite(static_cast<float>(l.lpx * 160.5));
  CHECK(back.size() == finite_written);
}

TEST_CASE("both formats under a comma-decimal global locale still write and read US numbers") {
  require_python();
  const test::GlobalLocale comma(std::locale(std::locale::classic(), new test::CommaNumpunct));
  test::TempDir dir;
  const auto ctx = test_context();
  const auto locs = plain(test_locs());
  write_and_check_with_python(dir.path(), ctx, locs, {"l.csv", "l_locs.h5"});
  for (const std::string name : {"l.csv", "l_locs.h5"}) {
    const LocalizationFile back = read_localization_file((dir / name).string(), {"", ctx.camera.pixel_size_nm});
    CHECK(back.pixel_size_nm == ctx.camera.pixel_size_nm);
  }
  // The YAML's Pixelsize itself, read without a hint.
  CHECK(read_localization_file((dir / "l_locs.h5").string()).pixel_size_nm == 160.5);
}

TEST_CASE("round trip: write then read gives the rows back (Picasso: float32; CSV: 7 digits)") {
  test::TempDir dir;
  const auto ctx = test_context();
  const auto rows = test_locs();
  const auto locs = plain(rows);

  SUBCASE("Picasso") {
    const auto path = (dir / "rt_locs.hdf5").string();
    write_localizations(path, "", ctx, locs);
    const LocalizationFile file = read_localization_file(path);
    CHECK(file.format == LocFormat::picasso_hdf5);
    CHECK(file.width == 64);
    CHECK(file.height == 48);
    CHECK(file.frames == 50);
    CHECK(file.pixel_size_nm == 160.5);
    std::vector<Localization> want;
    for (const auto& r : rows)
      if (r.picasso == Expect::kept) want.push_back(r.loc);
    REQUIRE(file.locs.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      CAPTURE(i);
      const Localization& g = file.locs[i];
      const Localization& w = want[i];
      CHECK(g.frame == w.frame);
      check_close(g.x, w.x, 1e-7, "x");
      check_close(g.y, w.y, 1e-7, "y");
      check_close(g.sigma, w.sigma, 1e-7, "sigma");
      check_close(g.photons, w.photons, 1e-7, "photons");
      check_close(g.background, w.background, 1e-7, "background");
      check_close(g.lpx, w.lpx, 1e-7, "lpx");
      check_close(g.lpy, w.lpy, 1e-7, "lpy");
      check_close(g.chi2, w.chi2, 1e-7, "chi2");
      check_close(g.net_gradient, w.net_gradient, 1e-7, "net_gradient");
      CHECK(g.iterations == w.iterations);
      CHECK(g.status == w.status);
    }
  }

  SUBCASE("ThunderSTORM CSV") {
    const auto path = (dir / "rt.csv").string();
    write_localizations(path, "", ctx, locs);
    const std::vector<Localization> got = read_localizations(path, ctx.camera.pixel_size_nm);
    std::vector<Localization> want;
    for (const auto& r : rows)
      if (r.csv_kept) want.push_back(r.loc);
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      CAPTURE(i);
      const Localization& g = got[i];
      const Localization& w = want[i];
      CHECK(g.frame == w.frame);
      // nm values carry 7 significant digits: |x_nm| ≤ 1e4 → 1e-3 nm → ~1e-5 px.
      check_close(g.x, w.x, 2e-5, "x");
      check_close(g.y, w.y, 2e-5, "y");
      check_close(g.sigma, w.sigma, 1e-6, "sigma");
      check_close(g.photons, w.photons, 1e-6, "photons");
      check_close(g.background, w.background, 1e-6, "background");
      check_close(g.lpx, w.lpx, 1e-6, "lpx");
      CHECK(g.lpy == g.lpx);  // one uncertainty column
      check_close(g.chi2, w.chi2, 1e-6, "chi2");
      CHECK(g.iterations == w.iterations);
      CHECK(g.status == w.status);
    }
    // The known row, exactly: x_nm = (10 + 0.5)·160.5 = 1685.25 → 10 px.
    CHECK(got[0].x == 10.0);
    CHECK(got[0].y == 20.0);
  }
}

TEST_CASE("Picasso's own file: picasso_testdata_locs.hdf5 (564 MLE localizations) read by us, checked by h5py") {
  const auto path = test::peer_file("picasso_testdata_locs.hdf5").string();
  REQUIRE_MESSAGE(fs::exists(path), "peer fixture missing: " << path);
  const LocalizationFile file = read_localization_file(path);
  CHECK(file.format == LocFormat::picasso_hdf5);
  REQUIRE(file.locs.size() == 564);
  CHECK(file.width == 32);
  CHECK(file.height == 32);
  CHECK(file.frames == 1000);
  // Picasso Localize's own document says 130 nm; the simulated camera (first document) said 160.
  CHECK(file.pixel_size_nm == 130);
  const Localization& first = file.locs.front();
  CHECK(first.frame == 11);
  CHECK(first.x == doctest::Approx(5.618027).epsilon(1e-7));
  CHECK(first.y == doctest::Approx(5.3064218).epsilon(1e-7));
  CHECK(first.photons == doctest::Approx(5788.1953).epsilon(1e-7));
  CHECK(first.sigma == doctest::Approx(0.8546326).epsilon(1e-7));
  CHECK(first.background == doctest::Approx(249.22217).epsilon(1e-7));
  CHECK(first.lpx == doctest::Approx(0.018062089).epsilon(1e-7));
  CHECK(first.lpy == doctest::Approx(0.018066147).epsilon(1e-7));
  CHECK(first.net_gradient == doctest::Approx(12664.734).epsilon(1e-7));
  CHECK(first.iterations == 3);
  CHECK(first.status == FitStatus::converged_min_delta);  // no status field: an accepted localization
  CHECK(file.locs.back().frame == 990);
  for (std::size_t i = 1; i < file.locs.size(); ++i) CHECK(file.locs[i - 1].frame <= file.locs[i].frame);

  if (test::python_available()) {
    // Every row and field against h5py.
    test::TempDir dir;
    nlohmann::json j = nlohmann::json::array();
    for (const auto& l : file.locs)
      j.push_back({l.frame, l.x, l.y, l.photons, l.sigma, l.background, l.lpx, l.lpy, l.net_gradient, l.iterations});
    test::write_file(dir / "ours.json", j.dump());
    const auto check = test::run_python("locs_check_peer.py", {path, (dir / "ours.json").string()});
    CHECK_MESSAGE(check.exit_code == 0, check.output);
  }
}

TEST_CASE("ThunderSTORM's own CSV layout: other column order, px units, extra columns, CRLF") {
  test::TempDir dir;
  const auto path = dir / "ts.csv";
  test::write_file(path,
                   "\xEF\xBB\xBF\"frame\",\"id\",\"x [px]\",\"y [nm]\",\"sigma [nm]\",\"intensity [photon]\","
                   "\"offset [photon]\",\"bkgstd [photon]\",\"uncertainty [nm]\",\"detections\"\r\n"
                   "1,1,10.5,3250,200,1234.5,12.25,3.5,9.75,1\r\n"
                   "\r\n"
                   "3,2,0.5,NaN,100,1e3,0,0,1,2\r\n"
                   "\"4\", \"3\",\"1.5\",\"+50\",100,1,0,0,1,2\n");
  const auto locs = read_localizations(path.string(), 100);
  REQUIRE(locs.size() == 3);
  CHECK(locs[0].frame == 0);
  CHECK(locs[0].x == 10.0);
  CHECK(locs[0].y == 32.0);
  CHECK(locs[0].sigma == 2.0);
  CHECK(locs[0].photons == 1234.5);
  CHECK(locs[0].background == 12.25);
  CHECK(locs[0].lpx == 0.0975);
  CHECK(locs[0].lpy == 0.0975);
  CHECK(locs[0].status == FitStatus::converged_min_delta);
  CHECK(locs[1].frame == 2);
  CHECK(locs[1].x == 0.0);
  CHECK(std::isnan(locs[1].y));
  CHECK(locs[1].photons == 1000);
  CHECK(locs[2].frame == 3);  // quoted values
  CHECK(locs[2].x == 1.0);
  CHECK(locs[2].y == 0.0);
}

TEST_CASE("reading errors name the file (and line)") {
  test::TempDir dir;

  SUBCASE("CSV without a frame column") {
    const auto path = (dir / "noframe.csv").string();
    test::write_file(path, "\"id\",\"x [nm]\",\"y [nm]\"\n1,100,200\n");
    const auto e = test::expect_error<InputError>([&] { read_localizations(path, 100); });
    CHECK(e.where() == path);
    CHECK(test::contains(e.what(), "no frame column"));
  }
  SUBCASE("CSV: a value that is not a number, a short row, frame 0") {
    const auto path = (dir / "bad.csv").string();
    test::write_file(path, "\"frame\",\"x [nm]\",\"y [nm]\"\n1,100,200\n2,1,2x\n");
    auto e = test::expect_error<InputError>([&] { read_localizations(path, 100); });
    CHECK(e.where() == path + ":3");
    CHECK(test::contains(e.what(), "'2x' is not a number"));
    test::write_file(path, "\"frame\",\"x [nm]\",\"y [nm]\"\n1,100\n");
    e = test::expect_error<InputError>([&] { read_localizations(path, 100); });
    CHECK(e.where() == path + ":2");
    test::write_file(path, "\"frame\",\"x [nm]\",\"y [nm]\"\n0,100,100\n");
    e = test::expect_error<InputError>([&] { read_localizations(path, 100); });
    CHECK(test::contains(e.what(), "whole number"));
  }
  SUBCASE("CSV needs the pixel size") {
    const auto path = (dir / "p.csv").string();
    test::write_file(path, "\"frame\",\"x [nm]\",\"y [nm]\"\n1,100,200\n");
    const auto e = test::expect_error<UsageError>([&] { read_localizations(path); });
    CHECK(e.where() == path);
  }
  SUBCASE("HDF5: an empty table, no /locs, /locs without x, a missing file") {
    const auto path = (dir / "empty_locs.hdf5").string();
    write_localizations(path, "", test_context(), {});
    CHECK(read_localizations(path).empty());  // an empty table is fine

    const auto other = (dir / "other.h5").string();
    auto table = create_hdf5_table_writer(other, "drift", {{"x", ColumnType::f32}});
    table->finish();
    auto e = test::expect_error<InputError>([&] { read_localizations(other); });
    CHECK(e.where() == other);
    CHECK(test::contains(e.what(), "/locs"));

    const auto no_x = (dir / "no_x.h5").string();
    table = create_hdf5_table_writer(no_x, "locs", {{"frame", ColumnType::u32}, {"y", ColumnType::f32}});
    table->finish();
    e = test::expect_error<InputError>([&] { read_localizations(no_x); });
    CHECK(test::contains(e.what(), "'x'"));

    const auto missing = (dir / "missing_locs.hdf5").string();
    e = test::expect_error<InputError>([&] { read_localizations(missing); });
    CHECK(e.where() == missing);
  }
  SUBCASE("HDF5: integer columns stored as floats must hold whole numbers (len, n); iterations a count or mean") {
    // The fuzzer's case: a NaN len was cast to int (undefined behaviour) instead of refused. iterations may be a
    // link's mean (2.5, as Picasso's link writes it), never NaN, huge or negative.
    for (const char* name : {"len", "n", "iterations"})
      for (const double bad : {std::nan(""), 1e300, std::string(name) == "iterations" ? -1.0 : 2.5}) {
        CAPTURE(name);
        CAPTURE(bad);
        const auto path = (dir / (std::string("float_") + name + ".hdf5")).string();
        auto table = create_hdf5_table_writer(path, "locs",
                                              {{"frame", ColumnType::u32}, {"x", ColumnType::f32},
                                               {"y", ColumnType::f32}, {name, ColumnType::f64}});
        const double row[] = {3, 10.5, 11.5, bad};
        table->append(row);
        table->finish();
        const auto e = test::expect_error<InputError>([&] { read_localizations(path); });
        CHECK(e.where() == path);
        CHECK(test::contains(e.what(), std::string(name) + " "));
        CHECK(test::contains(e.what(), std::string(name) == "iterations" ? "is not an iteration count"
                                                                         : "is not a whole number"));
      }
  }
}

TEST_CASE("no file under the final name without finish(); order and range of frames") {
  test::TempDir dir;
  const auto ctx = test_context();
  const auto locs = plain(test_locs());

  SUBCASE("destroyed without finish: neither .csv nor .hdf5 nor .yaml") {
    for (const char* name : {"a.csv", "a_locs.hdf5", "b_locs.h5"}) {
      auto writer = create_localization_writer((dir / name).string(), "", ctx);
      writer->append(std::span(locs).first(20));
    }
    CHECK(fs::is_empty(dir.path()));
  }
  SUBCASE("frames out of order or outside the movie: OutputError, and nothing left") {
    {
      auto writer = create_localization_writer((dir / "c_locs.hdf5").string(), "", ctx);
      writer->append(std::span(locs).subspan(8, 4));  // frame 2
      const auto e = test::expect_error<OutputError>([&] { writer->append(std::span(locs).first(4)); });
      CHECK(test::contains(e.what(), "sorted by frame"));
      Localization late = locs[0];
      late.frame = 50;
      CHECK_THROWS_AS(writer->append(std::span(&late, 1)), OutputError);
    }
    CHECK(fs::is_empty(dir.path()));
  }
  SUBCASE("finish twice") {
    auto writer = create_localization_writer((dir / "d_locs.hdf5").string(), "", ctx);
    writer->append(locs);
    writer->finish();
    CHECK_THROWS_AS(writer->finish(), OutputError);
    CHECK(fs::exists(dir / "d_locs.hdf5"));
    CHECK(fs::exists(dir / "d_locs.yaml"));
  }
}

TEST_CASE("unknown formats and bad contexts are usage errors naming the path") {
  test::TempDir dir;
  const auto ctx = test_context();
  const auto path = (dir / "locs.txt").string();
  auto e = test::expect_error<UsageError>([&] { create_localization_writer(path, "", ctx); });
  CHECK(e.where() == path);
  CHECK(test::contains(e.what(), ".txt"));
  CHECK(test::contains(e.what(), ".csv"));
  CHECK(test::contains(e.what(), ".hdf5"));
  CHECK(test::contains(e.what(), ".h5"));
  e = test::expect_error<UsageError>([&] { create_localization_writer((dir / "x.csv").string(), "tiff", ctx); });
  CHECK(test::contains(e.what(), "'tiff'"));
  e = test::expect_error<UsageError>([&] { read_localizations((dir / "noext").string(), 100); });
  CHECK(test::contains(e.what(), "extension"));

  // An explicit format overrides the extension.
  CHECK(loc_format_for("x.dat", "picasso") == LocFormat::picasso_hdf5);
  CHECK(loc_format_for("X.CSV") == LocFormat::thunderstorm_csv);
  CHECK(loc_format_for("x.H5") == LocFormat::picasso_hdf5);

  LocWriterContext bad = ctx;
  bad.frames = 0;
  CHECK_THROWS_AS(create_localization_writer((dir / "x_locs.hdf5").string(), "", bad), UsageError);
  bad = ctx;
  bad.camera.pixel_size_nm = 0;
  CHECK_THROWS_AS(create_localization_writer((dir / "x.csv").string(), "", bad), UsageError);
  bad = ctx;
  bad.parameters.push_back({"Pixelsize", "100"});  // the writer's own key
  CHECK_THROWS_AS(create_localization_writer((dir / "x_locs.hdf5").string(), "", bad), UsageError);
  CHECK(fs::is_empty(dir.path()));
}
