// Fingerprints that tie a part file (sofi/fit2d/smre --partial) to the stack and
// parameters it was made from, so merge can refuse parts that do not belong together.
#pragma once

#include <cstdint>
#include <string>

#include "nanoscopy/core/fnv.hpp"

namespace nanoscopy {

class StackReader;

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
