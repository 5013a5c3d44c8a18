// JSON parameter files: objects are subsections, scalars are values rendered
// as the text a .prm file would hold. Read with nlohmann's SAX parser through
// an iterator that remembers how far the parser has read, so that every key,
// and every error, can be given its line.
#include <cstddef>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nanoscopy/core/clip_text.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/params/param_detail.hpp"
#include "nanoscopy/params/params.hpp"

namespace nanoscopy {
namespace {

// A const char* that records the offset of the last character read through it.
class TrackingIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackingIterator() = default;
  TrackingIterator(const char* begin, const char* p, std::size_t* last_read)
      : begin_(begin), p_(p), last_read_(last_read) {}

  reference operator*() const {
    *last_read_ = static_cast<std::size_t>(p_ - begin_);
    return *p_;
  }
  TrackingIterator& operator++() {
    ++p_;
    return *this;
  }
  TrackingIterator operator++(int) {
    auto copy = *this;
    ++p_;
    return copy;
  }
  bool operator==(const TrackingIterator& other) const { return p_ == other.p_; }
  bool operator!=(const TrackingIterator& other) const { return p_ != other.p_; }

 private:
  const char* begin_ = nullptr;
  const char* p_ = nullptr;
  std::size_t* last_read_ = nullptr;
};

class TreeBuilder : public nlohmann::json_sax<nlohmann::json> {
 public:
  TreeBuilder(const std::string& text, const std::string& file) : text_(text), file_(file) {}

  std::size_t last_read = 0;  // offset of the last character the parser read

  bool null() override { return scalar("null", false); }
  bool boolean(bool value) override { return scalar(value ? "true" : "false", true); }
  bool number_integer(number_integer_t value) override { return scalar(std::to_string(value), true); }
  bool number_unsigned(number_unsigned_t value) override { return scalar(std::to_string(value), true); }
  bool number_float(number_float_t, const string_t& raw) override { return scalar(raw, true); }
  bool string(string_t& value) override { return scalar(value, true); }
  bool binary(binary_t&) override { throw UsageError(at(current_line()), "binary values are not parameters"); }

  bool start_object(std::size_t) override {
    if (array_)
      throw UsageError(at(key_line_), quote_value(key_path()) + ": an array may hold only numbers, strings and booleans");
    if (objects_.size() > param_detail::kMaxParamDepth)  // the top level, then at most kMaxParamDepth subsections
      throw UsageError(at(current_line()),
                       "objects nested deeper than " + std::to_string(param_detail::kMaxParamDepth) + " levels");
    if (objects_.empty()) {
      if (started_) throw UsageError(at(current_line()), "more than one top-level value");
      started_ = true;
      objects_.push_back({"", {}});
    } else {
      objects_.push_back({key_path(), {}});
    }
    return true;
  }
  bool end_object() override {
    objects_.pop_back();
    return true;
  }
  bool key(string_t& value) override {
    key_line_ = current_line();
    const std::string where = at(key_line_);
    param_detail::check_name(value, "key", where);
    auto& seen = objects_.back().keys;
    const auto [it, inserted] = seen.emplace(value, key_line_);
    if (!inserted)
      throw UsageError(where, "duplicate key " + quote_value(value) + " (already set on line " + std::to_string(it->second) + ")");
    key_ = value;
    return true;
  }
  bool start_array(std::size_t) override {
    if (objects_.empty()) throw UsageError(at(current_line()), "the top level must be an object ({...}), not an array");
    if (array_)
      throw UsageError(at(key_line_), quote_value(key_path()) + ": an array may hold only numbers, strings and booleans");
    array_ = true;
    items_.clear();
    return true;
  }
  bool end_array() override {
    array_ = false;
    std::string joined;
    for (const auto& item : items_) joined += (joined.empty() ? "" : ", ") + item;
    add(joined);
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& error) override {
    // nlohmann: "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error ..."
    std::string what = error.what();
    const auto colon = what.find(": ");
    if (colon != std::string::npos) what = what.substr(colon + 2);
    const std::size_t offset = position > 0 ? position - 1 : 0;
    throw UsageError(at(line_of(offset)), "invalid JSON: " + clip_text(what, 300));  // quotes the last token
  }

  ParamTree finish() { return std::move(tree_); }

 private:
  struct Object {
    std::string path;                 // "" for the top level
    std::map<std::string, int> keys;  // key -> line, to find duplicates
  };

  bool scalar(const std::string& text, bool valid) {
    if (objects_.empty()) throw UsageError(at(current_line()), "the top level must be an object ({...})");
    if (!valid) throw UsageError(at(key_line_), quote_value(key_path()) + " is null (give it a value or leave it out)");
    if (array_) {
      if (text.find(',') != std::string::npos)
        throw UsageError(at(key_line_), quote_value(key_path()) + ": an array item may not contain ',' (" + quote_value(text) + ")");
      items_.push_back(text);
    } else {
      add(text);
    }
    return true;
  }

  void add(const std::string& text) { tree_[key_path()] = ParamEntry{text, ParamSource{file_, key_line_}}; }

  std::string key_path() const {
    const std::string& parent = objects_.back().path;
    return parent.empty() ? key_ : parent + "/" + key_;
  }

  int current_line() { return line_of(last_read); }

  // Lines are counted incrementally: offsets only grow while parsing.
  int line_of(std::size_t offset) {
    if (offset < counted_to_) {
      counted_to_ = 0;
      line_ = 1;
    }
    for (; counted_to_ < offset && counted_to_ < text_.size(); ++counted_to_)
      if (text_[counted_to_] == '\n') ++line_;
    return line_;
  }

  std::string at(int line) const { return file_ + ":" + std::to_string(line); }

  const std::string& text_;
  std::string file_;
  std::vector<Object> objects_;
  bool started_ = false;
  bool array_ = false;
  std::vector<std::string> items_;
  std::string key_;
  int key_line_ = 0;
  ParamTree tree_;
  std::size_t counted_to_ = 0;
  int line_ = 1;
};

}  // namespace

ParamTree parse_json(const std::string& text, const std::string& file) {
  TreeBuilder builder(text, file);
  const char* begin = text.data();
  TrackingIterator first(begin, begin, &builder.last_read);
  TrackingIterator last(begin, begin + text.size(), &builder.last_read);
  nlohmann::json::sax_parse(first, last, &builder, nlohmann::json::input_format_t::json, /*strict=*/true,
                            /*ignore_comments=*/true);
  return builder.finish();
}

}  // namespace nanoscopy
