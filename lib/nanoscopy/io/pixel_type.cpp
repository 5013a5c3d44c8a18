#include "nanoscopy/io/pixel_type.hpp"

#include <cstring>

namespace nanoscopy {
namespace {

template <typename T>
void convert(const void* src, std::size_t count, float* dst) {
  const auto* in = static_cast<const T*>(src);
  for (std::size_t i = 0; i < count; ++i) dst[i] = static_cast<float>(in[i]);
}

}  // namespace

std::size_t bytes_per_pixel(PixelType type) {
  switch (type) {
    case PixelType::u8: return 1;
    case PixelType::u16:
    case PixelType::i16: return 2;
    case PixelType::u32:
    case PixelType::i32:
    case PixelType::f32: return 4;
    case PixelType::f64: return 8;
  }
  return 0;
}

std::string to_string(PixelType type) {
  switch (type) {
    case PixelType::u8: return "uint8";
    case PixelType::u16: return "uint16";
    case PixelType::i16: return "int16";
    case PixelType::u32: return "uint32";
    case PixelType::i32: return "int32";
    case PixelType::f32: return "float32";
    case PixelType::f64: return "float64";
  }
  return "unknown";
}

void convert_to_float(PixelType type, const void* src, std::size_t count, float* dst) {
  switch (type) {
    case PixelType::u8: return convert<std::uint8_t>(src, count, dst);
    case PixelType::u16: return convert<std::uint16_t>(src, count, dst);
    case PixelType::i16: return convert<std::int16_t>(src, count, dst);
    case PixelType::u32: return convert<std::uint32_t>(src, count, dst);
    case PixelType::i32: return convert<std::int32_t>(src, count, dst);
    case PixelType::f32: std::memcpy(dst, src, count * sizeof(float)); return;
    case PixelType::f64: return convert<double>(src, count, dst);
  }
}

}  // namespace nanoscopy
