#include "nanoscopy/frc/threshold.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

double FrcThreshold::at(std::int64_t n) const {
  const double nr = static_cast<double>(std::max<std::int64_t>(n, 1));
  switch (kind) {
    case Kind::fixed:
      return value;
    case Kind::half_bit: {
      const double s = std::sqrt(nr);
      return (0.2071 + 1.9102 / s) / (1.2071 + 0.9102 / s);
    }
    case Kind::sigma:
      return value / std::sqrt(nr / 2.0);
  }
  return value;
}

namespace {

std::string format_number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// A whole-string decimal number, or false.
bool parse_number(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(out);
}

}  // namespace

std::string FrcThreshold::name() const {
  switch (kind) {
    case Kind::fixed:
      return std::abs(value - 1.0 / 7.0) < 1e-12 ? "1/7" : format_number(value);
    case Kind::half_bit:
      return "half-bit";
    case Kind::sigma:
      return format_number(value) + "sigma";
  }
  return "?";
}

FrcThreshold parse_frc_threshold(const std::string& text, const std::string& where) {
  std::string t;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c)))
      t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  FrcThreshold th;
  const auto bad = [&] {
    return UsageError(where, "unknown FRC threshold '" + text +
                                 "' (use 1/7, a number in (0, 1), half-bit, or k sigma such as 2sigma, 3sigma)");
  };
  if (t == "1/7") return th;
  if (t == "half-bit" || t == "halfbit" || t == "half_bit" || t == "1/2-bit" || t == "1/2bit") {
    th.kind = FrcThreshold::Kind::half_bit;
    return th;
  }
  const std::string suffix = "sigma";
  if (t.size() > suffix.size() && t.compare(t.size() - suffix.size(), suffix.size(), suffix) == 0) {
    std::string k = t.substr(0, t.size() - suffix.size());
    if (!k.empty() && (k.back() == '-' || k.back() == '_')) k.pop_back();
    double v = 0;
    if (!parse_number(k, v) || !(v > 0)) throw bad();
    th.kind = FrcThreshold::Kind::sigma;
    th.value = v;
    return th;
  }
  double v = 0;
  if (parse_number(t, v) && v > 0 && v < 1) {
    th.value = v;
    return th;
  }
  throw bad();
}

}  // namespace nanoscopy
