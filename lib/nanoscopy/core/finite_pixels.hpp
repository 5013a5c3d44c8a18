// The one check smre, sofi and frc make of the pixels they are given: a NaN or an
// infinite value would spread through every iteration, cumulant or ring of its
// pixel. (fit2d instead detects around such pixels and keeps its output finite.)
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <string>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

// InputError "<where>: has NaN or infinite pixels" (where: the file and its frame or page).
inline void require_finite_pixels(std::span<const float> pixels, const std::string& where) {
  if (!std::all_of(pixels.begin(), pixels.end(), [](float v) { return std::isfinite(v); }))
    throw InputError(where, "has NaN or infinite pixels");
}

}  // namespace nanoscopy
