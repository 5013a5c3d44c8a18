// Internal: the conversion of a table value (given as double) to its column's
// type, shared by the CSV and HDF5 table writers so both write the same numbers.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/table_writer.hpp"

namespace nanoscopy::detail {

inline const char* column_type_name(ColumnType type) {
  switch (type) {
    case ColumnType::u32:
      return "uint32";
    case ColumnType::i32:
      return "int32";
    case ColumnType::f32:
      return "float32";
    case ColumnType::f64:
      return "float64";
    case ColumnType::u8:
      return "uint8";
    case ColumnType::i8:
      return "int8";
    case ColumnType::u16:
      return "uint16";
    case ColumnType::i16:
      return "int16";
    case ColumnType::u64:
      return "uint64";
    case ColumnType::i64:
      return "int64";
  }
  return "unknown";
}

// Integer columns take the nearest integer (a frame index computed as 2.9999999
// is frame 3); NaN, infinities and values outside the type's range are an
// OutputError naming the file and the column rather than a silently wrong number.
template <typename Int>
Int to_integer_column(double value, const std::string& path, const Column& column) {
  const double rounded = std::nearbyint(value);
  if (!std::isfinite(rounded) || rounded < static_cast<double>(std::numeric_limits<Int>::min()) ||
      !(rounded < static_cast<double>(std::numeric_limits<Int>::max()) + 1.0))
    throw OutputError(path, "value " + std::to_string(value) + " does not fit column '" + column.name + "' (" +
                                column_type_name(column.type) + ")");
  return static_cast<Int>(rounded);
}

// Calls f with a value of the C++ type of an integer column (f(std::uint8_t{}), ...); false for a float column.
template <typename F>
bool with_integer_type(ColumnType type, F&& f) {
  switch (type) {
    case ColumnType::u8: f(std::uint8_t{}); return true;
    case ColumnType::i8: f(std::int8_t{}); return true;
    case ColumnType::u16: f(std::uint16_t{}); return true;
    case ColumnType::i16: f(std::int16_t{}); return true;
    case ColumnType::u32: f(std::uint32_t{}); return true;
    case ColumnType::i32: f(std::int32_t{}); return true;
    case ColumnType::u64: f(std::uint64_t{}); return true;
    case ColumnType::i64: f(std::int64_t{}); return true;
    case ColumnType::f32:
    case ColumnType::f64: return false;
  }
  return false;
}

}  // namespace nanoscopy::detail
