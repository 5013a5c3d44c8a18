// Fault injection for tests of the failure paths on a real GPU: with
// NANOSCOPY_INJECT_DEVICE_FAULT=F in the environment, the CUDA engines fail as a
// device would when they are given frame F. Without the variable: nothing.
#pragma once

#include <cstdint>

namespace nanoscopy {

// Throws DeviceError("cuda:<gpu>", ...) when the injected frame is in [first, first + count).
void inject_device_fault(std::int64_t first, std::int64_t count, int gpu);

}  // namespace nanoscopy
