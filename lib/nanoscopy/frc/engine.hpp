// The engine interface of FRC: "window, FFT, ring sums" of two images
// (notes/reference.md 6). The CPU engine (engine_cpu.cpp, FFTW) is the
// reference; the CUDA engine (kernels/frc/engine_cuda.cpp, cuFFT) matches it.
// What both compute:
//   Both images are multiplied by the same Tukey window (cosine taper over the
//   outer `tukey_fraction` of each side, flat inside) and transformed at their
//   own size: no power-of-two padding, which would change the rings' width and
//   make the result jump between neighbouring sizes (256 vs 257 px). The mean
//   is not subtracted: the window already takes the edges away, and the mean
//   only lifts the lowest rings, which are correlated in both images anyway and
//   which the crossing rule skips. Then per ring: Re sum F1 F2*, sum |F1|^2,
//   sum |F2|^2. Rings, their frequencies and the per-coefficient terms: frc_math.hpp.
// The curve, the threshold and the crossing are computed from the sums on the
// host (frc.hpp: frc_from_sums).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace nanoscopy {

// What an engine is planned for: images of width x height pixels (row-major,
// row y at y * width), windowed with a Tukey window of this taper fraction
// per side (0: no window; at most 0.5).
struct FrcGeometry {
  std::int64_t width = 0, height = 0;
  double tukey_fraction = 0.125;
  std::int64_t side() const { return width < height ? width : height; }  // N
  std::int64_t rings() const { return side() / 2 + 1; }                  // rings 0 .. N/2
};

// The Tukey window of length n (values in [0, 1]): 1 inside, a half cosine
// rising from 0 over the first and falling to 0 over the last
// round(fraction * n) samples. Both images are multiplied by w[x] w[y].
std::vector<double> tukey_window(std::int64_t n, double fraction);

// Per ring r = 0 .. N/2, sums over the ring's coefficients of the whole
// (two-sided) spectrum, in double.
struct FrcRingSums {
  std::vector<double> cross;         // Re F1 F2*
  std::vector<double> power1;        // |F1|^2
  std::vector<double> power2;        // |F2|^2
  std::vector<std::int64_t> pixels;  // n_r: coefficients in the ring
  std::vector<double> radius;        // the mean normalized radius |k| of those coefficients (frc_ring_radii)
};

// n_r of every ring, counted over the W x H spectrum.
std::vector<std::int64_t> frc_ring_pixels(std::int64_t width, std::int64_t height);
// The mean normalized radius |k| (frc_math.hpp) of every ring's coefficients over
// the W x H spectrum: ring r is labelled rbar_r / N cycles per pixel.
std::vector<double> frc_ring_radii(std::int64_t width, std::int64_t height);

// The engine's one operation. An engine is planned for one geometry and is
// reused for many image pairs (bench, many pages); not thread-safe.
class FrcEngine {
 public:
  virtual ~FrcEngine() = default;
  virtual std::string name() const = 0;  // "cpu (FFTW 3.3.10)", "cuda:0 (NVIDIA H100)"
  const FrcGeometry& geometry() const { return geometry_; }
  // Window, FFT and ring sums of two images of the planned size
  // (width * height floats each; InputError otherwise).
  virtual FrcRingSums ring_sums(std::span<const float> a, std::span<const float> b) = 0;

 protected:
  explicit FrcEngine(const FrcGeometry& g) : geometry_(g) {}
  FrcGeometry geometry_;
};

// The CPU reference (FFTW, double, real-to-complex). UsageError for a bad geometry.
std::unique_ptr<FrcEngine> make_cpu_frc_engine(const FrcGeometry& geometry);

}  // namespace nanoscopy
