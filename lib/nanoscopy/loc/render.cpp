#include "nanoscopy/loc/render.hpp"

#include <algorithm>
#include <cmath>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

RenderedImage render_localizations(std::span<const Localization> locs, const RenderSettings& s) {
  if (!(s.pixel_nm > 0)) throw UsageError("--pixel", "the rendered pixel must be positive (nm)");
  if (!(s.camera_px_nm > 0)) throw UsageError("render", "the localizations' pixel size is unknown");
  RenderedImage img;
  const double field_w = static_cast<double>(s.field_width_px) * s.camera_px_nm;
  const double field_h = static_cast<double>(s.field_height_px) * s.camera_px_nm;
  img.width = static_cast<std::int64_t>(std::ceil(field_w / s.pixel_nm));
  img.height = static_cast<std::int64_t>(std::ceil(field_h / s.pixel_nm));
  if (img.width < 1 || img.height < 1 || img.width * img.height > (std::int64_t{1} << 31))
    throw UsageError("--pixel", "a " + std::to_string(img.width) + " x " + std::to_string(img.height) +
                                    " picture is not possible: choose a larger rendered pixel");
  img.pixels.assign(static_cast<std::size_t>(img.width * img.height), 0.0f);
  const double scale = s.camera_px_nm / s.pixel_nm;  // rendered pixels per camera pixel
  for (const Localization& l : locs) {
    // In rendered pixels from the frame's corner.
    const double u = (l.x + 0.5) * scale, v = (l.y + 0.5) * scale;
    if (!(u >= 0 && v >= 0 && u < static_cast<double>(img.width) && v < static_cast<double>(img.height))) continue;
    ++img.rendered;
    if (s.mode == RenderMode::histogram) {
      img.pixels[static_cast<std::size_t>(static_cast<std::int64_t>(v) * img.width + static_cast<std::int64_t>(u))] += 1;
      continue;
    }
    // Each axis' share of the unit mass per pixel: the Gaussian integrated over the pixel (erf differences),
    // within 4σ; what falls outside the field is lost, as for a histogram.
    const double sx = std::max(std::isfinite(l.lpx) ? l.lpx * scale : 0.0, 0.5);
    const double sy = std::max(std::isfinite(l.lpy) ? l.lpy * scale : 0.0, 0.5);
    const auto x0 = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(u - 4 * sx)));
    const auto x1 = std::min<std::int64_t>(img.width - 1, static_cast<std::int64_t>(std::floor(u + 4 * sx)));
    const auto y0 = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(v - 4 * sy)));
    const auto y1 = std::min<std::int64_t>(img.height - 1, static_cast<std::int64_t>(std::floor(v + 4 * sy)));
    const auto share = [](double a, double b, double centre, double sigma) {
      const double k = 1.0 / (std::sqrt(2.0) * sigma);
      return 0.5 * (std::erf((b - centre) * k) - std::erf((a - centre) * k));
    };
    std::vector<double> wx(static_cast<std::size_t>(x1 - x0 + 1));
    for (std::int64_t i = x0; i <= x1; ++i) wx[static_cast<std::size_t>(i - x0)] = share(i, i + 1, u, sx);
    for (std::int64_t j = y0; j <= y1; ++j) {
      const double wy = share(j, j + 1, v, sy);
      float* row = img.pixels.data() + j * img.width;
      for (std::int64_t i = x0; i <= x1; ++i) row[i] += static_cast<float>(wy * wx[static_cast<std::size_t>(i - x0)]);
    }
  }
  return img;
}

std::vector<float> preview_with_scale_bar(const RenderedImage& image, double pixel_nm, double& bar_nm) {
  std::vector<float> nonzero;
  for (float v : image.pixels)
    if (v > 0) nonzero.push_back(v);
  float top = 1;
  if (!nonzero.empty()) {
    const auto at = nonzero.begin() + static_cast<std::ptrdiff_t>(0.995 * static_cast<double>(nonzero.size() - 1));
    std::nth_element(nonzero.begin(), at, nonzero.end());
    top = *at > 0 ? *at : 1;
  }
  std::vector<float> out(image.pixels.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = std::min(image.pixels[i], top);
  // 1, 2 or 5 × 10ⁿ nm, the largest not above a fifth of the width.
  const double target = static_cast<double>(image.width) * pixel_nm / 5;
  bar_nm = std::pow(10.0, std::floor(std::log10(std::max(target, 1.0))));
  for (double m : {5.0, 2.0})
    if (bar_nm * m <= target) {
      bar_nm *= m;
      break;
    }
  const auto length = static_cast<std::int64_t>(std::lround(bar_nm / pixel_nm));
  const std::int64_t thick = std::max<std::int64_t>(1, image.height / 100);
  const std::int64_t margin = std::max<std::int64_t>(1, image.width / 40);
  for (std::int64_t j = image.height - margin - thick; j < image.height - margin; ++j)
    for (std::int64_t i = image.width - margin - length; i < image.width - margin; ++i)
      if (i >= 0 && j >= 0) out[static_cast<std::size_t>(j * image.width + i)] = top;
  return out;
}

}  // namespace nanoscopy
