// HDF5 inputs for the fuzz targets, as a text recipe that this header turns
// into a small, valid HDF5 file. The fuzzer then varies what a file says
// (attributes, shapes, element types, values), which is what our readers
// interpret, instead of the bytes of HDF5's own structures, whose parser is
// libhdf5's: HDF5 1.10 reads uninitialized memory and overruns buffers on some
// damaged files (attribute tables, global heap objects), which no code of ours
// can prevent. Raw HDF5 bytes are still fuzzed with NANOSCOPY_FUZZ_RAW_HDF5=1.
//
// One statement per line; a malformed statement is skipped:
//   group PATH
//   data PATH TYPE DIM... [= V...]               a dataset; TYPE u8 i8 u16 i16 u32 i32 u64 i64 f32 f64,
//                                                with suffix "be" for big-endian (u16be, f64be ...)
//   table PATH ROWS NAME:TYPE... [= V...]         a 1-D compound dataset (a Picasso /locs table)
//   attr OBJECT NAME str TEXT...                  a variable-length UTF-8 string attribute (rest of line)
//   attr OBJECT NAME fstr TEXT...                 the same as a fixed-length string
//   attr OBJECT NAME TYPE V...                    a numeric attribute: scalar, or 1-D for several values
// OBJECT is "/" or the path of a group or dataset made earlier. Values (numbers,
// nan, inf) cycle over the elements, row-major; a dataset of more than
// kMaxWritten elements is created but not written, so that reading it yields its
// fill value without the file holding it.
#pragma once

#include <hdf5.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace nanoscopy::fuzz::h5recipe {

inline constexpr std::uint64_t kMaxWritten = 1 << 16;
inline constexpr int kMaxStatements = 128;

inline hid_t file_type(std::string_view name) {
  if (name == "u8") return H5T_STD_U8LE;
  if (name == "i8") return H5T_STD_I8LE;
  if (name == "u16") return H5T_STD_U16LE;
  if (name == "i16") return H5T_STD_I16LE;
  if (name == "u32") return H5T_STD_U32LE;
  if (name == "i32") return H5T_STD_I32LE;
  if (name == "u64") return H5T_STD_U64LE;
  if (name == "i64") return H5T_STD_I64LE;
  if (name == "f32") return H5T_IEEE_F32LE;
  if (name == "f64") return H5T_IEEE_F64LE;
  if (name == "u16be") return H5T_STD_U16BE;
  if (name == "i16be") return H5T_STD_I16BE;
  if (name == "u32be") return H5T_STD_U32BE;
  if (name == "i32be") return H5T_STD_I32BE;
  if (name == "i64be") return H5T_STD_I64BE;
  if (name == "f32be") return H5T_IEEE_F32BE;
  if (name == "f64be") return H5T_IEEE_F64BE;
  return H5I_INVALID_HID;
}

inline bool parse_count(std::string_view text, std::uint64_t& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

inline double parse_value(const std::string& text) {
  if (text == "nan") return std::nan("");
  if (text == "inf") return HUGE_VAL;
  if (text == "-inf") return -HUGE_VAL;
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() ? v : 0.0;
}

// Closes an HDF5 id at the end of a scope.
struct Closer {
  hid_t id;
  herr_t (*close)(hid_t);
  ~Closer() {
    if (id >= 0) close(id);
  }
};

inline std::vector<double> values_after(std::istringstream& in) {
  std::vector<double> values;
  for (std::string token; in >> token;) values.push_back(parse_value(token));
  return values;
}

// Writes `n` elements from `values` (cycled) through a memory type of doubles.
inline void write_cycled(hid_t dataset, hid_t memory_type, std::size_t per_element, std::uint64_t n,
                         const std::vector<double>& values) {
  if (values.empty() || n == 0 || n > kMaxWritten) return;
  std::vector<double> buffer(static_cast<std::size_t>(n) * per_element);
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = values[i % values.size()];
  H5Dwrite(dataset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data());
}

// Statements: see the top of this file.
inline void statement(hid_t file, const std::string& line) {
  std::istringstream in(line);
  std::string kind, path;
  if (!(in >> kind >> path) || path.empty()) return;
  const Closer lcpl{H5Pcreate(H5P_LINK_CREATE), H5Pclose};
  H5Pset_create_intermediate_group(lcpl.id, 1);
  if (kind == "group") {
    const Closer g{H5Gcreate2(file, path.c_str(), lcpl.id, H5P_DEFAULT, H5P_DEFAULT), H5Gclose};
  } else if (kind == "data") {
    std::string type_name;
    in >> type_name;
    const hid_t type = file_type(type_name);
    if (type < 0) return;
    std::vector<hsize_t> dims;
    std::uint64_t n = 1;
    for (std::string token; in >> token && token != "=";) {
      std::uint64_t d = 0;
      if (!parse_count(token, d) || dims.size() == 4 || (d > 0 && n > (std::uint64_t{1} << 40) / d)) return;
      dims.push_back(d);
      n *= d;
    }
    const Closer space{H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose};
    const Closer d{H5Dcreate2(file, path.c_str(), type, space.id, lcpl.id, H5P_DEFAULT, H5P_DEFAULT), H5Dclose};
    if (d.id >= 0) write_cycled(d.id, H5T_NATIVE_DOUBLE, 1, n, values_after(in));
  } else if (kind == "table") {
    std::string rows_text;
    std::uint64_t rows = 0;
    if (!(in >> rows_text) || !parse_count(rows_text, rows) || rows > (std::uint64_t{1} << 40)) return;
    std::vector<std::pair<std::string, hid_t>> fields;
    std::size_t size = 0;
    for (std::string token; in >> token && token != "=";) {
      const auto colon = token.rfind(':');
      if (colon == std::string::npos || colon == 0) return;
      const hid_t type = file_type(std::string_view(token).substr(colon + 1));
      if (type < 0 || fields.size() == 32) return;
      fields.emplace_back(token.substr(0, colon), type);
      size += H5Tget_size(type);
    }
    if (fields.empty()) return;
    const Closer stored{H5Tcreate(H5T_COMPOUND, size), H5Tclose};
    const Closer memory{H5Tcreate(H5T_COMPOUND, fields.size() * sizeof(double)), H5Tclose};
    std::size_t offset = 0;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      // a repeated field name makes H5Tinsert fail: then there is no table
      if (H5Tinsert(stored.id, fields[i].first.c_str(), offset, fields[i].second) < 0 ||
          H5Tinsert(memory.id, fields[i].first.c_str(), i * sizeof(double), H5T_NATIVE_DOUBLE) < 0)
        return;
      offset += H5Tget_size(fields[i].second);
    }
    const hsize_t dims[1] = {rows};
    const Closer space{H5Screate_simple(1, dims, nullptr), H5Sclose};
    const Closer d{H5Dcreate2(file, path.c_str(), stored.id, space.id, lcpl.id, H5P_DEFAULT, H5P_DEFAULT), H5Dclose};
    if (d.id >= 0) write_cycled(d.id, memory.id, fields.size(), rows, values_after(in));
  } else if (kind == "attr") {
    std::string name, type_name;
    if (!(in >> name >> type_name)) return;
    const Closer object{H5Oopen(file, path.c_str(), H5P_DEFAULT), H5Oclose};
    if (object.id < 0) return;
    if (type_name == "str" || type_name == "fstr") {
      std::string text;
      std::getline(in >> std::ws, text);
      const Closer type{H5Tcopy(H5T_C_S1), H5Tclose};
      H5Tset_cset(type.id, H5T_CSET_UTF8);
      H5Tset_size(type.id, type_name == "str" ? H5T_VARIABLE : std::max<std::size_t>(text.size(), 1));
      const Closer space{H5Screate(H5S_SCALAR), H5Sclose};
      const Closer a{H5Acreate2(object.id, name.c_str(), type.id, space.id, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
      const char* vlen = text.c_str();
      if (a.id >= 0) H5Awrite(a.id, type.id, type_name == "str" ? static_cast<const void*>(&vlen) : text.c_str());
      return;
    }
    const hid_t type = file_type(type_name);
    const std::vector<double> values = values_after(in);
    if (type < 0 || values.empty() || values.size() > 64) return;
    const hsize_t dims[1] = {values.size()};
    const Closer space{values.size() == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, dims, nullptr), H5Sclose};
    const Closer a{H5Acreate2(object.id, name.c_str(), type, space.id, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
    if (a.id >= 0) H5Awrite(a.id, H5T_NATIVE_DOUBLE, values.data());
  }
}

// Writes the file that `recipe` describes to `path` (an empty HDF5 file when no
// statement is valid).
inline void write_file(const std::string& path, std::string_view recipe) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) return;
  std::istringstream lines{std::string(recipe)};
  int count = 0;
  for (std::string line; count < kMaxStatements && std::getline(lines, line); ++count) statement(file, line);
  H5Fclose(file);
}

}  // namespace nanoscopy::fuzz::h5recipe
