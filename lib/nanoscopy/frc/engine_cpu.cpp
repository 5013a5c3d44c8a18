// The CPU reference engine: window in double, FFTW real-to-complex transforms
// of both images (one plan, two transforms), ring sums over the half spectrum
// with the Hermitian weights of frc_math.hpp.
#include <fftw3.h>

#include <mutex>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/frc/engine.hpp"
#include "nanoscopy/frc/frc_math.hpp"
#include "nanoscopy/frc/fftw_lock.hpp"
#include "nanoscopy/frc/frc_validate.hpp"

namespace nanoscopy {
namespace {

struct FftwFree {
  void operator()(void* p) const { fftw_free(p); }
};

class CpuFrcEngine final : public FrcEngine {
 public:
  explicit CpuFrcEngine(const FrcGeometry& g)
      : FrcEngine(g),
        wx_(tukey_window(g.width, g.tukey_fraction)),
        wy_(tukey_window(g.height, g.tukey_fraction)),
        pixels_(frc_ring_pixels(g.width, g.height)),
        radii_(frc_ring_radii(g.width, g.height)),
        columns_(g.width / 2 + 1) {
    const std::size_t real = static_cast<std::size_t>(g.width * g.height);
    const std::size_t complex = static_cast<std::size_t>(g.height * columns_);
    in_.reset(static_cast<double*>(fftw_malloc(2 * real * sizeof(double))));
    out_.reset(static_cast<fftw_complex*>(fftw_malloc(2 * complex * sizeof(fftw_complex))));
    if (!in_ || !out_)
      throw InputError("frc",
                       "out of memory for a " + std::to_string(g.width) + "x" + std::to_string(g.height) + " FFT");
    const int n[2] = {static_cast<int>(g.height), static_cast<int>(g.width)};
    std::lock_guard lock(fftw_planner_mutex());
    plan_ = fftw_plan_many_dft_r2c(2, n, 2, in_.get(), nullptr, 1, static_cast<int>(real), out_.get(), nullptr, 1,
                                   static_cast<int>(complex), FFTW_ESTIMATE);
    if (!plan_) throw InputError("frc", "FFTW could not plan the transform");
  }
  ~CpuFrcEngine() override {
    std::lock_guard lock(fftw_planner_mutex());
    fftw_destroy_plan(plan_);
  }
  CpuFrcEngine(const CpuFrcEngine&) = delete;
  CpuFrcEngine& operator=(const CpuFrcEngine&) = delete;

  std::string name() const override { return std::string("cpu (FFTW ") + fftw_version + ")"; }

  FrcRingSums ring_sums(std::span<const float> a, std::span<const float> b) override {
    const std::int64_t w = geometry_.width, h = geometry_.height;
    check_frc_inputs(a, b, geometry_);
    double* in = in_.get();
    const std::size_t real = static_cast<std::size_t>(w * h);
    for (std::int64_t y = 0; y < h; ++y)
      for (std::int64_t x = 0; x < w; ++x) {
        const auto i = static_cast<std::size_t>(y * w + x);
        const double win = frc_math::window_weight(wx_.data(), wy_.data(), x, y);
        in[i] = static_cast<double>(a[i]) * win;
        in[real + i] = static_cast<double>(b[i]) * win;
      }
    fftw_execute(plan_);

    const std::int64_t last = frc_math::last_ring(w, h);
    FrcRingSums s;
    s.cross.assign(static_cast<std::size_t>(last + 1), 0.0);
    s.power1 = s.cross;
    s.power2 = s.cross;
    s.pixels = pixels_;
    s.radius = radii_;
    const fftw_complex* f1 = out_.get();
    const fftw_complex* f2 = f1 + static_cast<std::size_t>(h * columns_);
    for (std::int64_t y = 0; y < h; ++y) {
      const std::int64_t ky = frc_math::signed_frequency(y, h);
      for (std::int64_t c = 0; c < columns_; ++c) {
        const std::int64_t r = frc_math::ring_index(c, ky, w, h);
        if (r > last) continue;
        const double weight = frc_math::half_spectrum_weight(c, w);
        const auto i = static_cast<std::size_t>(y * columns_ + c);
        const frc_math::RingTerms t = frc_math::ring_terms(f1[i][0], f1[i][1], f2[i][0], f2[i][1], weight);
        const auto ri = static_cast<std::size_t>(r);
        s.cross[ri] += t.cross;
        s.power1[ri] += t.power1;
        s.power2[ri] += t.power2;
      }
    }
    return s;
  }

 private:
  std::vector<double> wx_, wy_;
  std::vector<std::int64_t> pixels_;
  std::vector<double> radii_;
  std::int64_t columns_;
  std::unique_ptr<double, FftwFree> in_;
  std::unique_ptr<fftw_complex, FftwFree> out_;
  fftw_plan plan_ = nullptr;
};

}  // namespace

std::mutex& fftw_planner_mutex() {
  static std::mutex m;
  return m;
}

std::unique_ptr<FrcEngine> make_cpu_frc_engine(const FrcGeometry& geometry) {
  check_frc_geometry(geometry);
  return std::make_unique<CpuFrcEngine>(geometry);
}

}  // namespace nanoscopy
