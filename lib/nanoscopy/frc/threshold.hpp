// FRC thresholds (notes/reference.md 6). n is the ring's pixel count n_r.
//   fixed     T = value (1/7 by default)
//   half-bit  T = (0.2071 + 1.9102/sqrt(n)) / (1.2071 + 0.9102/sqrt(n))   (van Heel & Schatz 2005)
//   k sigma   T = k / sqrt(n/2)   (the SMRE paper uses 2 sigma)
#pragma once

#include <cstdint>
#include <string>

namespace nanoscopy {

struct FrcThreshold {
  enum class Kind { fixed, half_bit, sigma };
  Kind kind = Kind::fixed;
  double value = 1.0 / 7.0;  // fixed: the threshold; sigma: k

  // T for a ring of n pixels (n >= 1).
  double at(std::int64_t n) const;
  // "1/7", "0.2", "half-bit", "2sigma".
  std::string name() const;
};

// Parses --threshold: "1/7", a number in (0, 1) ("0.143"), "half-bit" (also
// "halfbit", "half_bit", "1/2-bit"), "<k>sigma" (also "<k>-sigma", "<k> sigma",
// k > 0, e.g. "2sigma", "3sigma", "2.5sigma"); case-insensitive. UsageError
// naming `where` otherwise.
FrcThreshold parse_frc_threshold(const std::string& text, const std::string& where = "--threshold");

}  // namespace nanoscopy
