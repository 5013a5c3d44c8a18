// Fourier ring correlation of two images of the same sample with independent
// noise (notes/reference.md 6):
//   FRC(r) = Re sum_{k in ring r} F1 F2* / sqrt(sum |F1|^2 sum |F2|^2)
// Both images are multiplied by the same Tukey window (cosine taper over the
// outer `tukey_fraction` of each side, flat inside) and transformed at their
// own size: no power-of-two padding, which would change the rings' width and
// make the result jump between neighbouring sizes (256 vs 257 px). The mean
// is not subtracted: the window already takes the edges away, and the mean
// only lifts the lowest rings, which are correlated in both images anyway and
// which the crossing rule skips. Rings and their frequencies: frc_math.hpp.
//
// The work "window, FFT, ring sums" is the backend's (FrcBackend: the CPU
// reference with FFTW here, cuFFT in kernels/frc); the curve, the threshold and
// the crossing are computed from the sums on the host (frc_from_sums).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/frc/threshold.hpp"

namespace nanoscopy {

struct Device;

// What a backend is planned for: images of width x height pixels (row-major,
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
};

// n_r of every ring, counted over the W x H spectrum.
std::vector<std::int64_t> frc_ring_pixels(std::int64_t width, std::int64_t height);

// The backend's one operation. A backend is planned for one geometry and is
// reused for many image pairs (bench, many pages); not thread-safe.
class FrcBackend {
 public:
  virtual ~FrcBackend() = default;
  virtual std::string name() const = 0;  // "cpu (FFTW 3.3.10)", "cuda:0 (NVIDIA H100)"
  const FrcGeometry& geometry() const { return geometry_; }
  // Window, FFT and ring sums of two images of the planned size
  // (width * height floats each; InputError otherwise).
  virtual FrcRingSums ring_sums(std::span<const float> a, std::span<const float> b) = 0;

 protected:
  explicit FrcBackend(const FrcGeometry& g) : geometry_(g) {}
  FrcGeometry geometry_;
};

// The CPU reference (FFTW, double, real-to-complex). UsageError for a bad geometry.
std::unique_ptr<FrcBackend> make_cpu_frc_backend(const FrcGeometry& geometry);
// By the device (backend/registry.cpp): CPU, or CUDA on the device's first GPU.
std::unique_ptr<FrcBackend> make_frc_backend(const Device& device, const FrcGeometry& geometry);

struct FrcPoint {
  std::int64_t ring = 0;
  double frequency = 0;  // cycles per pixel: ring / N
  double frc = 0;        // 0 where a ring has no power in one of the images
  std::int64_t pixels = 0;
  double threshold = 0;
};

// Where the curve first falls below the threshold.
//  Rule: ring 0 (the mean and the window's own spectrum) is skipped; starting
//  at ring 1 the curve must first be at or above the threshold (k-sigma
//  thresholds exceed 1 in the first rings, where n_r is small), and the
//  crossing lies between the last ring r-1 at or above it and the first ring r
//  below it, at r_c = r - 1 + d(r-1) / (d(r-1) - d(r)), d = FRC - T (linear
//  interpolation). Resolution = N / r_c pixels.
struct FrcCrossing {
  enum class Status {
    crossed,      // found at ring_c
    not_reached,  // the curve stays above the threshold up to N/2: resolution is the Nyquist limit, 2 px
    never_above,  // the curve never rises above the threshold: no resolution can be given
  };
  Status status = Status::never_above;
  double ring = 0;           // r_c (crossed), N/2 (not_reached), 0 (never_above)
  double frequency = 0;      // r_c / N cycles per pixel
  double resolution_px = 0;  // N / r_c; 2 when not reached; 0 when never above
};
const char* to_string(FrcCrossing::Status status);  // "crossed", "not reached", "never above"

struct FrcResult {
  std::int64_t width = 0, height = 0, side = 0;  // side = N
  FrcThreshold threshold;
  std::vector<FrcPoint> curve;  // rings 0 .. N/2
  FrcCrossing crossing;
};

// The curve and the crossing from a backend's sums.
FrcResult frc_from_sums(const FrcRingSums& sums, const FrcGeometry& geometry, const FrcThreshold& threshold);
// The crossing of a curve (rule above).
FrcCrossing find_crossing(std::span<const FrcPoint> curve, std::int64_t side);

// One pair through a backend.
FrcResult compute_frc(FrcBackend& backend, std::span<const float> a, std::span<const float> b,
                      const FrcThreshold& threshold);
// One pair on the CPU reference.
FrcResult compute_frc(std::span<const float> a, std::span<const float> b, const FrcGeometry& geometry,
                      const FrcThreshold& threshold);

}  // namespace nanoscopy
