#include "nanoscopy/io/image_png.hpp"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"

namespace nanoscopy {
namespace {

// 8-bit samples in libpng's `format` (gray: 1 per pixel, RGB: 3), rows packed, written atomically.
void write_png_bytes(const std::string& path, std::int64_t width, std::int64_t height, png_uint_32 format,
                     const std::vector<std::uint8_t>& bytes) {
  AtomicOutput out(path);
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width);
  image.height = static_cast<png_uint_32>(height);
  image.format = format;
  const auto row_bytes = static_cast<png_int_32>(PNG_IMAGE_PIXEL_CHANNELS(format) * width);
  const bool ok =
      png_image_write_to_file(&image, out.temp_path().c_str(), 0, bytes.data(), row_bytes, nullptr) != 0;
  png_image_free(&image);
  if (!ok) throw OutputError(path, "cannot write the PNG image");
  out.commit();
}

}  // namespace

float order_statistic(std::vector<float>& values, double fraction) {
  // The element a full sort would put at this index; nth_element finds it in linear time (a sort of a
  // 1024^2 preview took 70 ms, most of sofi --balanced's output time on a fast GPU).
  const auto k = static_cast<std::ptrdiff_t>(fraction * static_cast<double>(values.size() - 1));
  std::nth_element(values.begin(), values.begin() + k, values.end());
  return values[static_cast<std::size_t>(k)];
}

void write_gray_png(const std::string& path, std::int64_t width, std::int64_t height, std::span<const float> pixels,
                    double low_percentile, double high_percentile) {
  if (width < 1 || height < 1 || static_cast<std::int64_t>(pixels.size()) != width * height)
    throw UsageError(path, "image size does not match its pixels");
  std::vector<float> finite;
  for (float v : pixels)
    if (std::isfinite(v)) finite.push_back(v);
  float lo = 0, hi = 1;
  if (!finite.empty()) {
    lo = order_statistic(finite, low_percentile / 100.0);
    hi = order_statistic(finite, high_percentile / 100.0);
  }
  const float scale = hi > lo ? 255.0f / (hi - lo) : 0.0f;
  std::vector<std::uint8_t> gray(pixels.size());
  for (std::size_t i = 0; i < pixels.size(); ++i) {
    const float v = std::isfinite(pixels[i]) ? (pixels[i] - lo) * scale : 0.0f;
    gray[i] = static_cast<std::uint8_t>(std::clamp(v, 0.0f, 255.0f));
  }
  write_png_bytes(path, width, height, PNG_FORMAT_GRAY, gray);
}

void write_rgb_png(const std::string& path, std::int64_t width, std::int64_t height, std::span<const float> red,
                   std::span<const float> green, std::span<const float> blue) {
  const auto n = static_cast<std::size_t>(width * height);
  if (width < 1 || height < 1 || red.size() != n || green.size() != n || blue.size() != n)
    throw UsageError(path, "image size does not match its pixels");
  std::vector<std::uint8_t> rgb(3 * n);
  const auto byte = [](float v) {
    return static_cast<std::uint8_t>(std::lround(std::clamp(std::isfinite(v) ? v : 0.0f, 0.0f, 1.0f) * 255.0f));
  };
  for (std::size_t i = 0; i < n; ++i) {
    rgb[3 * i] = byte(red[i]);
    rgb[3 * i + 1] = byte(green[i]);
    rgb[3 * i + 2] = byte(blue[i]);
  }
  write_png_bytes(path, width, height, PNG_FORMAT_RGB, rgb);
}

}  // namespace nanoscopy
