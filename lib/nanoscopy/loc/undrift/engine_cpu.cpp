// The CPU reference of the correlation engine: FFTW in single precision.
// Histograms are counts, and the correlation only has to locate a peak, so
// float halves the memory of the kept spectra (the run's largest cost) at no
// loss that matters; FFTW's planner is not thread-safe, execution of one plan on
// other (equally aligned) buffers is, so the pairs run on per-thread buffers.
#include <fftw3.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numbers>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/loc/undrift/engine.hpp"

namespace nanoscopy {
namespace {

std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

struct FftwfFree {
  void operator()(void* p) const { fftwf_free(p); }
};
template <typename T>
using FftwBuffer = std::unique_ptr<T[], FftwfFree>;

template <typename T>
FftwBuffer<T> fftw_buffer(std::size_t count, const CorrelationGeometry& g) {
  FftwBuffer<T> b(static_cast<T*>(fftwf_malloc(count * sizeof(T))));
  if (!b)
    throw InputError("undrift", "out of memory for the spectra of a " + std::to_string(g.width) + " x " +
                                    std::to_string(g.height) + " grid");
  return b;
}

const CorrelationGeometry& checked(const CorrelationGeometry& g) {
  validate_correlation_geometry(g, "undrift");
  return g;
}

class CpuCorrelationEngine final : public CorrelationEngine {
 public:
  CpuCorrelationEngine(const CorrelationGeometry& g, int threads)
      : CorrelationEngine(checked(g)),
        threads_(std::max(threads, 1)),
        columns_(g.width / 2 + 1),
        real_(static_cast<std::size_t>(g.width * g.height)),
        complex_(static_cast<std::size_t>(g.height * columns_)),
        gx_(correlation_blur_transfer(g.width, columns_, g.blur_px)),
        gy_(correlation_blur_transfer(g.height, g.height, g.blur_px)) {
    for (int t = 0; t < threads_; ++t) {
      real_buffers_.push_back(fftw_buffer<float>(real_, g));
      complex_buffers_.push_back(fftw_buffer<fftwf_complex>(complex_, g));
    }
    const int h = static_cast<int>(g.height), w = static_cast<int>(g.width);
    std::lock_guard lock(planner_mutex());
    // FFTW_ESTIMATE leaves the buffers alone (MEASURE would overwrite them) and plans in microseconds.
    forward_ = fftwf_plan_dft_r2c_2d(h, w, real_buffers_[0].get(), complex_buffers_[0].get(), FFTW_ESTIMATE);
    inverse_ = fftwf_plan_dft_c2r_2d(h, w, complex_buffers_[0].get(), real_buffers_[0].get(), FFTW_ESTIMATE);
    if (!forward_ || !inverse_) throw InputError("undrift", "FFTW could not plan the transforms");
  }
  ~CpuCorrelationEngine() override {
    std::lock_guard lock(planner_mutex());
    if (forward_) fftwf_destroy_plan(forward_);
    if (inverse_) fftwf_destroy_plan(inverse_);
  }
  CpuCorrelationEngine(const CpuCorrelationEngine&) = delete;
  CpuCorrelationEngine& operator=(const CpuCorrelationEngine&) = delete;

  std::string name() const override {
    return std::string("cpu (FFTW ") + fftwf_version + ", " + std::to_string(threads_) + " threads)";
  }

  void add_segment(std::span<const float> image) override {
    if (image.size() != real_)
      throw InputError("undrift", "a segment image of " + std::to_string(image.size()) + " values for a grid of " +
                                      std::to_string(real_));
    std::copy(image.begin(), image.end(), real_buffers_[0].get());
    transform_segment();
  }

  void add_segment_points(std::span<const rcc_math::GridPoint> points) override {
    render_segment_points(points, geometry_, std::span(real_buffers_[0].get(), real_));
    transform_segment();
  }

  std::int64_t segments() const override { return static_cast<std::int64_t>(spectra_.size()); }
  std::size_t spectrum_bytes() const override { return spectra_.size() * complex_ * sizeof(fftwf_complex); }

  void correlate(std::span<const SegmentPair> pairs, std::span<CorrelationPeak> peaks) override {
    if (pairs.size() != peaks.size()) throw UsageError("undrift", "pairs and peaks differ in length");
    for (const SegmentPair& p : pairs)
      if (p.i < 0 || p.j < 0 || p.i >= segments() || p.j >= segments())
        throw UsageError("undrift", "a pair names a segment that was not added");
    const auto n = static_cast<std::int64_t>(pairs.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_)
    for (std::int64_t k = 0; k < n; ++k) {
#ifdef _OPENMP
      const int t = omp_get_thread_num();
#else
      const int t = 0;
#endif
      const auto kk = static_cast<std::size_t>(k);
      peaks[kk] = one_pair(pairs[kk], complex_buffers_[static_cast<std::size_t>(t)].get(),
                           real_buffers_[static_cast<std::size_t>(t)].get());
    }
  }

 private:
  // The spectrum of the image in real_buffers_[0], kept.
  void transform_segment() {
    auto spectrum = fftw_buffer<fftwf_complex>(complex_, geometry_);
    fftwf_execute_dft_r2c(forward_, real_buffers_[0].get(), spectrum.get());
    spectra_.push_back(std::move(spectrum));
  }

  CorrelationPeak one_pair(const SegmentPair& pair, fftwf_complex* product, float* map) const {
    const fftwf_complex* a = spectra_[static_cast<std::size_t>(pair.i)].get();
    const fftwf_complex* b = spectra_[static_cast<std::size_t>(pair.j)].get();
    const std::int64_t w = geometry_.width, h = geometry_.height;
    for (std::int64_t y = 0; y < h; ++y) {
      const float gy = gy_[static_cast<std::size_t>(y)];
      for (std::int64_t c = 0; c < columns_; ++c) {
        const auto i = static_cast<std::size_t>(y * columns_ + c);
        const float g = gy * gx_[static_cast<std::size_t>(c)];
        // conj(a) · b
        product[i][0] = g * (a[i][0] * b[i][0] + a[i][1] * b[i][1]);
        product[i][1] = g * (a[i][0] * b[i][1] - a[i][1] * b[i][0]);
      }
    }
    fftwf_execute_dft_c2r(inverse_, product, map);
    const auto value = [&](std::int64_t sx, std::int64_t sy) {
      return static_cast<double>(map[rcc_math::wrap(sy, h) * w + rcc_math::wrap(sx, w)]);
    };
    CorrelationPeak peak;
    const std::int64_t m = geometry_.max_shift_px;
    double best = 0.0;
    for (std::int64_t sy = -m; sy <= m; ++sy)
      for (std::int64_t sx = -m; sx <= m; ++sx) {
        const double v = value(sx, sy);
        if (v > best) {
          best = v;
          peak.shift_x = sx;
          peak.shift_y = sy;
          peak.found = true;
        }
      }
    const int r = CorrelationPeak::radius;
    for (int v = -r; v <= r; ++v)
      for (int u = -r; u <= r; ++u)
        peak.window[static_cast<std::size_t>((v + r) * CorrelationPeak::side + u + r)] =
            value(peak.shift_x + u, peak.shift_y + v);
    return peak;
  }

  int threads_;
  std::int64_t columns_;
  std::size_t real_, complex_;
  std::vector<float> gx_, gy_;
  std::vector<FftwBuffer<float>> real_buffers_;
  std::vector<FftwBuffer<fftwf_complex>> complex_buffers_;
  std::vector<FftwBuffer<fftwf_complex>> spectra_;
  fftwf_plan forward_ = nullptr;
  fftwf_plan inverse_ = nullptr;
};

}  // namespace

std::int64_t correlation_fft_size(std::int64_t n) {
  // A power of two is such a size: the search ends there. Beyond any plannable grid (validate_correlation_geometry
  // refuses more than 32768) the power of two is the answer, so no input makes this loop long.
  std::int64_t power = 1;
  while (power < n && power < (std::int64_t{1} << 62)) power *= 2;
  if (n > (std::int64_t{1} << 20)) return power;
  for (std::int64_t m = std::max<std::int64_t>(n, 1); m < power; ++m) {
    std::int64_t r = m;
    for (std::int64_t p : {2, 3, 5, 7})
      while (r % p == 0) r /= p;
    if (r == 1) return m;
  }
  return power;
}

void validate_correlation_geometry(const CorrelationGeometry& g, const std::string& where) {
  if (g.width < 8 || g.height < 8 || g.width > (1 << 15) || g.height > (1 << 15))
    throw UsageError(where, "a correlation grid of " + std::to_string(g.width) + " x " + std::to_string(g.height) +
                                " pixels (8 to 32768 a side)");
  if (!(g.blur_px >= 0.0) || !std::isfinite(g.blur_px)) throw UsageError(where, "the correlation blur must be ≥ 0");
  if (g.max_shift_px < 1 || 2 * g.max_shift_px >= std::min(g.width, g.height))
    throw UsageError(where, "a search radius of " + std::to_string(g.max_shift_px) + " pixels on a " +
                                std::to_string(g.width) + " x " + std::to_string(g.height) + " grid");
}

std::vector<float> correlation_blur_transfer(std::int64_t n, std::int64_t count, double sigma) {
  std::vector<float> t(static_cast<std::size_t>(count));
  for (std::int64_t k = 0; k < count; ++k) {
    const double f = static_cast<double>(k <= n / 2 ? k : k - n) / static_cast<double>(n);
    t[static_cast<std::size_t>(k)] = static_cast<float>(std::exp(-2.0 * std::numbers::pi * std::numbers::pi * sigma * sigma * f * f));
  }
  return t;
}

void render_segment_points(std::span<const rcc_math::GridPoint> points, const CorrelationGeometry& g,
                           std::span<float> image) {
  if (static_cast<std::int64_t>(image.size()) != g.width * g.height)
    throw UsageError("undrift", "a segment image of the wrong size");
  std::fill(image.begin(), image.end(), 0.0f);
  for (const rcc_math::GridPoint& p : points) {
    rcc_math::BilinearDeposit d;
    if (!rcc_math::bilinear_deposit(p, g.width, g.height, d)) continue;
    float* row = image.data() + d.j * g.width + d.i;
    row[0] += d.w[0];
    row[1] += d.w[1];
    row[g.width] += d.w[2];
    row[g.width + 1] += d.w[3];
  }
}

std::unique_ptr<CorrelationEngine> make_cpu_correlation_engine(const CorrelationGeometry& geometry, int threads) {
  return std::make_unique<CpuCorrelationEngine>(geometry, threads);
}

}  // namespace nanoscopy
