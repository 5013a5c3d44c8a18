// CSV and HDF5 table writers, read back by Python's csv module, pandas and h5py
// (tests/python/table_*.py), and their all-or-nothing behaviour.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <locale>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/table_writer.hpp"
#include "support/test_support.hpp"

namespace {

using namespace nanoscopy;
namespace fs = std::filesystem;

// The table of tests/python/table_common.py (keep the two in step).
std::vector<Column> test_columns() {
  return {{"id", ColumnType::u32},
          {"frame", ColumnType::i32},
          {"x [nm]", ColumnType::f32},
          {"y [nm]", ColumnType::f64},
          {"note \"q\", c", ColumnType::f32}};
}

std::vector<double> test_row(std::int64_t i) {
  const auto d = static_cast<double>(i);
  double y = (d * 0.001 - 0.5) * 1e5 / 7.0;
  if (i % 10 == 0) y = 1.5e-12 * (d + 1);
  if (i % 10 == 1) y = 6.02e23 * (d + 1);
  return {d + 1, static_cast<double>(i / 3 - 5), d * 0.1 + 1.0 / 3.0, y, -d * 2.5e-7};
}

// Appends `rows` rows in batches of uneven size (1, 2, 3, ... rows per call).
void fill(TableWriter& writer, std::int64_t rows) {
  std::int64_t i = 0;
  for (std::int64_t batch = 1; i < rows; ++batch) {
    std::vector<double> values;
    for (std::int64_t k = 0; k < batch && i < rows; ++k, ++i) {
      const auto r = test_row(i);
      values.insert(values.end(), r.begin(), r.end());
    }
    writer.append(values);
  }
}

void require_python() {
  REQUIRE_MESSAGE(test::python_available(), "the table cross-checks need /usr/bin/python3 with numpy, h5py and pandas");
}


}  // namespace

TEST_CASE("CSV read by Python's csv module and pandas: header, exact text of each value") {
  require_python();
  test::TempDir dir;
  // 30000 rows: more than one 1 MiB write buffer.
  const std::int64_t rows = 30000;

  SUBCASE("ThunderSTORM style: quoted labels, comma") {
    const auto path = (dir / "table.csv").string();
    auto writer = create_csv_writer(path, test_columns());
    fill(*writer, rows);
    CHECK_FALSE(fs::exists(path));
    writer->finish();
    const auto check = test::run_python("table_check_csv.py", {path, std::to_string(rows), "quoted", ","});
    CHECK_MESSAGE(check.exit_code == 0, check.output);
  }

  SUBCASE("plain labels (quoted only where needed), semicolon, under a comma-decimal global locale") {
    const test::GlobalLocale comma(std::locale(std::locale::classic(), new test::CommaNumpunct));
    const auto path = (dir / "table_semicolon.csv").string();
    CsvOptions options;
    options.quote_header = false;
    options.separator = ';';
    auto writer = create_csv_writer(path, test_columns(), options);
    fill(*writer, rows);
    writer->finish();
    const auto check = test::run_python("table_check_csv.py", {path, std::to_string(rows), "plain", ";"});
    CHECK_MESSAGE(check.exit_code == 0, check.output);
  }
}

TEST_CASE("CSV text: ThunderSTORM header, significant digits, NaN, integer rounding") {
  test::TempDir dir;
  const auto path = dir / "locs.csv";
  auto writer = create_csv_writer(
      path.string(),
      {{"id", ColumnType::u32}, {"frame", ColumnType::i32}, {"x [nm]", ColumnType::f32}, {"y [nm]", ColumnType::f64}});
  const std::vector<double> values = {1, 2.9999999, 1234.56789,   0.1,    //
                                      2, -3,        std::nan(""), 1e300,  //
                                      3, 0,         1.0 / 3.0,    1.0 / 3.0};
  writer->append(values);
  writer->finish();
  CHECK(test::read_file(path) ==
        "\"id\",\"frame\",\"x [nm]\",\"y [nm]\"\n"
        "1,3,1234.568,0.1\n"
        "2,-3,nan,1e+300\n"
        "3,0,0.3333333,0.333333333333333\n");
}

TEST_CASE("HDF5 table read by h5py as a structured array (Picasso's way) and by pandas") {
  require_python();
  test::TempDir dir;
  for (const std::int64_t rows : {std::int64_t{0}, std::int64_t{1}, std::int64_t{5000}}) {
    CAPTURE(rows);
    const auto path = (dir / ("locs_" + std::to_string(rows) + ".hdf5")).string();
    auto writer = create_hdf5_table_writer(path, "locs", test_columns());
    fill(*writer, rows);
    CHECK_FALSE(fs::exists(path));
    writer->finish();
    const auto check = test::run_python("table_check_h5.py", {path, "locs", std::to_string(rows)});
    CHECK_MESSAGE(check.exit_code == 0, check.output);
    if (check.output.find("skipped") != std::string::npos) MESSAGE(check.output);  // PyTables absent
  }
  // A dataset inside groups.
  const auto path = (dir / "nested.h5").string();
  auto writer = create_hdf5_table_writer(path, "results/drift", test_columns());
  fill(*writer, 100);
  writer->finish();
  const auto check = test::run_python("table_check_h5.py", {path, "results/drift", "100"});
  CHECK_MESSAGE(check.exit_code == 0, check.output);
}

TEST_CASE("tables appear only on finish(); bad values and bad places are errors") {
  test::TempDir dir;
  const std::vector<double> row = {1, 2, 3, 4, 5};

  SUBCASE("destroyed without finish: nothing left") {
    {
      auto csv = create_csv_writer((dir / "a.csv").string(), test_columns());
      csv->append(row);
      auto h5 = create_hdf5_table_writer((dir / "a.h5").string(), "locs", test_columns());
      h5->append(row);
    }
    CHECK(fs::is_empty(dir.path()));
  }

  SUBCASE("missing directory: OutputError naming the file") {
    const auto csv_path = (dir / "missing" / "t.csv").string();
    const auto h5_path = (dir / "missing" / "t.h5").string();
    try {
      create_csv_writer(csv_path, test_columns());
      FAIL("no OutputError");
    } catch (const OutputError& e) {
      CHECK(e.where() == csv_path);
    }
    try {
      create_hdf5_table_writer(h5_path, "locs", test_columns());
      FAIL("no OutputError");
    } catch (const OutputError& e) {
      CHECK(e.where() == h5_path);
    }
  }

  SUBCASE("values that do not fit, partial rows, use after finish") {
    for (const bool hdf5 : {false, true}) {
      CAPTURE(hdf5);
      const auto path = dir / (hdf5 ? "b.h5" : "b.csv");
      auto writer = hdf5 ? create_hdf5_table_writer(path.string(), "locs", test_columns())
                         : create_csv_writer(path.string(), test_columns());
      CHECK_THROWS_AS(writer->append(std::vector<double>{-1, 2, 3, 4, 5}), OutputError);   // u32 below 0
      CHECK_THROWS_AS(writer->append(std::vector<double>{1, 3e9, 3, 4, 5}), OutputError);  // i32 overflow
      CHECK_THROWS_AS(writer->append(std::vector<double>{std::nan(""), 2, 3, 4, 5}), OutputError);
      CHECK_THROWS_AS(writer->append(std::vector<double>{1, 2, 3}), OutputError);  // not a whole row
      writer->append(row);
      writer->finish();
      CHECK_THROWS_AS(writer->finish(), OutputError);
      CHECK_THROWS_AS(writer->append(row), OutputError);
      CHECK(fs::exists(path));
    }
    // The rejected rows left nothing behind: one row only.
    CHECK(test::read_file(dir / "b.csv") ==
          "\"id\",\"frame\",\"x [nm]\",\"y [nm]\",\"note \"\"q\"\", c\"\n1,2,3,4,5\n");
  }

  SUBCASE("unusable column sets") {
    CHECK_THROWS_AS(
        create_hdf5_table_writer((dir / "c.h5").string(), "locs", {{"x", ColumnType::f32}, {"x", ColumnType::f32}}),
        UsageError);
    CHECK_THROWS_AS(create_csv_writer((dir / "c.csv").string(), {}), UsageError);
    CHECK(fs::is_empty(dir.path()));
  }
}
