#include "nanoscopy/bench/sofi_truth.hpp"

#include <algorithm>
#include <cmath>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/frc/frc.hpp"

namespace nanoscopy {
namespace {

// w_n(ρ) of notes/reference.md 5 (n = 1: ρ, the mean).
double cumulant_factor(int n, double r) {
  switch (n) {
    case 1: return r;
    case 2: return r * (1 - r);
    case 3: return r * (1 - r) * (1 - 2 * r);
    case 4: return r * (1 - r) * (1 - 6 * r + 6 * r * r);
  }
  throw UsageError("truth", "an order outside 1..4");
}

// Integrals of a Gaussian (σ, centre mu) over the cells [c − h, c + h] of a grid: cell i's centre
// c = (i + 0.5) / u − 0.5 camera px, h = 0.5 / u.
std::vector<double> cell_integrals(std::int64_t n, int u, double mu, double sigma) {
  std::vector<double> v(static_cast<std::size_t>(n));
  const double s = std::sqrt(2.0) * sigma, h = 0.5 / u;
  for (std::int64_t i = 0; i < n; ++i) {
    const double c = (static_cast<double>(i) + 0.5) / u - 0.5 - mu;
    v[static_cast<std::size_t>(i)] = 0.5 * (std::erf((c + h) / s) - std::erf((c - h) / s));
  }
  return v;
}

}  // namespace

std::vector<float> sofi_truth_image(std::span<const BlinkingEmitter> emitters, std::int64_t width,
                                    std::int64_t height, int upsample, double psf_sigma_px, int order,
                                    TruthWeight weighting) {
  if (order < 1 || order > 4) throw UsageError("truth", "order " + std::to_string(order) + " (1..4)");
  if (!(psf_sigma_px > 0) || upsample < 1) throw UsageError("truth", "a PSF sigma > 0 and a grid factor >= 1");
  const double sigma = psf_sigma_px / std::sqrt(static_cast<double>(std::max(order, 1)));
  std::vector<double> image(static_cast<std::size_t>(width * height), 0.0);
  for (const auto& e : emitters) {
    const double weight = weighting == TruthWeight::linear
                              ? e.brightness
                              : std::pow(e.brightness, order) * cumulant_factor(order, e.on_fraction);
    if (weight == 0) continue;
    const auto gx = cell_integrals(width, upsample, e.x, sigma), gy = cell_integrals(height, upsample, e.y, sigma);
    for (std::int64_t y = 0; y < height; ++y) {
      const double wy = weight * gy[static_cast<std::size_t>(y)];
      if (std::abs(wy) < 1e-12 * std::abs(weight)) continue;
      for (std::int64_t x = 0; x < width; ++x)
        image[static_cast<std::size_t>(y * width + x)] += wy * gx[static_cast<std::size_t>(x)];
    }
  }
  return {image.begin(), image.end()};
}

TruthScore score_against_truth(std::span<const float> image, std::span<const float> truth, std::int64_t width,
                               std::int64_t height) {
  if (image.size() != truth.size() || image.size() != static_cast<std::size_t>(width * height))
    throw UsageError("truth", "the image and its truth differ in size");
  // Least squares t ≈ a x + b.
  const double n = static_cast<double>(image.size());
  double sx = 0, st = 0, sxx = 0, sxt = 0, stt = 0;
  for (std::size_t i = 0; i < image.size(); ++i) {
    const double x = image[i], t = truth[i];
    sx += x, st += t, sxx += x * x, sxt += x * t, stt += t * t;
  }
  TruthScore s;
  const double det = n * sxx - sx * sx;
  s.scale = det > 0 ? (n * sxt - sx * st) / det : 0.0;
  s.offset = (st - s.scale * sx) / n;
  double err = 0;
  for (std::size_t i = 0; i < image.size(); ++i) {
    const double r = s.scale * image[i] + s.offset - truth[i];
    err += r * r;
  }
  s.normalized_error = stt > 0 ? std::sqrt(err / stt) : 0.0;
  const auto frc = compute_frc(image, truth, FrcGeometry{width, height, 0.125}, parse_frc_threshold("0.5"));
  s.frc_status = to_string(frc.crossing.status);
  s.frc_resolution_px = frc.crossing.resolution_px;
  return s;
}

}  // namespace nanoscopy
