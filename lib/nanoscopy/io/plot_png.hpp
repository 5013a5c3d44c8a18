// Line plots as PNG images (frc --plot; any tool that draws curves): white
// background, axes with ticks and numeric tick labels, axis titles, a title,
// coloured solid or dashed series, vertical markers with a label, and a
// legend. Text is drawn with a small built-in 5x7 bitmap font (upper case,
// digits and common punctuation; lower-case letters are drawn as upper case).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nanoscopy {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
};

struct PlotSeries {
  std::string label;         // in the legend; "" = not listed
  std::vector<double> x, y;  // same length; non-finite points break the line
  Rgb color{31, 119, 180};
  bool dashed = false;
  int thickness = 2;  // px
};

struct PlotMarker {
  double x = 0;       // data coordinate of a vertical line across the plot area
  std::string label;  // written beside the line's top
  Rgb color{214, 39, 40};
};

struct PlotSpec {
  std::string title, x_label, y_label;
  int width = 900, height = 560;  // px
  // Axis ranges; unset = from the data (with round tick values at the ends).
  std::optional<double> x_min, x_max, y_min, y_max;
  std::vector<PlotSeries> series;
  std::vector<PlotMarker> markers;
};

// An 8-bit RGB image, rows top to bottom, 3 bytes per pixel.
struct RgbImage {
  int width = 0, height = 0;
  std::vector<std::uint8_t> pixels;
  Rgb at(int x, int y) const {
    const auto i = 3 * (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x));
    return {pixels[i], pixels[i + 1], pixels[i + 2]};
  }
};

// Draws the plot. UsageError for a size below 200 x 150 or a series whose x and y differ in length.
RgbImage render_plot(const PlotSpec& spec);

// Renders and writes `path` atomically (temporary file, renamed on success).
// OutputError naming the path when it cannot be written.
void write_plot_png(const std::string& path, const PlotSpec& spec);

// Round tick values covering [lo, hi] (about `target` of them), for axes.
std::vector<double> nice_ticks(double lo, double hi, int target = 6);

}  // namespace nanoscopy
