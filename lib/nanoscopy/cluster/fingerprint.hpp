// Fingerprints that tie a part file (sofi/fit2d/smre --partial) to the stack and
// parameters it was made from, so merge can refuse parts that do not belong together.
#pragma once

#include <cstdint>
#include <string>

namespace nanoscopy {

class StackReader;

// FNV-1a, 64 bit: a fingerprint, not a security measure.
class Fnv {
 public:
  void add(const void* data, std::size_t n);
  void add(const std::string& s) { add(s.data(), s.size()); }
  void add(std::int64_t v) { add(&v, sizeof v); }
  void add(double v) { add(&v, sizeof v); }
  std::string hex() const;  // 16 hex digits

 private:
  std::uint64_t h_ = 1469598103934665603ull;
};

// The stack's frame count, size, pixel type and the bytes of its first, middle and
// last frames: cheap (three frames) and different for any two real recordings.
std::string stack_fingerprint(StackReader& reader);

// The fingerprint of a file's bytes ("none" for an empty path): parameter files
// a run depends on (the pre-SMRE settings of sofi, a regions file of fit2d).
std::string file_fingerprint(const std::string& path);

}  // namespace nanoscopy
