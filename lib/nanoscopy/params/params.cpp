// Shared pieces: sources, file loading, value parsing and validation.
#include "nanoscopy/params/params.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nanoscopy/core/clip_text.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/params/param_detail.hpp"

namespace nanoscopy {

std::string ParamSource::describe() const {
  return line > 0 ? file + ":" + std::to_string(line) : file;
}

std::string ParamSource::named(const std::string& fallback) const {
  if (file == "default") return fallback;
  const std::string command_line = "command line ";
  if (file.starts_with(command_line)) return file.substr(command_line.size());
  return describe();
}

ParamTree load_param_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) throw UsageError(path, "parameter file not found");
  if (std::filesystem::is_directory(status)) throw UsageError(path, "is a directory, not a parameter file");
  // Opening a pipe would wait for a writer for ever.
  if (!std::filesystem::is_regular_file(status)) throw UsageError(path, "is not a regular file (a pipe, socket or device)");
  plan_input(path, "the parameter file (--params)");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in || in.bad()) throw UsageError(path, "cannot read the parameter file");
  const std::string content = text.str();

  bool is_json = std::filesystem::path(path).extension() == ".json";
  if (!is_json) {
    const auto first = content.find_first_not_of(" \t\r\n");
    is_json = first != std::string::npos && content[first] == '{';
  }
  return is_json ? parse_json(content, path) : parse_prm(content, path);
}

namespace param_detail {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

std::string range_text(const ParamSpec& spec) {
  if (!spec.min && !spec.max) return "";
  std::string text = " in ";
  text += spec.min ? (spec.min_exclusive ? "(" : "[") + format_number(*spec.min) : "(-inf";
  text += ", ";
  text += spec.max ? format_number(*spec.max) + (spec.max_exclusive ? ")" : "]") : "inf)";
  return text;
}

bool in_range(const ParamSpec& spec, double value) {
  if (spec.min && (spec.min_exclusive ? !(value > *spec.min) : !(value >= *spec.min))) return false;
  if (spec.max && (spec.max_exclusive ? !(value < *spec.max) : !(value <= *spec.max))) return false;
  return true;
}

std::string choices_text(const ParamSpec& spec) {
  std::string text;
  for (const auto& c : spec.choices) text += (text.empty() ? "" : ", ") + c;
  return text;
}

// Well-formed UTF-8 (no stray, overlong or surrogate sequences): the JSON
// listing and the provenance could not hold anything else unchanged.
bool valid_utf8(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t n = lead < 0x80 ? 0 : (lead & 0xE0) == 0xC0 ? 1 : (lead & 0xF0) == 0xE0 ? 2 : (lead & 0xF8) == 0xF0 ? 3 : 4;
    if (n == 4 || text.size() - i <= n) return false;
    std::uint32_t code = n == 0 ? lead : lead & (0x3Fu >> n);
    for (std::size_t k = 1; k <= n; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      if ((c & 0xC0) != 0x80) return false;
      code = (code << 6) | (c & 0x3Fu);
    }
    constexpr std::uint32_t min_code[] = {0, 0x80, 0x800, 0x10000};
    if (code < min_code[n] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

bool valid_string(const std::string& text) {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '#' || u < 0x20 || u == 0x7f) return false;
  }
  if (!valid_utf8(text)) return false;
  if (!text.empty() && (is_space(text.front()) || is_space(text.back()) || text.back() == '\\')) return false;
  return true;
}

const char* type_noun(ParamType type) {
  switch (type) {
    case ParamType::boolean:
      return "boolean";
    case ParamType::integer:
      return "integer";
    case ParamType::real:
      return "real";
    case ParamType::string:
      return "string";
    case ParamType::choice:
      return "choice";
  }
  return "value";
}

std::string expectation(const ParamSpec& spec) {
  switch (spec.type) {
    case ParamType::boolean:
      return "expected true/false, yes/no, on/off or 1/0";
    case ParamType::integer:
      return "expected an integer" + range_text(spec);
    case ParamType::real:
      return "expected a finite number" + range_text(spec);
    case ParamType::string:
      return "expected UTF-8 text without '#', control characters, surrounding spaces or a trailing '\\'";
    case ParamType::choice:
      return "expected one of: " + choices_text(spec);
  }
  return "";
}

}  // namespace

std::string trim(std::string_view text) {
  std::size_t first = 0;
  std::size_t last = text.size();
  while (first < last && is_space(text[first])) ++first;
  while (last > first && is_space(text[last - 1])) --last;
  return std::string(text.substr(first, last - first));
}

std::string to_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<bool> parse_bool(std::string_view text) {
  const std::string t = to_lower(trim(text));
  if (t == "true" || t == "yes" || t == "on" || t == "1") return true;
  if (t == "false" || t == "no" || t == "off" || t == "0") return false;
  return std::nullopt;
}

std::optional<std::int64_t> parse_int(std::string_view text) {
  const std::string t = trim(text);
  const char* first = t.data();
  const char* last = t.data() + t.size();
  if (first != last && *first == '+') ++first;
  const char* digits = first != last && *first == '-' && first == t.data() ? first + 1 : first;
  if (digits == last || !std::isdigit(static_cast<unsigned char>(*digits))) return std::nullopt;
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || ptr != last) return std::nullopt;
  return value;
}

std::optional<double> parse_real(std::string_view text) {
  const std::string t = trim(text);
  const char* first = t.data();
  const char* last = t.data() + t.size();
  if (first != last && *first == '+') ++first;
  if (first == last || *first == '+' || (*first == '-' && first != t.data())) return std::nullopt;
  double value = 0;
  const auto [ptr, ec] = std::from_chars(first, last, value, std::chars_format::general);
  if (ec != std::errc() || ptr != last || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::string format_number(double value) {
  // Whole numbers in plain digits (1000000, not 1e+06), else the shortest exact form.
  if (std::isfinite(value) && value == std::trunc(value) && std::fabs(value) < 1e15)
    return std::to_string(static_cast<std::int64_t>(value));
  char buffer[64];
  const auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, ptr) : std::to_string(value);
}

std::optional<std::string> canonical_value(const ParamSpec& spec, const std::string& text) {
  switch (spec.type) {
    case ParamType::boolean: {
      const auto value = parse_bool(text);
      if (!value) return std::nullopt;
      return std::string(*value ? "true" : "false");
    }
    case ParamType::integer: {
      const auto value = parse_int(text);
      if (!value || !in_range(spec, static_cast<double>(*value))) return std::nullopt;
      return std::to_string(*value);
    }
    case ParamType::real: {
      const auto value = parse_real(text);
      if (!value || !in_range(spec, *value)) return std::nullopt;
      std::string t = trim(text);
      if (!t.empty() && t.front() == '+') t.erase(0, 1);
      return t;
    }
    case ParamType::string:
      if (!valid_string(text)) return std::nullopt;
      return text;
    case ParamType::choice: {
      const std::string t = to_lower(trim(text));
      for (const auto& c : spec.choices)
        if (to_lower(c) == t) return c;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::string invalid_value_message(const ParamSpec& spec, const std::string& text) {
  return quote_value(text) + " is not a valid " + type_noun(spec.type) + " for '" + spec.path + "' (" + expectation(spec) +
         ")";
}

void check_name(const std::string& name, const char* what, const std::string& where) {
  if (name.empty()) throw UsageError(where, std::string("empty ") + what);
  if (name.find('/') != std::string::npos)
    throw UsageError(where, std::string(what) + " " + quote_value(name) + " contains '/', which separates parameter paths");
}

}  // namespace param_detail

std::string describe_type(const ParamSpec& spec) {
  switch (spec.type) {
    case ParamType::boolean:
      return "boolean";
    case ParamType::integer:
      return "integer" + param_detail::range_text(spec);
    case ParamType::real:
      return "real" + param_detail::range_text(spec);
    case ParamType::string:
      return "string";
    case ParamType::choice:
      return "one of: " + param_detail::choices_text(spec);
  }
  return "";
}

}  // namespace nanoscopy
