// FNV-1a, 64 bit: a fingerprint, not a security measure. Part files tie themselves to their movie
// with it (cluster/fingerprint.hpp), and a run's manifest and shortened hidden names use it
// (core/run_files.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>

namespace nanoscopy {

class Fnv {
 public:
  void add(const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) h_ = (h_ ^ p[i]) * 1099511628211ull;
  }
  void add(const std::string& s) { add(s.data(), s.size()); }
  void add(std::int64_t v) { add(&v, sizeof v); }
  void add(double v) { add(&v, sizeof v); }
  std::string hex() const {  // 16 hex digits
    std::array<char, 17> text{};
    std::snprintf(text.data(), text.size(), "%016llx", static_cast<unsigned long long>(h_));
    return text.data();
  }

 private:
  std::uint64_t h_ = 1469598103934665603ull;
};

}  // namespace nanoscopy
