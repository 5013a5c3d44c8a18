// fit2d filter and its expressions (loc/filter/where.hpp): the grammar and its
// precedence, NaN rows, the one-line errors (an unknown column lists the
// columns), and the command on our files and on Picasso's own test file, with
// the kept rows counted independently.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/loc/filter/where.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

Localization loc(double photons, double lpx, double sx, double sy = 0) {
  Localization l;
  l.photons = photons;
  l.lpx = l.lpy = lpx;
  l.sigma = sx;
  l.sigma_y = sy;
  l.frame = 3;
  l.z = -120;
  return l;
}

bool keeps(const std::string& expr, const Localization& l) { return WhereFilter(expr, "--where").keeps(l); }

CommandResult fit2d(const std::string& args) { return run_command(shell_quote(app_path("fit2d")) + " " + args); }

}  // namespace

TEST_CASE("--where: comparisons, and/or/not, arithmetic, functions, precedence") {
  const Localization a = loc(600, 0.05, 1.2), b = loc(300, 0.2, 1.2, 2.4);
  CHECK(keeps("photons > 500", a));
  CHECK_FALSE(keeps("photons > 500", b));
  CHECK(keeps("photons > 500 and lpx < 0.1", a));
  CHECK_FALSE(keeps("photons > 500 and lpx < 0.1", b));
  CHECK(keeps("photons > 500 or sy > 2", b));
  CHECK(keeps("not (photons > 500)", b));
  CHECK(keeps("!(photons > 500) && lpx >= 0.2", b));
  CHECK(keeps("photons / 2 == 300", a));
  CHECK(keeps("photons - 100 * 2 == 400", a));  // * before -
  CHECK(keeps("-lpx < 0", a));
  CHECK(keeps("abs(z) < 200 and sqrt(photons) > 24", a));
  CHECK(keeps("ellipticity > 0.49", b));  // (2.4 − 1.2)/2.4
  CHECK(keeps("sy == sx", a));            // a round fit: sy is σ
  CHECK(keeps("frame == 3 or photons < 0 and lpx > 1", a));  // and binds tighter than or
  CHECK_FALSE(keeps("(frame == 3 or photons < 0) and lpx > 1", a));
  // A NaN value fails every comparison but !=.
  Localization n = a;
  n.log_likelihood = std::numeric_limits<double>::quiet_NaN();
  CHECK_FALSE(keeps("log_likelihood > -100", n));
  CHECK_FALSE(keeps("log_likelihood < -100", n));
  CHECK(keeps("log_likelihood != 0", n));
  CHECK(keeps("photons", a));  // non-zero is true
  CHECK(WhereFilter::columns().size() == 22);
}

TEST_CASE("--where: one-line errors naming the option: unknown columns listed, syntax with its position") {
  const auto message = [](const std::string& expr) {
    try {
      WhereFilter f(expr, "--where");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string unknown = message("photon > 3");
  CHECK(contains(unknown, "unknown column 'photon'"));
  CHECK(contains(unknown, "columns: frame, x, y, photons"));
  CHECK(contains(message("photons > "), "ends early"));
  CHECK(contains(message("(photons > 3"), "')' expected"));
  CHECK(contains(message("photons > 3)"), "unexpected ')' at character 12"));
  CHECK(contains(message("photons $ 3"), "unexpected '$'"));
  for (const std::string bad : {"photon > 3", "photons >", "(x", "x y"})
    CHECK(message(bad).find('\n') == std::string::npos);
  // A call of a function that does not exist is not an unknown column.
  const std::string function = message("foo(x) > 1");
  CHECK(contains(function, "unknown function 'foo' (functions: abs, sqrt)"));
  CHECK_FALSE(contains(function, "column"));
  CHECK(contains(message("log (photons) > 1"), "unknown function 'log'"));
}

TEST_CASE("--where: nesting is bounded (no stack overflow in the parse or the evaluation)") {
  const auto message = [](const std::string& expr) {
    try {
      WhereFilter f(expr, "--where");
    } catch (const UsageError& e) {
      CHECK(e.where() == "--where");
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const auto repeat = [](const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  // The inputs that were a SIGSEGV: 10,000 parentheses, sqrt( 7,000 deep; and their kin.
  const std::vector<std::string> deep = {
      repeat("(", 10000) + "x" + repeat(")", 10000),
      repeat("sqrt(", 7000) + "x" + repeat(")", 7000),
      repeat("abs(", 7000) + "x",
      repeat("not ", 20000) + "x",
      repeat("!", 20000) + "x",
      repeat("-", 20000) + "x",
      "x" + repeat(" + x", 20000),      // left-deep by iteration: the evaluation would recurse 20,000 deep
      "x" + repeat(" and x", 10000),
      "x" + repeat(" * x", 20000),
  };
  for (const auto& expr : deep) {
    CAPTURE(expr.substr(0, 40));
    const std::string m = message(expr);
    CHECK(contains(m, "nests too deeply (more than 256 levels"));
    CHECK(m.size() < 400);  // the expression is quoted by its head only
  }
  CHECK(contains(message(repeat(" ", kMaxWhereLength) + "x"), "characters (at most 100000)"));
  // Within the bounds: 100 parentheses, 200 terms and 100 functions parse and evaluate.
  Localization l;
  l.x = 2;
  CHECK(WhereFilter(repeat("(", 100) + "x > 1" + repeat(")", 100), "--where").keeps(l));
  CHECK(WhereFilter("x" + repeat(" + x", 199) + " == 400", "--where").keeps(l));
  CHECK(WhereFilter(repeat("abs(", 100) + "x" + repeat(")", 100) + " == 2", "--where").keeps(l));
}

TEST_CASE("fit2d filter: our 3D file and Picasso's own file, the kept rows counted independently") {
  TempDir dir;
  const auto movie = (dir / "m.tif").string();
  REQUIRE(run_command(shell_quote(app_path("bench")) + " -q simulate movie -o " + shell_quote(movie) +
                      " --astigmatic --frames 100 --emitters 20")
              .exit_code == 0);
  const auto locs = (dir / "locs.hdf5").string();
  REQUIRE(fit2d("-q " + shell_quote(movie) + " --calibration " + shell_quote((dir / "m_astig.json").string()) +
                " -o " + shell_quote(locs) + " --device cpu")
              .exit_code == 0);
  const auto all = read_localization_file(locs);
  std::size_t expected = 0;
  for (const auto& l : all.locs) expected += l.photons > 1400 && std::abs(l.z) < 300 ? 1 : 0;
  REQUIRE(expected > 20);
  REQUIRE(expected < all.locs.size());
  for (const std::string ext : {".hdf5", ".csv"}) {
    const auto out = (dir / ("good" + ext)).string();
    const auto r = fit2d("filter " + shell_quote(locs) + " -o " + shell_quote(out) + " --where 'photons > 1400 and abs(z) < 300'");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.output, "kept " + std::to_string(expected) + " of " + std::to_string(all.locs.size())));
    const auto kept = read_localization_file(out);
    REQUIRE(kept.locs.size() == expected);
    CHECK(kept.width == all.width);
    CHECK(kept.pixel_size_nm == all.pixel_size_nm);
    for (const auto& l : kept.locs) {
      CHECK(l.photons > 1400);
      CHECK(std::abs(l.z) < 300);
      CHECK(l.lpz > 0);  // the 3D columns stay
    }
  }
  // Picasso's own file (an older MLE layout: likelihood, iterations i4) in, its fields out as they were
  // (likelihood is not Picasso's log_likelihood: carried under its own name and dtype).
  const auto picasso = peer_file("picasso_testdata_locs.hdf5").string();
  const auto source = read_localization_file(picasso);
  std::size_t bright = 0;
  for (const auto& l : source.locs) bright += l.photons > 5000 ? 1 : 0;
  const auto out = (dir / "picasso_bright.hdf5").string();
  const auto r = fit2d("filter " + shell_quote(picasso) + " -o " + shell_quote(out) + " --where 'photons > 5000'");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(read_localization_file(out).locs.size() == bright);
  if (python_available()) {
    const auto py = run_command("/usr/bin/python3 -c " +
                                shell_quote("import sys, h5py\n"
                                            "l = h5py.File(sys.argv[1])['locs']\n"
                                            "assert (l['photons'] > 5000).all() and len(l) == int(sys.argv[2])\n"
                                            "assert 'likelihood' in l.dtype.names\n") +
                                " " + shell_quote(out) + " " + std::to_string(bright));
    INFO(py.output);
    CHECK(py.exit_code == 0);
  }
}

TEST_CASE("fit2d filter: bad input is one line and leaves no output") {
  TempDir dir;
  const auto out = (dir / "out.csv").string();
  const auto picasso = shell_quote(peer_file("picasso_testdata_locs.hdf5").string());
  check_one_line_error(fit2d("filter " + picasso + " -o " + shell_quote(out) + " --where 'photon > 3'"), "fit2d", 2,
                       "--where", "unknown column 'photon'");
  check_one_line_error(fit2d("filter " + shell_quote((dir / "none.hdf5").string()) + " -o " + shell_quote(out) +
                             " --where 'photons > 3'"),
                       "fit2d", 3, "none.hdf5", "");
  write_file(dir / "empty.csv", "");
  check_one_line_error(fit2d("filter " + shell_quote((dir / "empty.csv").string()) + " -o " + shell_quote(out) +
                             " --pixel-size 100 --where 'photons > 3'"),
                       "fit2d", 3, "empty.csv", "empty");
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("fit2d filter carries the input's camera, its other columns with their dtype, and adds no field") {
  if (!python_available()) return;
  TempDir dir;
  // Picasso's MLE file plus group, log_likelihood, *_unc and a user's columns (u1, i8, f8); its .yaml's camera
  // says Sensitivity 0.5 (written as 1 before), and it has no chi2 or status (written as 0 and 1 before).
  const auto in = (dir / "in.hdf5").string();
  const auto made = run_python("locs_carried.py", {"make", peer_file("picasso_testdata_locs.hdf5").string(), in});
  REQUIRE_MESSAGE(made.exit_code == 0, made.output);
  const auto out = (dir / "bright.hdf5").string();
  const auto r = fit2d("filter " + shell_quote(in) + " -o " + shell_quote(out) + " --where 'photons > 5000'");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const auto check = run_python("locs_carried.py", {"check", in, out, "filter", "5000"});
  INFO(check.output);
  CHECK(check.exit_code == 0);
  // Read back by us: the carried camera's pixel size, the extra columns.
  const auto back = read_localization_file(out);
  CHECK(back.pixel_size_nm == 130);
  REQUIRE(back.carried.extra_column("my_tag") != nullptr);
  CHECK(back.carried.extra_column("my_tag")->type == ColumnType::i64);
  CHECK(back.carried.extra_column("my_flag")->type == ColumnType::u8);
  CHECK(back.carried.extra_column("group")->type == ColumnType::i32);
  CHECK(!back.carried.has("chi2"));
  CHECK(!back.carried.has("status"));
}
