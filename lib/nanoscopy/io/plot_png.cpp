#include "nanoscopy/io/plot_png.hpp"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/plot_font.hpp"

namespace nanoscopy {
namespace {

constexpr Rgb kWhite{255, 255, 255}, kBlack{0, 0, 0}, kGrid{225, 225, 225}, kFrameGrey{90, 90, 90};
constexpr int kTextScale = 2;  // font cells per glyph cell

class Canvas {
 public:
  explicit Canvas(RgbImage& image) : im_(image) {}

  void set(int x, int y, Rgb c) {
    if (x < clip_x0_ || y < clip_y0_ || x >= clip_x1_ || y >= clip_y1_) return;
    auto* p = &im_.pixels[3 * (static_cast<std::size_t>(y) * static_cast<std::size_t>(im_.width) +
                               static_cast<std::size_t>(x))];
    p[0] = c.r, p[1] = c.g, p[2] = c.b;
  }
  void clip(int x0, int y0, int x1, int y1) { clip_x0_ = x0, clip_y0_ = y0, clip_x1_ = x1, clip_y1_ = y1; }
  void unclip() { clip(0, 0, im_.width, im_.height); }

  void fill(int x0, int y0, int x1, int y1, Rgb c) {
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) set(x, y, c);
  }
  void dot(double x, double y, int thickness, Rgb c) {
    const int x0 = static_cast<int>(std::lround(x - (thickness - 1) / 2.0));
    const int y0 = static_cast<int>(std::lround(y - (thickness - 1) / 2.0));
    fill(x0, y0, x0 + thickness, y0 + thickness, c);
  }
  // A line from (x0, y0) to (x1, y1); dashed lines continue their pattern from `phase` (px along the path).
  void line(double x0, double y0, double x1, double y1, int thickness, Rgb c, bool dashed, double& phase) {
    const double length = std::hypot(x1 - x0, y1 - y0);
    const int steps = std::max(1, static_cast<int>(std::ceil(length * 2)));
    for (int i = 0; i <= steps; ++i) {
      const double t = static_cast<double>(i) / steps;
      const double along = phase + t * length;
      if (dashed && std::fmod(along, 14.0) >= 8.0) continue;  // 8 px on, 6 px off
      dot(x0 + t * (x1 - x0), y0 + t * (y1 - y0), thickness, c);
    }
    phase += length;
  }
  // Text with its top-left corner at (x, y); vertical text runs bottom to top with its top-left at (x, y).
  void text(int x, int y, const std::string& s, Rgb c, bool vertical = false) {
    plot_font::each_ink_cell(s, [&](int gx, int gy) {
      const int u = gx * kTextScale, v = gy * kTextScale;
      if (vertical)
        fill(x + v, y - u - kTextScale, x + v + kTextScale, y - u, c);
      else
        fill(x + u, y + v, x + u + kTextScale, y + v + kTextScale, c);
    });
  }

 private:
  RgbImage& im_;
  int clip_x0_ = 0, clip_y0_ = 0, clip_x1_ = 0, clip_y1_ = 0;
};

int text_width(const std::string& s) {
  return static_cast<int>(s.size()) * plot_font::kAdvance * kTextScale;
}
constexpr int kTextHeight = plot_font::kGlyphHeight * kTextScale;

std::string tick_label(double v, double step) {
  if (std::abs(v) < step * 1e-9) v = 0;
  const int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 0, 8);
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, v);
  return text;
}

struct Range {
  double lo, hi;
};

Range data_range(const PlotSpec& spec, bool x_axis) {
  double lo = INFINITY, hi = -INFINITY;
  for (const PlotSeries& s : spec.series)
    for (double v : x_axis ? s.x : s.y)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (x_axis)
    for (const PlotMarker& m : spec.markers)
      if (std::isfinite(m.x)) lo = std::min(lo, m.x), hi = std::max(hi, m.x);
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (hi - lo < 1e-12 * std::max(1.0, std::abs(hi))) lo -= 0.5, hi += 0.5;
  return {lo, hi};
}

Range axis_range(const PlotSpec& spec, bool x_axis) {
  Range r = data_range(spec, x_axis);
  const auto& set_lo = x_axis ? spec.x_min : spec.y_min;
  const auto& set_hi = x_axis ? spec.x_max : spec.y_max;
  const auto ticks = nice_ticks(r.lo, r.hi);
  if (!set_lo && !ticks.empty()) r.lo = std::min(r.lo, ticks.front());
  if (!set_hi && !ticks.empty()) r.hi = std::max(r.hi, ticks.back());
  if (set_lo) r.lo = *set_lo;
  if (set_hi) r.hi = *set_hi;
  if (!(r.hi > r.lo)) r.hi = r.lo + 1;
  return r;
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int target) {
  std::vector<double> out;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi) || target < 1) return out;
  const double raw = (hi - lo) / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  const double first = std::floor(lo / step + 1e-9) * step;
  for (double v = first; v <= hi + step * (1 - 1e-9); v += step) out.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  return out;
}

RgbImage render_plot(const PlotSpec& spec) {
  if (spec.width < 200 || spec.height < 150)
    throw UsageError("plot", "a plot needs at least 200 x 150 px (got " + std::to_string(spec.width) + " x " +
                                 std::to_string(spec.height) + ")");
  for (const PlotSeries& s : spec.series)
    if (s.x.size() != s.y.size()) throw UsageError("plot", "series '" + s.label + "' has x and y of different lengths");

  RgbImage im;
  im.width = spec.width;
  im.height = spec.height;
  im.pixels.assign(3 * static_cast<std::size_t>(im.width) * static_cast<std::size_t>(im.height), 255);
  Canvas canvas(im);
  canvas.unclip();

  const int left = 40 + 8 * plot_font::kAdvance * kTextScale / 2 + kTextHeight, right = 30;
  const int top = 20 + kTextHeight + 16, bottom = 30 + 2 * kTextHeight + 14;
  const int x0 = left, x1 = spec.width - right, y0 = top, y1 = spec.height - bottom;  // plot area
  const Range xr = axis_range(spec, true), yr = axis_range(spec, false);
  const auto px = [&](double v) { return x0 + (v - xr.lo) / (xr.hi - xr.lo) * (x1 - x0); };
  const auto py = [&](double v) { return y1 - (v - yr.lo) / (yr.hi - yr.lo) * (y1 - y0); };

  // Grid, ticks and tick labels.
  double phase = 0;
  const auto xt = nice_ticks(xr.lo, xr.hi), yt = nice_ticks(yr.lo, yr.hi);
  const double xstep = xt.size() > 1 ? xt[1] - xt[0] : 1, ystep = yt.size() > 1 ? yt[1] - yt[0] : 1;
  for (double v : xt) {
    if (v < xr.lo - 1e-9 * xstep || v > xr.hi + 1e-9 * xstep) continue;
    const int x = static_cast<int>(std::lround(px(v)));
    canvas.fill(x, y0, x + 1, y1, kGrid);
    canvas.fill(x, y1, x + 1, y1 + 6, kBlack);
    const std::string label = tick_label(v, xstep);
    canvas.text(x - text_width(label) / 2, y1 + 10, label, kBlack);
  }
  for (double v : yt) {
    if (v < yr.lo - 1e-9 * ystep || v > yr.hi + 1e-9 * ystep) continue;
    const int y = static_cast<int>(std::lround(py(v)));
    canvas.fill(x0, y, x1, y + 1, kGrid);
    canvas.fill(x0 - 6, y, x0, y + 1, kBlack);
    const std::string label = tick_label(v, ystep);
    canvas.text(x0 - 10 - text_width(label), y - kTextHeight / 2, label, kBlack);
  }

  // Series, markers (clipped to the plot area).
  canvas.clip(x0, y0, x1 + 1, y1 + 1);
  for (const PlotSeries& s : spec.series) {
    phase = 0;
    for (std::size_t i = 1; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i - 1]) || !std::isfinite(s.y[i - 1]) || !std::isfinite(s.x[i]) || !std::isfinite(s.y[i]))
        continue;
      canvas.line(px(s.x[i - 1]), py(s.y[i - 1]), px(s.x[i]), py(s.y[i]), s.thickness, s.color, s.dashed, phase);
    }
  }
  for (const PlotMarker& m : spec.markers) {
    if (!std::isfinite(m.x)) continue;
    phase = 0;
    canvas.line(px(m.x), y0, px(m.x), y1, 2, m.color, false, phase);
    const int lx = static_cast<int>(std::lround(px(m.x)));
    const int w = text_width(m.label);
    canvas.text(lx + w + 8 < x1 ? lx + 6 : lx - 6 - w, y0 + 6, m.label, m.color);
  }
  canvas.unclip();

  // Frame, titles.
  canvas.fill(x0, y0, x1 + 1, y0 + 1, kFrameGrey);
  canvas.fill(x0, y1, x1 + 1, y1 + 1, kBlack);
  canvas.fill(x0, y0, x0 + 1, y1 + 1, kBlack);
  canvas.fill(x1, y0, x1 + 1, y1 + 1, kFrameGrey);
  canvas.text((spec.width - text_width(spec.title)) / 2, 14, spec.title, kBlack);
  canvas.text((x0 + x1 - text_width(spec.x_label)) / 2, spec.height - 12 - kTextHeight, spec.x_label, kBlack);
  canvas.text(12, (y0 + y1 + text_width(spec.y_label)) / 2, spec.y_label, kBlack, true);

  // Legend, top right inside the plot area.
  int entries = 0, widest = 0;
  for (const PlotSeries& s : spec.series)
    if (!s.label.empty()) ++entries, widest = std::max(widest, text_width(s.label));
  if (entries > 0) {
    const int row = kTextHeight + 8, box_w = widest + 60, box_h = entries * row + 8;
    const int bx1 = x1 - 10, bx0 = bx1 - box_w, by0 = y0 + 10 + (spec.markers.empty() ? 0 : kTextHeight + 8);
    canvas.fill(bx0, by0, bx1, by0 + box_h, kWhite);
    canvas.fill(bx0, by0, bx1, by0 + 1, kFrameGrey);
    canvas.fill(bx0, by0 + box_h - 1, bx1, by0 + box_h, kFrameGrey);
    canvas.fill(bx0, by0, bx0 + 1, by0 + box_h, kFrameGrey);
    canvas.fill(bx1 - 1, by0, bx1, by0 + box_h, kFrameGrey);
    int y = by0 + 8;
    for (const PlotSeries& s : spec.series) {
      if (s.label.empty()) continue;
      phase = 0;
      canvas.line(bx0 + 8, y + kTextHeight / 2.0, bx0 + 44, y + kTextHeight / 2.0, s.thickness, s.color, s.dashed,
                  phase);
      canvas.text(bx0 + 52, y, s.label, kBlack);
      y += row;
    }
  }
  return im;
}

void write_plot_png(const std::string& path, const PlotSpec& spec) {
  const RgbImage im = render_plot(spec);
  AtomicOutput out(path);
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(im.width);
  image.height = static_cast<png_uint_32>(im.height);
  image.format = PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&image, out.temp_path().c_str(), 0, im.pixels.data(), 3 * im.width, nullptr)) {
    const std::string why = image.message;
    png_image_free(&image);
    throw OutputError(path, "cannot write the PNG: " + why);
  }
  out.commit();
}

}  // namespace nanoscopy
