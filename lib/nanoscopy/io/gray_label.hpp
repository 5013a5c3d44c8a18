// A text label burned into a grey image (values 0 = black .. 1 = white), in plot_font's 5x7
// glyphs: white ink on a black box one pixel wider all round, so it reads on any picture.
#pragma once

#include <cstdint>
#include <string>

namespace nanoscopy {

// The label's box in image pixels at `scale` image pixels per font cell: the glyphs' width and
// height plus one cell of margin all round.
int gray_label_width(const std::string& text, int scale);
int gray_label_height(int scale);

// Burns `text` into the width x height image (row-major) with the box's top-left corner at
// (x0, y0), clipped to the image and to the region [x0, x_end) x [y0, y_end).
void burn_gray_label(float* image, std::int64_t width, std::int64_t height, std::int64_t x0, std::int64_t y0,
                     std::int64_t x_end, std::int64_t y_end, const std::string& text, int scale);

}  // namespace nanoscopy
