// The CPU reference engine: threads over ROIs, one scratch per thread (no
// allocation per fit), the model picked once per batch from model_list.hpp,
// the LM driver of lm.hpp and the estimators of estimators/lsq.hpp and
// estimators/mle.hpp (picked once per batch as the model is).
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "nanoscopy/config.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/fit/engine.hpp"
#include "nanoscopy/fit/estimators/lsq.hpp"
#include "nanoscopy/fit/estimators/mle.hpp"
#include "nanoscopy/fit/initial_estimate.hpp"
#include "nanoscopy/fit/lm.hpp"
#include "nanoscopy/fit/model_list.hpp"
#include "nanoscopy/fit/models/spline3d.hpp"

#if NANOSCOPY_HAVE_OPENMP
#include <omp.h>
#endif

// The pixel loop is the hot spot: an AVX2/FMA clone is picked at load time where the CPU has it.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define NANOSCOPY_FIT_CLONES __attribute__((target_clones("arch=haswell", "default")))
#else
#define NANOSCOPY_FIT_CLONES
#endif

namespace nanoscopy {

std::string to_string(FitStatus status) {
  switch (status) {
    case FitStatus::converged_max_error:
      return "converged_max_error";
    case FitStatus::converged_min_delta:
      return "converged_min_delta";
    case FitStatus::converged_min_step:
      return "converged_min_step";
    case FitStatus::max_iterations:
      return "max_iterations";
    case FitStatus::not_converged:
      return "not_converged";
    case FitStatus::nan:
      return "nan";
    case FitStatus::left_roi:
      return "left_roi";
    case FitStatus::invalid_roi:
      return "invalid_roi";
  }
  return "unknown";
}

std::string to_string(Estimator estimator) {
  switch (estimator) {
    case Estimator::lsq:
      return "lsq";
    case Estimator::wlsq:
      return "wlsq";
    case Estimator::mle:
      return "mle";
  }
  return "unknown";
}

std::string to_string(ShapeModel model) {
  if (model == ShapeModel::spline) return fit_detail::Spline3d::name;
  std::string name = "unknown";
  fit_detail::dispatch_model(model, [&]<class M>(M) { name = M::name; });
  return name;
}

void RoiBatch::validate() const {
  if (width < 1 || height < 1 || roi_pixels() > kMaxRoiPixels)
    throw UsageError("fit", "a ROI of " + std::to_string(width) + "×" + std::to_string(height) +
                                " pixels is not supported (1 to " + std::to_string(kMaxRoiPixels) + " pixels)");
  if (type != PixelType::u16 && type != PixelType::f32)
    throw UsageError("fit", "pixels of type " + to_string(type) + " cannot be fitted (use uint16 or float32)");
  if (count < 0) throw UsageError("fit", "a negative number of ROIs was given");
  if (count > 0 && pixels == nullptr) throw UsageError("fit", "the ROI batch has no pixel data");
}

namespace {

using namespace fit_detail;

template <class T>
struct Scratch {
  std::vector<T> g = std::vector<T>(kMaxRoiPixels);
  // Column terms X (v, dc, ds; structure of arrays for the row dot products) and row terms Y.
  std::vector<T> xv = std::vector<T>(kMaxRoiPixels), xdc = xv, xds = xv;
  std::vector<T> yv = xv, ydc = xv, yds = xv;
  std::vector<T> shift = xv;  // the per-pixel estimators' variance shift s (photons²)
};

// Σ g·f and Σ g·∂f row by row: three dot products per row with the column terms,
// gathered into the model's DataSums by its accumulate_row.
template <class DataSums, class real>
NANOSCOPY_FIT_CLONES DataSums data_sums(const real* __restrict g, const real* __restrict xv, const real* __restrict xdc,
                                        const real* __restrict xds, const real* yv, const real* ydc, const real* yds,
                                        int w, int h) {
  DataSums d;
  clear(d);
  for (int r = 0; r < h; ++r) {
    const real* row = g + static_cast<std::ptrdiff_t>(r) * w;
    real gx = 0, gxd = 0, gxs = 0;
#pragma omp simd reduction(+ : gx, gxd, gxs)
    for (int c = 0; c < w; ++c) {
      gx += row[c] * xv[c];
      gxd += row[c] * xdc[c];
      gxs += row[c] * xds[c];
    }
    accumulate_row(d, gx, gxd, gxs, AxisTerm<real>{yv[r], ydc[r], yds[r]});
  }
  return d;
}

// The pixel sums of model M at p over the whole ROI, then the estimator.
template <class M, class T>
class CpuEvaluator {
 public:
  static constexpr int N = M::n_params;

  CpuEvaluator(const M& model, Scratch<T>& s, int w, int h, const RoiConstants<T>& k)
      : model_(model), s_(s), w_(w), h_(h), k_(k) {}

  bool operator()(const T p[N], Evaluation<T, N>& e) {
    model_.fill_terms(model_.make_axis(model_.column_width(p)), model_.column_centre(p), w_, s_.xv.data(),
                      s_.xdc.data(), s_.xds.data());
    model_.fill_terms(model_.make_axis(model_.row_width(p)), model_.row_centre(p), h_, s_.yv.data(), s_.ydc.data(),
                      s_.yds.data());
    AxisSums<T> xs, ys;
    clear(xs);
    clear(ys);
    for (int c = 0; c < w_; ++c) accumulate(xs, AxisTerm<T>{s_.xv[c], s_.xdc[c], s_.xds[c]});
    for (int r = 0; r < h_; ++r) accumulate(ys, AxisTerm<T>{s_.yv[r], s_.ydc[r], s_.yds[r]});
    const auto d = data_sums<typename M::template DataSums<T>>(s_.g.data(), s_.xv.data(), s_.xdc.data(), s_.xds.data(),
                                                   s_.yv.data(), s_.ydc.data(), s_.yds.data(), w_, h_);
    if (!lsq_assemble(model_.sums(p, xs, ys, d), k_, e)) return false;
    if constexpr (kResidualChi2<T>) e.chi2 = residual_chi2(e);
    return true;
  }

 private:
  // χ² = Σ(g − α̂f − β̂)² from the residuals, over the terms fill_terms left in the scratch.
  T residual_chi2(const Evaluation<T, N>& e) const {
    T chi2 = 0;
    for (int r = 0; r < h_; ++r) {
      const T* row = s_.g.data() + static_cast<std::ptrdiff_t>(r) * w_;
      for (int c = 0; c < w_; ++c) {
        const T res = row[c] - e.alpha * (s_.xv[c] * s_.yv[r]) - e.beta;
        chi2 += res * res;
      }
    }
    return chi2;
  }

  const M& model_;
  Scratch<T>& s_;
  int w_, h_;
  RoiConstants<T> k_;
};

// The per-pixel estimator E (mle, wlsq) of model M at θ = (p, α, β) over the
// whole ROI: the axis terms as CpuEvaluator's, then one pass over the pixels.
template <class M, class E, class T>
class PixelEvaluator {
 public:
  static constexpr int N = M::n_params;
  static constexpr int P = kPixelParams<N>;

  PixelEvaluator(const M& model, Scratch<T>& s, int w, int h) : model_(model), s_(s), w_(w), h_(h) {}

  bool operator()(const T q[P], Evaluation<T, P>& e) {
    clear_evaluation(e);
    return each_pixel(q, [&](T gs, T mu, const T* d) { return E::add(e, gs, mu, d); }) && pixel_finish(e, q);
  }

  // The CRLB and log-likelihood at the estimate (lm_fit calls it once).
  void finish(const T q[P], FitResult& out) {
    FisherSums<T, P> fs;
    clear_fisher(fs);
    each_pixel(q, [&](T gs, T mu, const T* d) {
      add_fisher(fs, gs, mu, d);
      return true;
    });
    T magnitude[P];
    parameter_magnitudes<T, P>(model_, q, magnitude);
    fisher_to_result<T, P, z_index<M>(), peak_amplitude<M>()>(fs, q, magnitude, out);
  }

 private:
  // Calls visit(g', μ, ∂μ/∂θ) for every pixel at θ = q, in row order; stops at the first false.
  template <class Visit>
  bool each_pixel(const T q[P], Visit&& visit) {
    fill(q);
    const T alpha = q[N], beta = q[N + 1];
    for (int r = 0; r < h_; ++r) {
      const AxisTerm<T> Y{s_.yv[r], s_.ydc[r], s_.yds[r]};
      for (int c = 0; c < w_; ++c) {
        const int i = r * w_ + c;
        T f, df[N], d[P];
        model_.pixel(q, AxisTerm<T>{s_.xv[c], s_.xdc[c], s_.xds[c]}, Y, f, df);
        mu_derivatives<T, N>(f, df, alpha, d);
        const T shift = s_.shift[i];
        if (!visit(s_.g[i] + shift, alpha * f + beta + shift, d)) return false;
      }
    }
    return true;
  }

  void fill(const T q[P]) {
    model_.fill_terms(model_.make_axis(model_.column_width(q)), model_.column_centre(q), w_, s_.xv.data(),
                      s_.xdc.data(), s_.xds.data());
    model_.fill_terms(model_.make_axis(model_.row_width(q)), model_.row_centre(q), h_, s_.yv.data(), s_.ydc.data(),
                      s_.yds.data());
  }

  const M& model_;
  Scratch<T>& s_;
  int w_, h_;
};

// How the per-pixel estimators see a batch: photons = (value − offset)·scale.
template <class T>
struct PhotonScale {
  T offset, scale;
};

// A per-pixel estimator's fit: the data in photons (and the variance shift) in
// the scratch, the paper's initial estimate of p, lsq's α̂, β̂ there as the
// start of α, β, then LM on (p, α, β); α and β are reported in pixel units.
template <class M, class E, class real, typename Pixel>
FitResult fit_one_pixel(const M& model, const Pixel* pixels, const float* shift, int w, int h, const SpotGuess* guess,
                        const FitLimits<real>& st, PhotonScale<real> ps, Scratch<real>& s) {
  constexpr int N = M::n_params;
  constexpr int P = kPixelParams<N>;
  const int n = w * h;
  for (int i = 0; i < n; ++i) {
    // Photons are carried as float, as the CUDA kernels stage them: both then fit the same data.
    s.g[i] = static_cast<real>(static_cast<float>((static_cast<real>(pixels[i]) - ps.offset) * ps.scale));
    s.shift[i] = shift ? static_cast<real>(shift[i]) : real(0);
  }
  InitScan<real> scan = init_scan_identity<real>();
  for (int r = 0; r < h; ++r)
    for (int c = 0; c < w; ++c) init_scan_pixel(scan, s.g.data(), w, h, c, r);
  if (scan.nonfinite > 0 || !(scan.max > scan.min)) return invalid_result();
  real theta[P];
  if (guess) {
    model.from_spot(real(guess->x), real(guess->y), real(guess->sigma), theta);
  } else {
    const real threshold = init_threshold(scan);
    int above = 0;
    for (int i = 0; i < n; ++i) above += s.g[i] > threshold ? 1 : 0;
    model.from_spot(real(scan.best_index % w), real(scan.best_index / w), init_sigma<real>(above), theta);
  }
  CpuEvaluator<M, real> lsq(model, s, w, h, RoiConstants<real>{static_cast<real>(n), scan.sum, scan.sum2});
  Evaluation<real, N> closed{};
  const bool have = finite(theta[0]) && finite(theta[1]) && finite(theta[2]) && lsq(theta, closed);
  pixel_start(have, closed.alpha, closed.beta, scan.max - scan.min, theta[N], theta[N + 1]);
  PixelEvaluator<M, E, real> eval(model, s, w, h);
  FitResult r = lm_fit<M, P>(model, eval, theta, w, h, n, st);
  const float inv = static_cast<float>(real(1) / ps.scale);
  r.amplitude *= inv;
  r.background = r.background * inv + static_cast<float>(ps.offset);
  r.crlb_background *= inv;
  r.crlb_photons *= inv;
  return r;
}

// A 3D model's CRLB after an lsq fit (estimators/mle.hpp, lsq_result_theta),
// with the batch's variance shifts.
template <class M, class real>
void lsq_crlb(const M& model, FitResult& r, const float* shift, int w, int h, PhotonScale<real> ps, Scratch<real>& s) {
  real theta[kPixelParams<M::n_params>];
  if (!lsq_result_theta<M>(r, ps.offset, ps.scale, theta)) return;
  for (int i = 0; i < w * h; ++i) s.shift[i] = shift ? static_cast<real>(shift[i]) : real(0);
  PixelEvaluator<M, Mle, real> eval(model, s, w, h);
  FitResult bound;
  eval.finish(theta, bound);
  take_lsq_crlb(bound, ps.scale, r);
}

template <class M, class real, typename Pixel>
FitResult fit_one(const M& model, const Pixel* pixels, const float* shift, int w, int h, const SpotGuess* guess,
                  const FitLimits<real>& st, PhotonScale<real> ps, Scratch<real>& s) {
  const int n = w * h;
  for (int i = 0; i < n; ++i) s.g[i] = static_cast<real>(pixels[i]);
  InitScan<real> scan = init_scan_identity<real>();
  for (int r = 0; r < h; ++r)
    for (int c = 0; c < w; ++c) init_scan_pixel(scan, s.g.data(), w, h, c, r);
  if (scan.nonfinite > 0 || !(scan.max > scan.min)) return invalid_result();
  real start[M::n_params];
  if (guess) {
    model.from_spot(real(guess->x), real(guess->y), real(guess->sigma), start);
  } else {
    const real threshold = init_threshold(scan);
    int above = 0;
    for (int i = 0; i < n; ++i) above += s.g[i] > threshold ? 1 : 0;
    model.from_spot(real(scan.best_index % w), real(scan.best_index / w), init_sigma<real>(above), start);
  }
  CpuEvaluator<M, real> eval(model, s, w, h, RoiConstants<real>{static_cast<real>(n), scan.sum, scan.sum2});
  FitResult r = lm_fit<M>(model, eval, start, w, h, n, st);
  if constexpr (z_index<M>() >= 0) lsq_crlb(model, r, shift, w, h, ps, s);
  return r;
}

class CpuFitEngine final : public FitEngine {
 public:
  CpuFitEngine(const FitSettings& settings, int threads) : settings_(settings), threads_(threads) {}

  void fit(const RoiBatch& batch, std::span<FitResult> out) override {
    batch.validate();
    if (static_cast<std::int64_t>(out.size()) != batch.count)
      throw UsageError("fit", "the result buffer holds " + std::to_string(out.size()) + " fits, the batch " +
                                  std::to_string(batch.count));
    if (batch.count == 0) return;
    if ((settings_.estimator != Estimator::lsq || settings_.model == ShapeModel::spline) &&
        !(settings_.photons_per_value > 0))
      throw UsageError("fit", "photons per pixel value must be positive");
    // The reference computes in double; fp32 is the CUDA kernels' arithmetic on the host (tests compare the two).
    const bool single = settings_.precision == FitPrecision::fp32;
    if (settings_.model == ShapeModel::spline) {
      if (!settings_.spline) throw UsageError("fit", "the spline model needs a spline PSF (a calibration)");
      if (single)
        run_typed<Spline3d, float>(batch, out);
      else
        run_typed<Spline3d, double>(batch, out);
      return;
    }
    const bool known = dispatch_model(settings_.model, [&]<class M>(M) {
      if (single)
        run_typed<M, float>(batch, out);
      else
        run_typed<M, double>(batch, out);
    });
    if (!known) throw UsageError("fit", "the spot model is not one the fitter knows");
  }

  std::string name() const override {
    return "cpu (" + std::to_string(threads_) + " thread" + (threads_ == 1 ? "" : "s") +
           (settings_.precision == FitPrecision::fp32 ? ", fp32" : "") +
           (settings_.estimator == Estimator::lsq ? "" : ", " + to_string(settings_.estimator)) + ")";
  }

 private:
  template <class M, class T>
  void run_typed(const RoiBatch& batch, std::span<FitResult> out) const {
    if (batch.type == PixelType::u16)
      run<M, T>(static_cast<const std::uint16_t*>(batch.pixels), batch, out);
    else
      run<M, T>(static_cast<const float*>(batch.pixels), batch, out);
  }

  template <class M, class T, typename Pixel>
  void fit_range(const Pixel* pixels, const RoiBatch& b, std::span<FitResult> out, std::int64_t first,
                 std::int64_t last, Scratch<T>& s) const {
    const std::int64_t n = b.roi_pixels();
    const FitLimits<T> limits = fit_limits<T>(settings_);
    const PhotonScale<T> ps{static_cast<T>(settings_.photon_offset), static_cast<T>(settings_.photons_per_value)};
    if constexpr (std::is_same_v<M, Spline3d>) {
      fit_spline_range<T>(pixels, b, out, first, last, s, limits, ps);
      return;
    } else {
    const M model = make_model<M>(settings_);
    for (std::int64_t i = first; i < last; ++i) {
      const SpotGuess* guess = b.initial ? b.initial + i : nullptr;
      const float* shift = b.variance_shift ? b.variance_shift + i * n : nullptr;
      switch (settings_.estimator) {
        case Estimator::lsq:
          out[i] = fit_one(model, pixels + i * n, shift, b.width, b.height, guess, limits, ps, s);
          break;
        case Estimator::wlsq:
          out[i] = fit_one_pixel<M, Wlsq>(model, pixels + i * n, shift, b.width, b.height, guess, limits, ps, s);
          break;
        case Estimator::mle:
          out[i] = fit_one_pixel<M, Mle>(model, pixels + i * n, shift, b.width, b.height, guess, limits, ps, s);
          break;
      }
    }
    }
  }

  // The spline model (fit/models/spline3d.hpp): photons carried as float, as the kernel computes them.
  template <class T, typename Pixel>
  void fit_spline_range(const Pixel* pixels, const RoiBatch& b, std::span<FitResult> out, std::int64_t first,
                        std::int64_t last, Scratch<T>& s, const FitLimits<T>& limits, PhotonScale<T> ps) const {
    const std::int64_t n = b.roi_pixels();
    const Spline3d model = make_spline_model(*settings_.spline, settings_.z_factor, settings_.spline->coefficients.data());
    for (std::int64_t i = first; i < last; ++i) {
      const Pixel* px = pixels + i * n;
      const float* shift = b.variance_shift ? b.variance_shift + i * n : nullptr;
      for (std::int64_t j = 0; j < n; ++j) {
        s.g[j] = static_cast<T>(static_cast<float>((static_cast<T>(px[j]) - ps.offset) * ps.scale));
        s.shift[j] = shift ? static_cast<T>(shift[j]) : T(0);
      }
      const ArrayRoi<T> roi{s.g.data(), shift ? s.shift.data() : nullptr};
      const SpotGuess* guess = b.initial ? b.initial + i : nullptr;
      switch (settings_.estimator) {
        case Estimator::lsq:
          out[i] = spline_fit_one<SplineLsq, T>(model, roi, b.width, b.height, guess, limits, ps.offset, ps.scale);
          break;
        case Estimator::wlsq:
          out[i] = spline_fit_one<Wlsq, T>(model, roi, b.width, b.height, guess, limits, ps.offset, ps.scale);
          break;
        case Estimator::mle:
          out[i] = spline_fit_one<Mle, T>(model, roi, b.width, b.height, guess, limits, ps.offset, ps.scale);
          break;
      }
    }
  }

  template <class M, class T, typename Pixel>
  void run(const Pixel* pixels, const RoiBatch& b, std::span<FitResult> out) const {
    constexpr std::int64_t chunk = 256;
    const std::int64_t chunks = (b.count + chunk - 1) / chunk;
    const int threads = static_cast<int>(std::min<std::int64_t>(threads_, chunks));
    if (threads <= 1) {
      Scratch<T> s;
      fit_range<M, T>(pixels, b, out, 0, b.count, s);
      return;
    }
#if NANOSCOPY_HAVE_OPENMP
#pragma omp parallel num_threads(threads)
    {
      Scratch<T> s;
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t k = 0; k < chunks; ++k)
        fit_range<M, T>(pixels, b, out, k * chunk, std::min(b.count, (k + 1) * chunk), s);
    }
#else
    std::atomic<std::int64_t> next{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        Scratch<T> s;
        for (std::int64_t k; (k = next.fetch_add(1)) < chunks;)
          fit_range<M, T>(pixels, b, out, k * chunk, std::min(b.count, (k + 1) * chunk), s);
      });
    for (auto& t : pool) t.join();
#endif
  }

  FitSettings settings_;
  int threads_;
};

}  // namespace

std::unique_ptr<FitEngine> make_cpu_fit_engine(const FitSettings& settings, int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::make_unique<CpuFitEngine>(settings, threads);
}

}  // namespace nanoscopy
