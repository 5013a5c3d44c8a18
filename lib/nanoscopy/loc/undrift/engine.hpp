// The engine interface of redundant cross-correlation (RCC, fit2d undrift): the
// FFT part, behind which a cuFFT engine can replace the CPU one (FFTW). An
// engine is planned for one grid; it transforms each time segment's histogram
// once and keeps its spectrum, then answers pairs (i, j) with the maximum of
// their cross-correlation and a small window of values around it. A segment
// comes as its localizations on the grid (add_segment_points: the engine renders
// the bilinear histogram where it transforms it, on the GPU for cuFFT) or as a
// ready image (add_segment). Everything else (the sub-pixel fit, the
// least-squares solve, interpolation) is host code shared by every engine
// (rcc.hpp).
//
// What every engine computes, for segments i < j with histograms A_i, A_j:
//   C(s) = Σ_p A_i(p) A_j(p + s) = IFFT(conj(F_i) F_j), blurred by a Gaussian of
//   σ = blur_px (a product with its transfer function, free in Fourier space:
//   sparse histograms give spiky correlations, and the sub-pixel fit needs a
//   peak sampled by a few pixels). A drift d moves A_j to A_i(p − d), so C
//   peaks at s = d_j − d_i. The maximum is searched over |s_x|, |s_y| ≤
//   max_shift_px (the grid is padded by that much, so the circular correlation
//   does not wrap within the search range).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/loc/undrift/rcc_math.hpp"

namespace nanoscopy {

struct CorrelationGeometry {
  std::int64_t width = 0, height = 0;  // grid pixels (row-major, row y at y * width)
  double blur_px = 1.0;                // σ of the Gaussian applied to the correlation (≥ 0)
  std::int64_t max_shift_px = 0;       // search radius of the maximum, grid pixels (≥ 1, < half the grid)
};

// UsageError naming `where` for a grid, blur or search radius the engines cannot plan.
void validate_correlation_geometry(const CorrelationGeometry& g, const std::string& where);

// The smallest n' ≥ n whose prime factors are 2, 3, 5 and 7 (FFTW's fast sizes), for grid sides.
std::int64_t correlation_fft_size(std::int64_t n);

struct SegmentPair {
  std::int64_t i = 0, j = 0;
};

// The correlation's maximum: its integer shift s = (shift_x, shift_y) and the
// values at s + (u, v), u, v in [−radius, radius] (row-major, v outer).
struct CorrelationPeak {
  static constexpr int radius = 2;
  static constexpr int side = 2 * radius + 1;
  std::int64_t shift_x = 0, shift_y = 0;
  std::array<double, side * side> window{};
  bool found = false;  // false: the correlation is zero in the search range (an empty segment)
  double at(int u, int v) const { return window[static_cast<std::size_t>((v + radius) * side + u + radius)]; }
};

class CorrelationEngine {
 public:
  virtual ~CorrelationEngine() = default;
  virtual std::string name() const = 0;  // "cpu (FFTW 3.3.10, 2 threads)"
  const CorrelationGeometry& geometry() const { return geometry_; }

  // Transforms one segment's histogram (width * height values; InputError
  // otherwise) and keeps its spectrum. Segments are numbered 0, 1, … in the
  // order they are added.
  virtual void add_segment(std::span<const float> image) = 0;
  // The same for the bilinear histogram of `points` (rcc_math::bilinear_deposit;
  // points whose four pixels are not all on the grid are left out).
  virtual void add_segment_points(std::span<const rcc_math::GridPoint> points) = 0;
  virtual std::int64_t segments() const = 0;
  // Bytes held for the spectra (the run's memory grows with the segments).
  virtual std::size_t spectrum_bytes() const = 0;

  // The peaks of pairs[k] into peaks[k] (same length). Batched, so that a GPU
  // runs many at once and the CPU spreads them over its threads.
  virtual void correlate(std::span<const SegmentPair> pairs, std::span<CorrelationPeak> peaks) = 0;

 protected:
  explicit CorrelationEngine(const CorrelationGeometry& g) : geometry_(g) {}
  CorrelationGeometry geometry_;
};

// The blur's transfer function exp(−2π² σ² (k/n)²) for the signed frequencies k
// of an axis of n samples, the first `count` of them (computed once on the host,
// so that every engine multiplies by the same float values).
std::vector<float> correlation_blur_transfer(std::int64_t n, std::int64_t count, double sigma);

// The bilinear histogram of `points` on the geometry's grid into `image`
// (width * height values, zeroed first): the CPU engine's rendering.
void render_segment_points(std::span<const rcc_math::GridPoint> points, const CorrelationGeometry& geometry,
                           std::span<float> image);

// The CPU reference: FFTW in single precision (real-to-complex; one forward
// and one inverse plan, executed on per-thread buffers), `threads` ≥ 1.
std::unique_ptr<CorrelationEngine> make_cpu_correlation_engine(const CorrelationGeometry& geometry, int threads);

}  // namespace nanoscopy
