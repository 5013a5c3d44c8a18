// The CPU reference engine of decorrelation analysis: apodization and an FFTW
// real-to-complex transform in double, then per pass one sweep over the half
// spectrum into radius-bin histograms (decorr_math.hpp), in double.
#include <fftw3.h>

#include <cmath>
#include <mutex>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/frc/decorr.hpp"
#include "nanoscopy/frc/decorr_math.hpp"
#include "nanoscopy/frc/fftw_lock.hpp"
#include "nanoscopy/frc/frc_math.hpp"

namespace nanoscopy {
namespace {

struct FftwFree {
  void operator()(void* p) const { fftw_free(p); }
};

class CpuDecorrEngine final : public DecorrEngine {
 public:
  explicit CpuDecorrEngine(const DecorrGeometry& g)
      : DecorrEngine(g),
        wx_(decorr_apodization(g.width, g.apodization_px)),
        wy_(decorr_apodization(g.height, g.apodization_px)),
        columns_(g.width / 2 + 1),
        image_(static_cast<std::size_t>(g.width * g.height)) {
    in_.reset(static_cast<double*>(fftw_malloc(image_.size() * sizeof(double))));
    out_.reset(
        static_cast<fftw_complex*>(fftw_malloc(static_cast<std::size_t>(g.height * columns_) * sizeof(fftw_complex))));
    if (!in_ || !out_)
      throw InputError("decorr",
                       "out of memory for a " + std::to_string(g.width) + "x" + std::to_string(g.height) + " FFT");
    std::lock_guard lock(fftw_planner_mutex());
    plan_ = fftw_plan_dft_r2c_2d(static_cast<int>(g.height), static_cast<int>(g.width), in_.get(), out_.get(),
                                 FFTW_ESTIMATE);
    if (!plan_) throw InputError("decorr", "FFTW could not plan the transform");
  }
  ~CpuDecorrEngine() override {
    std::lock_guard lock(fftw_planner_mutex());
    fftw_destroy_plan(plan_);
  }
  CpuDecorrEngine(const CpuDecorrEngine&) = delete;
  CpuDecorrEngine& operator=(const CpuDecorrEngine&) = delete;

  std::string name() const override { return std::string("cpu (FFTW ") + fftw_version + ")"; }

  void upload(std::span<const float> image) override {
    if (image.size() != image_.size())
      throw InputError("decorr", "an image of " + std::to_string(image.size()) + " pixels, the engine is planned for " +
                                     std::to_string(image_.size()));
    std::copy(image.begin(), image.end(), image_.begin());
  }

  void transform() override {
    const std::int64_t w = geometry_.width, h = geometry_.height;
    double mean = 0;
    for (float v : image_) mean += v;
    mean /= static_cast<double>(image_.size());
    double* in = in_.get();
    for (std::int64_t y = 0; y < h; ++y)
      for (std::int64_t x = 0; x < w; ++x) {
        const auto i = static_cast<std::size_t>(y * w + x);
        in[i] = (static_cast<double>(image_[i]) - mean) * wy_[static_cast<std::size_t>(y)] *
                wx_[static_cast<std::size_t>(x)];
      }
    fftw_execute(plan_);
  }

  DecorrSums sums(const DecorrPass& pass) override {
    const std::int64_t w = geometry_.width, h = geometry_.height;
    const int nr = pass.nr, nf = static_cast<int>(pass.g.size());
    DecorrSums s;
    s.count.assign(static_cast<std::size_t>(nr), 0.0);
    s.amplitude.assign(static_cast<std::size_t>(nr * nf), 0.0);
    s.power.assign(static_cast<std::size_t>(nf), 0.0);
    std::vector<double> two_g2(static_cast<std::size_t>(nf));
    for (int f = 0; f < nf; ++f) {
      const double g = pass.g[static_cast<std::size_t>(f)];
      two_g2[static_cast<std::size_t>(f)] = g > 0 ? 2 * g * g : -1.0;
    }
    const double inv_hx = 1.0 / static_cast<double>(w / 2), inv_hy = 1.0 / static_cast<double>(h / 2);
    const double step = (pass.r_max - pass.r_min) / (nr - 1);
    const double inv_step = step > 0 ? 1.0 / step : 0.0;
    const fftw_complex* f = out_.get();
    for (std::int64_t y = 0; y < h; ++y) {
      const std::int64_t ky = frc_math::signed_frequency(y, h);
      for (std::int64_t c = 0; c < columns_; ++c) {
        if (c == 0 && ky == 0) continue;  // the mean
        const double r2 = decorr_math::radius2<double>(c, ky, inv_hx, inv_hy);
        if (!(r2 < 1.0)) continue;
        const auto i = static_cast<std::size_t>(y * columns_ + c);
        const double p = f[i][0] * f[i][0] + f[i][1] * f[i][1];
        if (!(p > 0)) continue;
        const double a = std::sqrt(p), weight = decorr_math::half_weight(c, w);
        const int b = decorr_math::radius_bin<double>(std::sqrt(r2), pass.r_min, inv_step, nr);
        if (b < nr) s.count[static_cast<std::size_t>(b)] += weight;
        for (int k = 0; k < nf; ++k) {
          const double q = decorr_math::highpass_weight<double>(two_g2[static_cast<std::size_t>(k)], r2);
          s.power[static_cast<std::size_t>(k)] += weight * p * q * q;
          if (b < nr) s.amplitude[static_cast<std::size_t>(k * nr + b)] += weight * a * q;
        }
      }
    }
    return s;
  }

 private:
  std::vector<double> wx_, wy_;
  std::int64_t columns_;
  std::vector<float> image_;
  std::unique_ptr<double, FftwFree> in_;
  std::unique_ptr<fftw_complex, FftwFree> out_;
  fftw_plan plan_ = nullptr;
};

}  // namespace

std::unique_ptr<DecorrEngine> make_cpu_decorr_engine(const DecorrGeometry& geometry) {
  check_decorr_geometry(geometry);
  return std::make_unique<CpuDecorrEngine>(geometry);
}

}  // namespace nanoscopy
