// The CPU reference of the render engine: each point's mass in double (the
// shares of render_math.hpp at T = double), summed per pixel in double, so the
// float of the CUDA engine is compared with sums that have no rounding of their own.
#include <algorithm>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/loc/render/engine.hpp"

namespace nanoscopy {
namespace {

using render_math::RenderPoint;

const RenderGeometry& checked(const RenderGeometry& g) {
  validate_render_geometry(g, "render");
  return g;
}

class CpuRenderEngine final : public RenderEngine {
 public:
  explicit CpuRenderEngine(const RenderGeometry& g)
      : RenderEngine(checked(g)),
        density_(static_cast<std::size_t>(g.width * g.height), 0.0),
        z_sum_(g.z_sum ? density_.size() : 0, 0.0) {}

  std::string name() const override { return "cpu"; }

  std::span<RenderPoint> buffer(std::size_t count) override {
    buffer_.resize(count);
    return buffer_;
  }

  void add(std::span<const RenderPoint> points) override {
    const std::int64_t w = geometry_.width, h = geometry_.height;
    std::vector<double> wx;
    for (const RenderPoint& p : points) {
      if (!render_math::inside(p, w, h)) continue;
      if (geometry_.mode == RenderMode::histogram) {
        deposit(static_cast<std::size_t>(render_math::histogram_index(p, w, h)), 1.0, p.z);
        continue;
      }
      const render_math::Footprint f = render_math::footprint(p, w, h);
      wx.resize(static_cast<std::size_t>(f.x1 - f.x0 + 1));
      for (std::int64_t i = f.x0; i <= f.x1; ++i)
        wx[static_cast<std::size_t>(i - f.x0)] = render_math::pixel_share<double>(
            static_cast<double>(i), static_cast<double>(i + 1), p.u, p.sigma_u);
      for (std::int64_t j = f.y0; j <= f.y1; ++j) {
        const double wy = render_math::pixel_share<double>(static_cast<double>(j), static_cast<double>(j + 1), p.v,
                                                           p.sigma_v);
        for (std::int64_t i = f.x0; i <= f.x1; ++i)
          deposit(static_cast<std::size_t>(j * w + i), wy * wx[static_cast<std::size_t>(i - f.x0)], p.z);
      }
    }
  }

  void read(std::span<float> density, std::span<float> z_sum) override {
    if (density.size() != density_.size() || (geometry_.z_sum && z_sum.size() != z_sum_.size()))
      throw UsageError("render", "read into images of the wrong size");
    std::transform(density_.begin(), density_.end(), density.begin(), [](double v) { return static_cast<float>(v); });
    if (geometry_.z_sum)
      std::transform(z_sum_.begin(), z_sum_.end(), z_sum.begin(), [](double v) { return static_cast<float>(v); });
  }

 private:
  void deposit(std::size_t i, double mass, float z) {
    density_[i] += mass;
    if (geometry_.z_sum) z_sum_[i] += mass * static_cast<double>(z);
  }

  std::vector<double> density_, z_sum_;
  std::vector<RenderPoint> buffer_;
};

}  // namespace

void validate_render_geometry(const RenderGeometry& g, const std::string& where) {
  if (g.width < 1 || g.height < 1 || g.width > (std::int64_t{1} << 31) / g.height)
    throw UsageError(where, "a " + std::to_string(g.width) + " x " + std::to_string(g.height) +
                                " picture is not possible: choose a larger rendered pixel");
}

std::unique_ptr<RenderEngine> make_cpu_render_engine(const RenderGeometry& geometry) {
  return std::make_unique<CpuRenderEngine>(geometry);
}

}  // namespace nanoscopy
