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

// Frames a whole-movie fingerprint reads.
inline constexpr std::int64_t kFingerprintFrames = 32;

// The whole movie's fingerprint: its frame count, size, pixel type and the bytes of
// kFingerprintFrames frames spread evenly over the whole stack, first and last included
// (every frame of a shorter stack), whichever frames a part holds itself. Every part of
// one movie records the same value, and two movies of the same size and frame count that
// differ in any sampled frame differ. (Before: the first, middle and last frame only, so
// a movie differing elsewhere merged silently.) Reads kFingerprintFrames frames.
std::string stack_fingerprint(StackReader& reader);

// The fingerprint of a file's bytes ("none" for an empty path): parameter files
// a run depends on (the pre-SMRE settings of sofi, a regions file of fit2d).
std::string file_fingerprint(const std::string& path);

}  // namespace nanoscopy
