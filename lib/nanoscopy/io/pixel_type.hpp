// Pixel types a stack can hold on disk, and conversion of raw frames to the
// types the algorithms consume (float32, or uint16 kept as is for transfers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace nanoscopy {

enum class PixelType { u8, u16, i16, u32, i32, f32, f64 };

std::size_t bytes_per_pixel(PixelType type);
std::string to_string(PixelType type);  // "uint16", "float32", ...

// Converts `count` pixels of `type` at `src` to float32.
void convert_to_float(PixelType type, const void* src, std::size_t count, float* dst);

}  // namespace nanoscopy
