#include "nanoscopy/io/gray_label.hpp"

#include <algorithm>

#include "nanoscopy/io/plot_font.hpp"

namespace nanoscopy {

int gray_label_width(const std::string& text, int scale) {
  const int cells = text.empty() ? 0 : static_cast<int>(text.size()) * plot_font::kAdvance - 1;
  return (cells + 2) * scale;
}

int gray_label_height(int scale) {
  return (plot_font::kGlyphHeight + 2) * scale;
}

void burn_gray_label(float* image, std::int64_t width, std::int64_t height, std::int64_t x0, std::int64_t y0,
                     std::int64_t x_end, std::int64_t y_end, const std::string& text, int scale) {
  x_end = std::min(x_end, width);
  y_end = std::min(y_end, height);
  const auto put = [&](std::int64_t x, std::int64_t y, float v) {
    if (x >= 0 && y >= 0 && x < x_end && y < y_end) image[y * width + x] = v;
  };
  // The box first (black), then the glyphs (white) one cell in from its corner.
  for (std::int64_t y = 0; y < gray_label_height(scale); ++y)
    for (std::int64_t x = 0; x < gray_label_width(text, scale); ++x) put(x0 + x, y0 + y, 0.0f);
  plot_font::each_ink_cell(text, [&](int gx, int gy) {
    for (int sy = 0; sy < scale; ++sy)
      for (int sx = 0; sx < scale; ++sx) put(x0 + (1 + gx) * scale + sx, y0 + (1 + gy) * scale + sy, 1.0f);
  });
}

}  // namespace nanoscopy
