// Tables as a 1-D compound HDF5 dataset, the layout Picasso writes for its
// localizations (h5py structured arrays; pandas reads it as a generic table).
// Rows are packed into a buffer of one chunk and appended by growing the
// dataset (unlimited, chunked, uncompressed: no LZF, which only h5py decodes).
#include <algorithm>
#include <cstring>
#include <set>

#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/hdf5_util.hpp"
#include "nanoscopy/io/table_values.hpp"
#include "nanoscopy/io/table_writer.hpp"

namespace nanoscopy {
namespace {

namespace h5 = detail::h5;

constexpr std::size_t kChunkBytes = std::size_t{64} << 10;

std::size_t column_bytes(ColumnType type) {
  switch (type) {
    case ColumnType::u8:
    case ColumnType::i8:
      return 1;
    case ColumnType::u16:
    case ColumnType::i16:
      return 2;
    case ColumnType::f64:
    case ColumnType::u64:
    case ColumnType::i64:
      return 8;
    default:
      return 4;
  }
}

hid_t file_type_of(ColumnType type) {
  switch (type) {
    case ColumnType::u32:
      return H5T_STD_U32LE;
    case ColumnType::i32:
      return H5T_STD_I32LE;
    case ColumnType::f32:
      return H5T_IEEE_F32LE;
    case ColumnType::f64:
      return H5T_IEEE_F64LE;
    case ColumnType::u8:
      return H5T_STD_U8LE;
    case ColumnType::i8:
      return H5T_STD_I8LE;
    case ColumnType::u16:
      return H5T_STD_U16LE;
    case ColumnType::i16:
      return H5T_STD_I16LE;
    case ColumnType::u64:
      return H5T_STD_U64LE;
    case ColumnType::i64:
      return H5T_STD_I64LE;
  }
  return H5T_IEEE_F64LE;
}

hid_t memory_type_of(ColumnType type) {
  switch (type) {
    case ColumnType::u32:
      return H5T_NATIVE_UINT32;
    case ColumnType::i32:
      return H5T_NATIVE_INT32;
    case ColumnType::f32:
      return H5T_NATIVE_FLOAT;
    case ColumnType::f64:
      return H5T_NATIVE_DOUBLE;
    case ColumnType::u8:
      return H5T_NATIVE_UINT8;
    case ColumnType::i8:
      return H5T_NATIVE_INT8;
    case ColumnType::u16:
      return H5T_NATIVE_UINT16;
    case ColumnType::i16:
      return H5T_NATIVE_INT16;
    case ColumnType::u64:
      return H5T_NATIVE_UINT64;
    case ColumnType::i64:
      return H5T_NATIVE_INT64;
  }
  return H5T_NATIVE_DOUBLE;
}

class Hdf5TableWriter final : public TableWriter {
 public:
  Hdf5TableWriter(const std::string& path, const std::string& dataset, std::vector<Column> columns,
                  const TextAttributes& root_attributes)
      : TableWriter(std::move(columns)), output_(path), where_(path) {
    h5::silence_errors();
    if (columns_.empty()) throw UsageError(where_, "a table needs at least one column");
    if (dataset.empty()) throw UsageError(where_, "the HDF5 table needs a dataset name");
    std::set<std::string> seen;
    for (const auto& c : columns_) {
      if (c.name.empty()) throw UsageError(where_, "a column has no name");
      if (!seen.insert(c.name).second) throw UsageError(where_, "column name '" + c.name + "' appears twice");
    }

    // Packed rows: the memory layout equals the file layout, only the byte order may differ.
    for (const auto& c : columns_) {
      offsets_.push_back(row_bytes_);
      row_bytes_ += column_bytes(c.type);
    }
    h5::Id file_type = h5::type(H5Tcreate(H5T_COMPOUND, row_bytes_));
    memory_type_ = h5::type(H5Tcreate(H5T_COMPOUND, row_bytes_));
    if (!file_type.valid() || !memory_type_.valid())
      throw OutputError(where_, "cannot build the row type: " + h5::last_error());
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      if (H5Tinsert(file_type.get(), columns_[i].name.c_str(), offsets_[i], file_type_of(columns_[i].type)) < 0 ||
          H5Tinsert(memory_type_.get(), columns_[i].name.c_str(), offsets_[i], memory_type_of(columns_[i].type)) < 0)
        throw OutputError(where_, "cannot add column '" + columns_[i].name + "': " + h5::last_error());
    }

    chunk_rows_ = std::max<std::size_t>(1, kChunkBytes / row_bytes_);
    buffer_.reserve(chunk_rows_ * row_bytes_);

    file_ = h5::file(H5Fcreate(output_.temp_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    if (!file_.valid()) throw OutputError(where_, "cannot create the HDF5 file: " + h5::last_error());
    if (!h5::write_attributes(file_.get(), root_attributes) || !h5::write_run_attributes(file_.get()))
      throw OutputError(where_, "cannot write the file's attributes: " + h5::last_error());
    const hsize_t zero = 0, unlimited = H5S_UNLIMITED, chunk = chunk_rows_;
    h5::Id space = h5::space(H5Screate_simple(1, &zero, &unlimited));
    h5::Id dcpl = h5::plist(H5Pcreate(H5P_DATASET_CREATE));
    if (!space.valid() || !dcpl.valid() || H5Pset_chunk(dcpl.get(), 1, &chunk) < 0)
      throw OutputError(where_, "cannot lay out the table: " + h5::last_error());
    h5::Id lcpl = h5::intermediate_group_lcpl();
    dataset_ = h5::dataset(
        H5Dcreate2(file_.get(), dataset.c_str(), file_type.get(), space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT));
    if (!dataset_.valid()) throw OutputError(where_, "cannot create dataset '" + dataset + "': " + h5::last_error());
  }

  void append(std::span<const double> values) override {
    if (!dataset_.valid()) throw OutputError(where_, "the table was already finished");
    const std::size_t n = columns_.size();
    if (values.size() % n != 0)
      throw OutputError(where_, std::to_string(values.size()) + " values do not make whole rows of " +
                                    std::to_string(n) + " columns");
    for (std::size_t row = 0; row < values.size() / n; ++row) {
      const std::size_t at = buffer_.size();
      buffer_.resize(at + row_bytes_);
      unsigned char* out = buffer_.data() + at;
      try {
        for (std::size_t c = 0; c < n; ++c) pack(values[row * n + c], columns_[c], out + offsets_[c]);
      } catch (...) {
        buffer_.resize(at);  // no half row left behind
        throw;
      }
      if (buffer_.size() >= chunk_rows_ * row_bytes_) flush();
    }
  }

  void finish() override {
    if (!dataset_.valid()) throw OutputError(where_, "the table was already finished");
    flush();
    if (!dataset_.close()) throw OutputError(where_, "cannot finish the table: " + h5::last_error());
    if (!file_.close()) throw OutputError(where_, "cannot finish the HDF5 file: " + h5::last_error());
    output_.commit();
  }

 private:
  void pack(double value, const Column& column, unsigned char* out) const {
    switch (column.type) {
      case ColumnType::u32: {
        const auto v = detail::to_integer_column<std::uint32_t>(value, where_, column);
        std::memcpy(out, &v, sizeof v);
        return;
      }
      case ColumnType::i32: {
        const auto v = detail::to_integer_column<std::int32_t>(value, where_, column);
        std::memcpy(out, &v, sizeof v);
        return;
      }
      case ColumnType::f32: {
        const auto v = static_cast<float>(value);
        std::memcpy(out, &v, sizeof v);
        return;
      }
      case ColumnType::f64:
        std::memcpy(out, &value, sizeof value);
        return;
      default:
        detail::with_integer_type(column.type, [&]([[maybe_unused]] auto zero) {
          const auto v = detail::to_integer_column<decltype(zero)>(value, where_, column);
          std::memcpy(out, &v, sizeof v);
        });
        return;
    }
  }

  void flush() {
    const hsize_t rows = buffer_.size() / row_bytes_;
    if (rows == 0) return;
    const hsize_t new_size = rows_written_ + rows;
    if (H5Dset_extent(dataset_.get(), &new_size) < 0)
      throw OutputError(where_, "cannot grow the table: " + h5::last_error());
    h5::Id file_space = h5::space(H5Dget_space(dataset_.get()));
    const hsize_t start = rows_written_;
    h5::Id memory_space = h5::space(H5Screate_simple(1, &rows, nullptr));
    if (!file_space.valid() || !memory_space.valid() ||
        H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &rows, nullptr) < 0 ||
        H5Dwrite(dataset_.get(), memory_type_.get(), memory_space.get(), file_space.get(), H5P_DEFAULT,
                 buffer_.data()) < 0)
      throw OutputError(where_, "cannot write table rows: " + h5::last_error());
    rows_written_ = new_size;
    buffer_.clear();
  }

  AtomicOutput output_;  // declared first: destroyed after the HDF5 handles are closed
  std::string where_;
  std::vector<std::size_t> offsets_;
  std::size_t row_bytes_ = 0;
  std::size_t chunk_rows_ = 1;
  std::vector<unsigned char> buffer_;
  h5::Id memory_type_;
  h5::Id file_;
  h5::Id dataset_;
  hsize_t rows_written_ = 0;
};

}  // namespace

std::unique_ptr<TableWriter> create_hdf5_table_writer(const std::string& path, const std::string& dataset,
                                                      std::vector<Column> columns,
                                                      const TextAttributes& root_attributes) {
  return std::make_unique<Hdf5TableWriter>(path, dataset, std::move(columns), root_attributes);
}

}  // namespace nanoscopy
