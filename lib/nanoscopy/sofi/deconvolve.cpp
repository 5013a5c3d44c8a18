#include "nanoscopy/sofi/deconvolve.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

std::vector<double> integrated_psf_profile(double sigma) {
  const int radius = static_cast<int>(std::ceil(4 * sigma)) + 1;
  std::vector<double> u(static_cast<std::size_t>(2 * radius + 1));
  const double s = std::sqrt(2.0) * sigma;
  for (int i = -radius; i <= radius; ++i)
    u[static_cast<std::size_t>(i + radius)] = 0.5 * (std::erf((i + 0.5) / s) - std::erf((i - 0.5) / s));
  return u;
}

PsfKernel order_psf_kernel(double sigma, int order) {
  const auto u = integrated_psf_profile(sigma);
  const int full = static_cast<int>(u.size() / 2);
  PsfKernel k;
  k.sigma = sigma / std::sqrt(static_cast<double>(order));
  // u^n is a Gaussian of sigma / sqrt(n): cut it at 4 of its own sigmas (as make_psf_kernel
  // cuts the camera PSF), which saves a third to half of the taps at orders 2-4.
  k.radius = std::min(full, static_cast<int>(std::ceil(4 * k.sigma)) + 1);
  double sum = 0;
  for (int i = -k.radius; i <= k.radius; ++i) sum += std::pow(u[static_cast<std::size_t>(i + full)], order);
  for (int i = -k.radius; i <= k.radius; ++i)
    k.taps.push_back(static_cast<float>(std::pow(u[static_cast<std::size_t>(i + full)], order) / sum));
  return k;
}

double order_psf_mass(double sigma, int order) {
  double sum = 0;
  for (double v : integrated_psf_profile(sigma)) sum += std::pow(v, order);
  return sum * sum;
}

namespace {

// A reflection-padded copy and its way back.
struct Padded {
  Padding pad;
  std::vector<float> pixels;
  Padded(std::span<const float> image, std::int64_t w, std::int64_t h, int radius)
      : pad(plan_padding(w, h, 3 * std::max(radius, 1), 1)),
        pixels(static_cast<std::size_t>(pad.padded_width * pad.padded_height)) {
    pad_reflect(image, pad, pixels);
  }
  std::int64_t w() const { return pad.padded_width; }
  std::int64_t h() const { return pad.padded_height; }
};

}  // namespace

class CpuDeconvolveEngine final : public DeconvolveEngine {
 public:
  std::string name() const override { return "cpu"; }
  void iterate(std::span<const float> y, std::span<float> x, std::int64_t w, std::int64_t h, const PsfKernel& kernel,
               int iterations, float floor) override {
    std::copy(y.begin(), y.end(), x.begin());
    ax_.resize(x.size());
    ratio_.resize(x.size());
    for (int it = 0; it < iterations; ++it) {
      apply_psf(kernel, x, ax_, w, h, scratch_);
      for (std::size_t i = 0; i < x.size(); ++i) ratio_[i] = ax_[i] > floor ? y[i] / ax_[i] : 0.0f;
      apply_psf_adjoint(kernel, ratio_, ax_, w, h, scratch_);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] *= ax_[i];
    }
  }

 private:
  std::vector<float> ax_, ratio_, scratch_;
};

std::unique_ptr<DeconvolveEngine> make_cpu_deconvolve_engine() { return std::make_unique<CpuDeconvolveEngine>(); }

void richardson_lucy(std::span<float> image, std::int64_t width, std::int64_t height, const PsfKernel& kernel,
                     int iterations, DeconvolveEngine& engine) {
  for (float v : image)
    if (!(v >= 0) || !std::isfinite(v))
      throw InputError("deconvolution", "Richardson-Lucy needs a finite, non-negative image");
  const float peak = image.empty() ? 0.0f : *std::max_element(image.begin(), image.end());
  if (peak <= 0) return;  // nothing to sharpen
  Padded y(image, width, height, kernel.radius);
  std::vector<float> x(y.pixels.size());
  // A x below this is taken as no light: y / A x there is 0 (y is 0 there too, up to rounding).
  engine.iterate(y.pixels, x, y.w(), y.h(), kernel, iterations, peak * 1e-12f);
  crop(x, y.pad, image);
}

void richardson_lucy(std::span<float> image, std::int64_t width, std::int64_t height, const PsfKernel& kernel,
                     int iterations) {
  CpuDeconvolveEngine cpu;
  richardson_lucy(image, width, height, kernel, iterations, cpu);
}

void convolve_reflect(std::span<float> image, std::int64_t width, std::int64_t height, const PsfKernel& kernel) {
  Padded p(image, width, height, kernel.radius);
  std::vector<float> out(p.pixels.size()), scratch;
  apply_psf(kernel, p.pixels, out, p.w(), p.h(), scratch);
  crop(out, p.pad, image);
}

}  // namespace nanoscopy
