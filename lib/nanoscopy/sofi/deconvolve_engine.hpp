// The iterations of Richardson-Lucy (deconvolve.hpp) on a backend: the CPU
// reference below and the CUDA engine (kernels/sofi/deconvolve_engine_cuda.cpp),
// so that sofi --balanced deconvolves where its cumulants were computed.
// richardson_lucy() checks the image and pads it by reflection; an engine only
// iterates on the padded image.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "nanoscopy/smre/psf.hpp"

namespace nanoscopy {

class DeconvolveEngine {
 public:
  virtual ~DeconvolveEngine() = default;
  virtual std::string name() const = 0;
  // x <- x * A^T (y / A x), `iterations` times from x = y, on one w x h image (zero outside it);
  // where A x <= floor the ratio is 0 (no light there).
  virtual void iterate(std::span<const float> y, std::span<float> x, std::int64_t width, std::int64_t height,
                       const PsfKernel& kernel, int iterations, float floor) = 0;
};

// The reference: smre/psf.cpp's apply_psf and apply_psf_adjoint (OpenMP over rows for large images).
std::unique_ptr<DeconvolveEngine> make_cpu_deconvolve_engine();

}  // namespace nanoscopy
