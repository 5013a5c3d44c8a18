// Tables of numbers (localizations, drift traces, benchmark results): the base
// that fit2d's ThunderSTORM CSV and Picasso HDF5 formats build on. Rows are
// streamed in; the file appears under its final name only on finish().
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/io/text_attributes.hpp"

namespace nanoscopy {

// The narrow and 64-bit integers carry other programs' columns with their own dtype (a
// localization file's extra columns); values pass through double, exact to 2^53.
enum class ColumnType { u32, i32, f32, f64, u8, i8, u16, i16, u64, i64 };

struct Column {
  std::string name;                    // label as written (CSV header, HDF5 field name)
  ColumnType type = ColumnType::f64;
};

class TableWriter {
 public:
  explicit TableWriter(std::vector<Column> columns) : columns_(std::move(columns)) {}
  virtual ~TableWriter() = default;
  const std::vector<Column>& columns() const { return columns_; }

  // Appends rows given row-major as doubles: values.size() must be a multiple of
  // columns().size(). Each value is converted to its column's type when written.
  virtual void append(std::span<const double> values) = 0;
  // Flushes, closes and renames into place. Without finish(), nothing is left.
  virtual void finish() = 0;

 protected:
  std::vector<Column> columns_;
};

struct CsvOptions {
  bool quote_header = true;  // ThunderSTORM quotes every label
  char separator = ',';
  int float_digits = 7;      // significant digits for f32 columns (f64: 15)
};

// Plain US-locale CSV whatever the process locale.
std::unique_ptr<TableWriter> create_csv_writer(const std::string& path, std::vector<Column> columns,
                                               const CsvOptions& options = {});

// A 1-D compound dataset (little-endian, chunked, extensible, no LZF) named
// `dataset` holding one field per column: what pandas' read_hdf(key=...) and
// Picasso read. `root_attributes` are written on the file's root group.
std::unique_ptr<TableWriter> create_hdf5_table_writer(const std::string& path, const std::string& dataset,
                                                      std::vector<Column> columns,
                                                      const TextAttributes& root_attributes = {});

}  // namespace nanoscopy
