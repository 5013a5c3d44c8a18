// CSV tables with locale-independent numbers: std::to_chars never consults the
// process locale, so a German or French user still gets "1.5", not "1,5".
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>

#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/table_values.hpp"
#include "nanoscopy/io/table_writer.hpp"

namespace nanoscopy {
namespace {

constexpr std::size_t kFlushBytes = std::size_t{1} << 20;

class CsvTableWriter final : public TableWriter {
 public:
  CsvTableWriter(const std::string& path, std::vector<Column> columns, const CsvOptions& options)
      : TableWriter(std::move(columns)), options_(options), output_(path), where_(path) {
    if (columns_.empty()) throw UsageError(where_, "a table needs at least one column");
    if (options_.separator == '"' || options_.separator == '\n' || options_.separator == '\r' ||
        options_.separator == '.' || options_.separator == '-' ||
        (options_.separator >= '0' && options_.separator <= '9'))
      throw UsageError(where_, std::string("'") + options_.separator + "' cannot separate CSV values");
    if (options_.float_digits < 1 || options_.float_digits > 17)
      throw UsageError(where_, "float_digits must lie in 1..17, not " + std::to_string(options_.float_digits));
    file_.reset(std::fopen(output_.temp_path().c_str(), "wb"));
    if (!file_) throw OutputError(where_, std::string("cannot create the file: ") + std::strerror(errno));
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      if (i) buffer_ += options_.separator;
      write_label(columns_[i].name);
    }
    buffer_ += '\n';
  }

  void append(std::span<const double> values) override {
    if (!file_) throw OutputError(where_, "the table was already finished");
    const std::size_t n = columns_.size();
    if (values.size() % n != 0)
      throw OutputError(where_, std::to_string(values.size()) + " values do not make whole rows of " +
                                    std::to_string(n) + " columns");
    for (std::size_t row = 0; row < values.size() / n; ++row) {
      const std::size_t row_start = buffer_.size();
      try {
        for (std::size_t c = 0; c < n; ++c) {
          if (c) buffer_ += options_.separator;
          write_value(values[row * n + c], columns_[c]);
        }
      } catch (...) {
        buffer_.resize(row_start);  // no half row left behind
        throw;
      }
      buffer_ += '\n';
      if (buffer_.size() >= kFlushBytes) flush();
    }
  }

  void finish() override {
    if (!file_) throw OutputError(where_, "the table was already finished");
    flush();
    if (std::fclose(file_.release()) != 0)
      throw OutputError(where_, std::string("cannot finish the file: ") + std::strerror(errno));
    output_.commit();
  }

 private:
  void write_label(const std::string& label) {
    const bool must_quote = label.find_first_of(std::string("\"\n\r") + options_.separator) != std::string::npos;
    if (!options_.quote_header && !must_quote) {
      buffer_ += label;
      return;
    }
    buffer_ += '"';
    for (char ch : label) {
      if (ch == '"') buffer_ += '"';
      buffer_ += ch;
    }
    buffer_ += '"';
  }

  void write_value(double value, const Column& column) {
    char text[64];
    std::to_chars_result result{};
    switch (column.type) {
      case ColumnType::u32:
        result =
            std::to_chars(text, text + sizeof text, detail::to_integer_column<std::uint32_t>(value, where_, column));
        break;
      case ColumnType::i32:
        result =
            std::to_chars(text, text + sizeof text, detail::to_integer_column<std::int32_t>(value, where_, column));
        break;
      case ColumnType::f32:
        result = std::to_chars(text, text + sizeof text, static_cast<float>(value), std::chars_format::general,
                               options_.float_digits);
        break;
      case ColumnType::f64:
        result = std::to_chars(text, text + sizeof text, value, std::chars_format::general, 15);
        break;
      default:
        detail::with_integer_type(column.type, [&]([[maybe_unused]] auto zero) {
          result = std::to_chars(text, text + sizeof text, detail::to_integer_column<decltype(zero)>(value, where_, column));
        });
        break;
    }
    buffer_.append(text, result.ptr);
  }

  void flush() {
    if (buffer_.empty()) return;
    if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_.get()) != buffer_.size())
      throw OutputError(where_, std::string("cannot write the file: ") + std::strerror(errno));
    buffer_.clear();
  }

  CsvOptions options_;
  AtomicOutput output_;  // declared before file_: the stream is closed before the temporary is removed
  std::string where_;
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, Closer> file_;
  std::string buffer_;
};

}  // namespace

std::unique_ptr<TableWriter> create_csv_writer(const std::string& path, std::vector<Column> columns,
                                               const CsvOptions& options) {
  return std::make_unique<CsvTableWriter>(path, std::move(columns), options);
}

}  // namespace nanoscopy
