#include "nanoscopy/io/image_png.hpp"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

void write_gray_png(const std::string& path, std::int64_t width, std::int64_t height, std::span<const float> pixels,
                    double low_percentile, double high_percentile) {
  if (width < 1 || height < 1 || static_cast<std::int64_t>(pixels.size()) != width * height)
    throw UsageError(path, "image size does not match its pixels");
  std::vector<float> sorted;
  for (float v : pixels)
    if (std::isfinite(v)) sorted.push_back(v);
  float lo = 0, hi = 1;
  if (!sorted.empty()) {
    std::sort(sorted.begin(), sorted.end());
    auto at = [&](double p) { return sorted[static_cast<std::size_t>(p / 100.0 * static_cast<double>(sorted.size() - 1))]; };
    lo = at(low_percentile);
    hi = at(high_percentile);
  }
  const float scale = hi > lo ? 255.0f / (hi - lo) : 0.0f;
  std::vector<std::uint8_t> gray(pixels.size());
  for (std::size_t i = 0; i < pixels.size(); ++i) {
    const float v = std::isfinite(pixels[i]) ? (pixels[i] - lo) * scale : 0.0f;
    gray[i] = static_cast<std::uint8_t>(std::clamp(v, 0.0f, 255.0f));
  }
  AtomicOutput out(path);
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width);
  image.height = static_cast<png_uint_32>(height);
  image.format = PNG_FORMAT_GRAY;
  const bool ok = png_image_write_to_file(&image, out.temp_path().c_str(), 0, gray.data(),
                                          static_cast<png_int_32>(width), nullptr) != 0;
  png_image_free(&image);
  if (!ok) throw OutputError(path, "cannot write the PNG image");
  out.commit();
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
  AtomicOutput out(path);
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width);
  image.height = static_cast<png_uint_32>(height);
  image.format = PNG_FORMAT_RGB;
  const bool ok = png_image_write_to_file(&image, out.temp_path().c_str(), 0, rgb.data(),
                                          static_cast<png_int_32>(3 * width), nullptr) != 0;
  png_image_free(&image);
  if (!ok) throw OutputError(path, "cannot write the PNG image");
  out.commit();
}

}  // namespace nanoscopy
