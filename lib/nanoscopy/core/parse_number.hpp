// A whole string as one finite number ("1.5", "2e-3"), for option values that
// each caller then checks for its range and words its own error for.
#pragma once

#include <cmath>
#include <exception>
#include <optional>
#include <string>

namespace nanoscopy {

// The number `text` spells from its first character to its last; nothing for
// anything else (empty, trailing characters, NaN, infinity, out of range).
inline std::optional<double> parse_finite_number(const std::string& text) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace nanoscopy
