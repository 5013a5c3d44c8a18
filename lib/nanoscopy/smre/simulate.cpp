#include "nanoscopy/smre/simulate.hpp"

#include <cmath>
#include <random>

#include "nanoscopy/smre/runner.hpp"

namespace nanoscopy {

void blur_and_add_noise(std::span<float> frame, std::int64_t w, std::int64_t h, double psf_sigma, double noise_sigma,
                        std::uint64_t seed) {
  const Padding pad = smre_padding(w, h, psf_sigma);
  const PsfKernel k = make_psf_kernel(psf_sigma);
  std::vector<float> padded(static_cast<std::size_t>(pad.padded_width * pad.padded_height)), blurred(padded.size()),
      scratch;
  pad_reflect(frame, pad, padded);
  apply_psf(k, padded, blurred, pad.padded_width, pad.padded_height, scratch);
  crop(blurred, pad, frame);
  if (noise_sigma > 0) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> noise(0.0f, static_cast<float>(noise_sigma));
    for (float& v : frame) v += noise(rng);
  }
}

double l2_distance(std::span<const float> a, std::span<const float> b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    s += d * d;
  }
  return std::sqrt(s);
}

std::vector<float> reflect_to_size(std::span<const float> src, std::int64_t sw, std::int64_t sh, std::int64_t w,
                                   std::int64_t h) {
  Padding p;
  p.width = sw;
  p.height = sh;
  p.padded_width = w;
  p.padded_height = h;
  std::vector<float> out(static_cast<std::size_t>(w * h));
  pad_reflect(src, p, out);
  return out;
}

}  // namespace nanoscopy
