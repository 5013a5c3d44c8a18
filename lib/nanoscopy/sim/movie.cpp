#include "nanoscopy/sim/movie.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/image_writer.hpp"

namespace nanoscopy {
namespace {

// Fraction of a unit Gaussian of std `sigma` centred at `mu` that falls in pixel i.
double pixel_integral(std::int64_t i, double mu, double sigma) {
  const double s = std::sqrt(2.0) * sigma;
  return 0.5 * (std::erf((static_cast<double>(i) - mu + 0.5) / s) - std::erf((static_cast<double>(i) - mu - 0.5) / s));
}

}  // namespace

std::vector<EmitterTruth> simulate_movie(const MovieSettings& m, const std::string& path) {
  std::mt19937_64 rng(m.seed);
  const double margin = 2.0 * m.psf_sigma;
  std::uniform_real_distribution<double> ux(margin, static_cast<double>(m.width) - 1 - margin);
  std::uniform_real_distribution<double> uy(margin, static_cast<double>(m.height) - 1 - margin);
  struct Emitter {
    double x, y;
    bool on;
    bool marker;
  };
  std::vector<Emitter> emitters(static_cast<std::size_t>(m.emitters));
  std::bernoulli_distribution starts_on(m.on_fraction);
  if (m.structure == "grid") {
    // As square a grid as the frame allows, cells filled in row order.
    const double w = static_cast<double>(m.width) - 1 - 2 * margin, h = static_cast<double>(m.height) - 1 - 2 * margin;
    const int cols = std::max(1, static_cast<int>(std::ceil(std::sqrt(m.emitters * w / std::max(h, 1.0)))));
    const int rows = std::max(1, (m.emitters + cols - 1) / cols);
    for (int k = 0; k < m.emitters; ++k)
      emitters[static_cast<std::size_t>(k)] = {margin + w * (k % cols + 0.5) / cols, margin + h * (k / cols + 0.5) / rows,
                                               starts_on(rng), false};
  } else if (m.structure == "random") {
    for (auto& e : emitters) e = {ux(rng), uy(rng), starts_on(rng), false};
  } else {
    throw UsageError("--structure", "unknown structure '" + m.structure + "' (random or grid)");
  }
  for (int k = 0; k < m.markers; ++k) emitters.push_back({ux(rng), uy(rng), true, true});
  // Two-state Markov blinking with the requested duty cycle and on-period length.
  const double p_off = 1.0 / std::max(1.0, m.mean_on_frames);
  const double p_on = std::clamp(p_off * m.on_fraction / std::max(1e-9, 1.0 - m.on_fraction), 0.0, 1.0);

  ImageMeta meta;
  meta.width = m.width;
  meta.height = m.height;
  meta.frames = m.frames;
  meta.type = PixelType::u16;
  meta.pixel_size_nm = m.pixel_size_nm;
  meta.software = "nanoscopy simulate movie";
  auto writer = create_image_writer(path, meta);

  std::vector<EmitterTruth> truth;
  std::vector<double> expected(static_cast<std::size_t>(m.width * m.height));
  std::vector<std::uint16_t> frame(expected.size());
  std::vector<double> px(static_cast<std::size_t>(m.width)), py(static_cast<std::size_t>(m.height));
  for (std::int64_t t = 0; t < m.frames; ++t) {
    std::fill(expected.begin(), expected.end(), m.background);
    const double shift_x = m.drift_x * static_cast<double>(t), shift_y = m.drift_y * static_cast<double>(t);
    for (auto& e : emitters) {
      if (t > 0 && !e.marker) e.on = e.on ? !std::bernoulli_distribution(p_off)(rng) : std::bernoulli_distribution(p_on)(rng);
      if (!e.on) continue;
      const double x = e.x + shift_x, y = e.y + shift_y;
      const double photons = e.marker ? m.photons * m.marker_brightness : m.photons;
      truth.push_back({t, x, y, photons});
      for (std::int64_t i = 0; i < m.width; ++i) px[static_cast<std::size_t>(i)] = pixel_integral(i, x, m.psf_sigma);
      for (std::int64_t j = 0; j < m.height; ++j) py[static_cast<std::size_t>(j)] = pixel_integral(j, y, m.psf_sigma);
      for (std::int64_t j = 0; j < m.height; ++j)
        for (std::int64_t i = 0; i < m.width; ++i)
          expected[static_cast<std::size_t>(j * m.width + i)] += photons * px[static_cast<std::size_t>(i)] * py[static_cast<std::size_t>(j)];
    }
    for (std::size_t k = 0; k < expected.size(); ++k) {
      const double electrons = static_cast<double>(std::poisson_distribution<std::int64_t>(expected[k])(rng));
      const double adu = std::round(m.baseline + electrons / m.sensitivity);
      frame[k] = static_cast<std::uint16_t>(std::clamp(adu, 0.0, 65535.0));
    }
    writer->write(frame.data(), 1);
  }
  writer->close();
  return truth;
}

}  // namespace nanoscopy
