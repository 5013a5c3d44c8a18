// The engine interface of fit2d render: accumulates localizations, chunk after
// chunk, into a density image (histogram counts or Gaussian mass per pixel)
// and, for the z colour, the density-weighted sum of z. The CPU reference and
// the CUDA engine (kernels/render) add the same mass to the same pixels
// (render_math.hpp); the driver (loc/render.hpp) turns localizations into
// RenderPoints, and the images into the picture.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "nanoscopy/loc/render/render_math.hpp"

namespace nanoscopy {

enum class RenderMode { histogram, gaussian };

struct RenderGeometry {
  std::int64_t width = 0, height = 0;  // rendered pixels (1 to 2^31 in all)
  RenderMode mode = RenderMode::gaussian;
  bool z_sum = false;  // also accumulate Σ mass · z per pixel (the z colour)
};

// UsageError naming `where` for a picture the engines cannot hold.
void validate_render_geometry(const RenderGeometry& g, const std::string& where);

class RenderEngine {
 public:
  virtual ~RenderEngine() = default;
  virtual std::string name() const = 0;
  const RenderGeometry& geometry() const { return geometry_; }

  // Room for `count` points, for the caller to fill and pass to add(): the
  // CUDA engine's is page-locked and double-buffered, so that filling the next
  // chunk overlaps the transfer and kernels of the previous one. Valid until
  // the next call of buffer().
  virtual std::span<render_math::RenderPoint> buffer(std::size_t count) = 0;
  // Adds the mass of the points inside the picture (from buffer() or any memory).
  virtual void add(std::span<const render_math::RenderPoint> points) = 0;
  // The sums so far: density (width * height) and, with z_sum, Σ mass · z (else
  // left alone; may be empty). Waits for the work added.
  virtual void read(std::span<float> density, std::span<float> z_sum) = 0;

 protected:
  explicit RenderEngine(const RenderGeometry& g) : geometry_(g) {}
  RenderGeometry geometry_;
};

// The CPU reference: the shares in double, summed in double per pixel, one thread.
std::unique_ptr<RenderEngine> make_cpu_render_engine(const RenderGeometry& geometry);

}  // namespace nanoscopy
