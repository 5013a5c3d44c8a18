// A whole string as one finite number ("1.5", "2e-3"), for option values that
// each caller then checks for its range and words its own error for.
#pragma once

#include <cmath>
#include <exception>
#include <optional>
#include <string>

#include "nanoscopy/core/error.hpp"

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

// An option that is "auto", "off" or a distance in px > 0 (Filter/duplicates,
// Fit/recenter): auto_px for "auto", 0 for "off". UsageError naming `where` otherwise.
inline double distance_option_px(const std::string& value, double auto_px, const std::string& where) {
  if (value == "auto") return auto_px;
  if (value == "off") return 0.0;
  const std::optional<double> d = parse_finite_number(value);
  if (!d || !(*d > 0)) throw UsageError(where, "'" + value + "' is not auto, off or a distance in px > 0");
  return *d;
}

}  // namespace nanoscopy
