// Internals shared by the parameter readers, the schema and the printers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include "nanoscopy/params/params.hpp"

namespace nanoscopy::param_detail {

// The most subsections one inside another in a parameter file (.prm or JSON): the schemas use two;
// a file nested 100,000 deep is refused at once rather than parsed in quadratic time.
inline constexpr std::size_t kMaxParamDepth = 32;

std::string trim(std::string_view text);
std::string to_lower(std::string_view text);

// Text parsers of the accepted forms (see ParamSpec); nullopt if not of that form.
std::optional<bool> parse_bool(std::string_view text);
std::optional<std::int64_t> parse_int(std::string_view text);
std::optional<double> parse_real(std::string_view text);  // finite only

// Text that reads back as exactly `value`: whole numbers in digits ("1000000"),
// else the shortest exact form ("0.001", "6.192", "1e+300").
std::string format_number(double value);

// The canonical text of a valid value, or nullopt if `text` is not valid for
// `spec` (type, range, choices).
std::optional<std::string> canonical_value(const ParamSpec& spec, const std::string& text);
// "'abc' is not a valid real for 'x/y' (expected a finite number in [0, 1])"
std::string invalid_value_message(const ParamSpec& spec, const std::string& text);

// Throws UsageError(where, ...) if a subsection name or key is empty or holds '/'.
void check_name(const std::string& name, const char* what, const std::string& where);

// Writes the parameters of `schema` as a .prm or JSON listing: one comment line
// per parameter, then its value; `value` gives the text to write, `comment` the
// comment line's content. Throws std::invalid_argument for another format.
void print_listing(std::ostream& out, const std::string& format, const Schema& schema, const std::string& title,
                   const std::function<std::string(const ParamSpec&)>& value,
                   const std::function<std::string(const ParamSpec&)>& comment);

}  // namespace nanoscopy::param_detail
