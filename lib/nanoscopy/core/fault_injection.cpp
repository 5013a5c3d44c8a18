#include "nanoscopy/core/fault_injection.hpp"

#include <cstdlib>
#include <string>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

void inject_device_fault(std::int64_t first, std::int64_t count, int gpu) {
  static const std::int64_t frame = [] {
    const char* v = std::getenv("NANOSCOPY_INJECT_DEVICE_FAULT");
    return v && *v ? std::atoll(v) : std::int64_t{-1};
  }();
  if (frame >= first && frame < first + count)
    throw DeviceError("cuda:" + std::to_string(gpu), "an injected device fault at frame " + std::to_string(frame) +
                                                         " (NANOSCOPY_INJECT_DEVICE_FAULT)");
}

}  // namespace nanoscopy
