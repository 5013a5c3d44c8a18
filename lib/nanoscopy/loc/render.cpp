#include "nanoscopy/loc/render.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {
namespace {

// Points converted per engine call: 2^20 (20 MB of RenderPoints) keeps a GPU's
// transfer and kernels long against their launch, and the host buffers small.
constexpr std::size_t kChunkPoints = std::size_t{1} << 20;

// The 99.5th percentile of the non-zero values (1 when there are none): the
// preview's and the z colour's white point.
float top_value(std::span<const float> pixels) {
  std::vector<float> nonzero;
  for (float v : pixels)
    if (v > 0) nonzero.push_back(v);
  if (nonzero.empty()) return 1;
  const auto at = nonzero.begin() + static_cast<std::ptrdiff_t>(0.995 * static_cast<double>(nonzero.size() - 1));
  std::nth_element(nonzero.begin(), at, nonzero.end());
  return *at > 0 ? *at : 1;
}

struct ScaleBar {
  double nm = 0;
  std::int64_t x0 = 0, x1 = 0, y0 = 0, y1 = 0;  // pixels [x0, x1) x [y0, y1)
};

// 1, 2 or 5 × 10ⁿ nm, the largest not above a fifth of the width, at the bottom right.
ScaleBar scale_bar(std::int64_t width, std::int64_t height, double pixel_nm) {
  ScaleBar b;
  const double target = static_cast<double>(width) * pixel_nm / 5;
  b.nm = std::pow(10.0, std::floor(std::log10(std::max(target, 1.0))));
  for (double m : {5.0, 2.0})
    if (b.nm * m <= target) {
      b.nm *= m;
      break;
    }
  const auto length = static_cast<std::int64_t>(std::lround(b.nm / pixel_nm));
  const std::int64_t thick = std::max<std::int64_t>(1, height / 100);
  const std::int64_t margin = std::max<std::int64_t>(1, width / 40);
  b.x0 = std::max<std::int64_t>(0, width - margin - length);
  b.x1 = std::max<std::int64_t>(0, width - margin);
  b.y0 = std::max<std::int64_t>(0, height - margin - thick);
  b.y1 = std::max<std::int64_t>(0, height - margin);
  return b;
}

}  // namespace

double render_origin_px(RenderRegistration registration) {
  return registration == RenderRegistration::picasso ? 0.0 : -0.5;
}

const char* render_registration_name(RenderRegistration registration) {
  return registration == RenderRegistration::picasso ? "picasso" : "camera";
}

RenderGeometry render_geometry(const RenderSettings& s) {
  if (!(s.pixel_nm > 0)) throw UsageError("--pixel", "the rendered pixel must be positive (nm)");
  if (!(s.camera_px_nm > 0)) throw UsageError("render", "the localizations' pixel size is unknown");
  RenderGeometry g;
  const double field_w = static_cast<double>(s.field_width_px) * s.camera_px_nm;
  const double field_h = static_cast<double>(s.field_height_px) * s.camera_px_nm;
  const double w = std::ceil(field_w / s.pixel_nm), h = std::ceil(field_h / s.pixel_nm);
  if (!(w >= 1 && h >= 1 && w * h <= static_cast<double>(std::int64_t{1} << 31)))
    throw UsageError("--pixel", "a " + std::to_string(static_cast<long long>(std::min(w, 9e18))) + " x " +
                                    std::to_string(static_cast<long long>(std::min(h, 9e18))) +
                                    " picture is not possible: choose a larger rendered pixel");
  g.width = static_cast<std::int64_t>(w);
  g.height = static_cast<std::int64_t>(h);
  g.mode = s.mode;
  g.z_sum = s.color_z;
  return g;
}

Renderer::Renderer(const RenderSettings& settings, std::unique_ptr<RenderEngine> engine)
    : settings_(settings),
      engine_(std::move(engine)),
      z_min_(std::numeric_limits<double>::infinity()),
      z_max_(-std::numeric_limits<double>::infinity()) {
  const RenderGeometry g = render_geometry(settings);
  const RenderGeometry& e = engine_->geometry();
  if (e.width != g.width || e.height != g.height || e.mode != g.mode || e.z_sum != g.z_sum)
    throw UsageError("render", "the render engine was made for another picture");
}

void Renderer::add(std::span<const Localization> locs) {
  const double scale = settings_.camera_px_nm / settings_.pixel_nm;  // rendered pixels per camera pixel
  const double origin = render_origin_px(settings_.registration);
  const auto w = static_cast<float>(engine_->geometry().width), h = static_cast<float>(engine_->geometry().height);
  for (std::size_t first = 0; first < locs.size(); first += kChunkPoints) {
    const std::span<const Localization> chunk = locs.subspan(first, std::min(kChunkPoints, locs.size() - first));
    const std::span<render_math::RenderPoint> points = engine_->buffer(chunk.size());
    const auto n = static_cast<std::int64_t>(chunk.size());
    std::int64_t inside = 0;
    double z_min = z_min_, z_max = z_max_;
    const bool color_z = settings_.color_z;
    // A pure map, one point per localization (no compaction), so that the threads share it: at 10^8
    // localizations this conversion is a fair part of a GPU render.
#pragma omp parallel for reduction(+ : inside) reduction(min : z_min) reduction(max : z_max)
    for (std::int64_t k = 0; k < n; ++k) {
      const Localization& l = chunk[static_cast<std::size_t>(k)];
      render_math::RenderPoint& p = points[static_cast<std::size_t>(k)];
      // In rendered pixels from the frame's corner; the test is on the float values the engines get.
      p.u = static_cast<float>((l.x - origin) * scale);
      p.v = static_cast<float>((l.y - origin) * scale);
      if (!(p.u >= 0 && p.v >= 0 && p.u < w && p.v < h)) {
        p.u = -1.0f;  // outside (render_math::inside): NaN positions too
        continue;
      }
      ++inside;
      p.sigma_u = static_cast<float>(std::max(std::isfinite(l.lpx) ? l.lpx * scale : 0.0, 0.5));
      p.sigma_v = static_cast<float>(std::max(std::isfinite(l.lpy) ? l.lpy * scale : 0.0, 0.5));
      p.z = 0;
      if (color_z) {
        // A z that is not finite would poison its pixels' sums: such a point counts in the density at z = 0.
        p.z = std::isfinite(l.z) ? static_cast<float>(l.z) : 0.0f;
        z_min = std::min(z_min, static_cast<double>(p.z));
        z_max = std::max(z_max, static_cast<double>(p.z));
      }
    }
    z_min_ = z_min;
    z_max_ = z_max;
    rendered_ += inside;
    engine_->add(points);
  }
}

RenderedImage Renderer::finish() {
  RenderedImage img;
  img.width = engine_->geometry().width;
  img.height = engine_->geometry().height;
  img.pixels.assign(static_cast<std::size_t>(img.width * img.height), 0.0f);
  if (settings_.color_z) img.z_sum.assign(img.pixels.size(), 0.0f);
  engine_->read(img.pixels, img.z_sum);
  img.rendered = rendered_;
  if (settings_.color_z && rendered_ > 0) {
    img.z_min = z_min_;
    img.z_max = z_max_;
  }
  return img;
}

RenderedImage render_localizations(std::span<const Localization> locs, const RenderSettings& settings) {
  Renderer r(settings, make_cpu_render_engine(render_geometry(settings)));
  r.add(locs);
  return r.finish();
}

std::vector<float> preview_with_scale_bar(const RenderedImage& image, double pixel_nm, double& bar_nm) {
  const float top = top_value(image.pixels);
  std::vector<float> out(image.pixels.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = std::min(image.pixels[i], top);
  const ScaleBar b = scale_bar(image.width, image.height, pixel_nm);
  bar_nm = b.nm;
  for (std::int64_t j = b.y0; j < b.y1; ++j)
    for (std::int64_t i = b.x0; i < b.x1; ++i) out[static_cast<std::size_t>(j * image.width + i)] = top;
  return out;
}

void viridis(double t, float& r, float& g, float& b) {
  // matplotlib's viridis at t = 0, 1/8, …, 1 (R viridisLite's viridis(9)).
  static constexpr std::array<std::array<int, 3>, 9> anchors = {{{0x44, 0x01, 0x54},
                                                                 {0x47, 0x2D, 0x7B},
                                                                 {0x3B, 0x52, 0x8B},
                                                                 {0x2C, 0x72, 0x8E},
                                                                 {0x21, 0x90, 0x8C},
                                                                 {0x27, 0xAD, 0x81},
                                                                 {0x5D, 0xC8, 0x63},
                                                                 {0xAA, 0xDC, 0x32},
                                                                 {0xFD, 0xE7, 0x25}}};
  const double x = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * 8.0;
  const auto k = std::min<std::size_t>(7, static_cast<std::size_t>(x));
  const double f = x - static_cast<double>(k);
  const auto mix = [&](int c) {
    return static_cast<float>(((1 - f) * anchors[k][static_cast<std::size_t>(c)] + f * anchors[k + 1][static_cast<std::size_t>(c)]) / 255.0);
  };
  r = mix(0);
  g = mix(1);
  b = mix(2);
}

RgbPlanes color_by_z(const RenderedImage& image, double z_low, double z_high) {
  if (image.z_sum.size() != image.pixels.size()) throw UsageError("render", "the picture was rendered without z");
  RgbPlanes rgb;
  rgb.width = image.width;
  rgb.height = image.height;
  const std::size_t n = image.pixels.size();
  std::vector<float> mean_z(n, 0.0f);
  std::vector<float> present;
  for (std::size_t i = 0; i < n; ++i)
    if (image.pixels[i] > 0) {
      mean_z[i] = image.z_sum[i] / image.pixels[i];
      present.push_back(mean_z[i]);
    }
  if (!(z_low < z_high)) {
    z_low = z_high = 0;
    if (!present.empty()) {
      const auto at = [&](double q) {
        const auto k = static_cast<std::ptrdiff_t>(std::lround(q * static_cast<double>(present.size() - 1)));
        std::nth_element(present.begin(), present.begin() + k, present.end());
        return static_cast<double>(present[static_cast<std::size_t>(k)]);
      };
      z_low = at(0.01);
      z_high = at(0.99);
    }
    if (!(z_low < z_high)) {  // one z (or none): a range of 1 nm around it
      z_low -= 0.5;
      z_high = z_low + 1.0;
    }
  }
  rgb.z_low = z_low;
  rgb.z_high = z_high;
  const float top = top_value(image.pixels);
  rgb.red.assign(n, 0.0f);
  rgb.green.assign(n, 0.0f);
  rgb.blue.assign(n, 0.0f);
  for (std::size_t i = 0; i < n; ++i) {
    if (!(image.pixels[i] > 0)) continue;
    float r = 0, g = 0, b = 0;
    viridis((mean_z[i] - z_low) / (z_high - z_low), r, g, b);
    const float brightness = std::min(image.pixels[i] / top, 1.0f);
    rgb.red[i] = r * brightness;
    rgb.green[i] = g * brightness;
    rgb.blue[i] = b * brightness;
  }
  return rgb;
}

void burn_scale_bar(RgbPlanes& rgb, double pixel_nm, double& bar_nm) {
  const ScaleBar b = scale_bar(rgb.width, rgb.height, pixel_nm);
  bar_nm = b.nm;
  for (std::int64_t j = b.y0; j < b.y1; ++j)
    for (std::int64_t i = b.x0; i < b.x1; ++i) {
      const auto k = static_cast<std::size_t>(j * rgb.width + i);
      rgb.red[k] = rgb.green[k] = rgb.blue[k] = 1.0f;
    }
}

}  // namespace nanoscopy
