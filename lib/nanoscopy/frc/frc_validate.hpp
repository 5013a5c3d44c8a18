// Checks every engine makes before planning and before each pair (shared so
// that the CPU and CUDA engines fail alike).
#pragma once

#include <span>

#include "nanoscopy/frc/engine.hpp"

namespace nanoscopy {

// UsageError: a side < 2, more than 2^31 - 1 pixels per side or 2^32 pixels
// (the ring arithmetic's range), a Tukey fraction outside [0, 0.5].
void check_frc_geometry(const FrcGeometry& geometry);
// InputError: an image whose pixel count is not width * height.
void check_frc_inputs(std::span<const float> a, std::span<const float> b, const FrcGeometry& geometry);

}  // namespace nanoscopy
