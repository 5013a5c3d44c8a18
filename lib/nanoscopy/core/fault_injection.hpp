// Fault injection for tests of the failure paths on a real GPU: with
// NANOSCOPY_INJECT_DEVICE_FAULT=F in the environment, the CUDA engines fail as a
// device would when they are given frame F. Without the variable: nothing.
// Header-only: the CUDA library calls it and links before the core library.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

// Throws DeviceError("cuda:<gpu>", ...) when the injected frame is in [first, first + count).
inline void inject_device_fault(std::int64_t first, std::int64_t count, int gpu) {
  static const std::int64_t frame = [] {
    const char* v = std::getenv("NANOSCOPY_INJECT_DEVICE_FAULT");
    return v && *v ? std::atoll(v) : std::int64_t{-1};
  }();
  if (frame >= first && frame < first + count)
    throw DeviceError("cuda:" + std::to_string(gpu), "an injected device fault at frame " + std::to_string(frame) +
                                                         " (NANOSCOPY_INJECT_DEVICE_FAULT)");
}

}  // namespace nanoscopy
