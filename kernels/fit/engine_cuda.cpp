#include "fit/engine_cuda.hpp"
#include "common/parallel_copy.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/owners.hpp"
#include "fit/fit_kernels.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/spline_psf.hpp"

namespace nanoscopy::cuda {
namespace {
// All but four of the host's threads, at least 4 and at most 12 (more did not pay on 16 cores).
unsigned staging_copy_threads() {
  return std::clamp(std::thread::hardware_concurrency(), 8u, 16u) - 4u;
}

// Chunks of at least this many pixel bytes (and fits) stream through the
// slots, so the host copy of one overlaps the transfer and fit of another.
constexpr std::int64_t kMinChunkBytes = 256 << 10;
constexpr std::int64_t kMinChunkFits = 512;
constexpr std::int64_t kMinSplitFits = 16384;      // cuda:all splits batches above this
constexpr std::int64_t kMaxChunkCap = 1 << 20;     // bounds the pinned staging
// Every chunk costs host time (a staging copy and three API calls) and a
// small kernel runs far below the GPU's rate: a mid-size batch is cut into one
// chunk per slot, a large one (2 MiB of pixels per chunk and more) into up to 8.
constexpr std::int64_t kMaxPipelineChunks = 8;
constexpr std::int64_t kBytesPerExtraChunk = 2 << 20;

}  // namespace

struct FitPlan::Impl {
  struct Slot {
    Stream stream;
    DeviceBuffer<unsigned char> d_pixels;
    DeviceBuffer<SpotGuess> d_guesses;
    DeviceBuffer<float> d_shift;
    DeviceBuffer<FitResult> d_out;
    PinnedBuffer<unsigned char> h_pixels;
    PinnedBuffer<SpotGuess> h_guesses;
    PinnedBuffer<float> h_shift;
    PinnedBuffer<FitResult> h_out;
    // The chunk in flight: results land in h_out (unless copied straight to the caller).
    FitResult* pending_dst = nullptr;
    std::int64_t pending_count = 0;
    bool pending_staged = false;
    bool busy = false;
  };

  int device = 0;
  int multiprocessors = 1;
  FitSettings settings;
  DeviceBuffer<float> d_spline;  // the spline model's coefficient table, uploaded once per plan
  FitPlanOptions options;
  std::vector<Slot> slots;
  // Host to host, the staging copies bound the pipeline, not PCIe: on the H100 machine (16 cores, 1e6 9×9
  // fits, 2026-11-25) 4/8/12 copy threads gave 0.84–1.22/1.14–1.47/1.48–1.55e8 fits/s.
  ParallelCopy copier{staging_copy_threads()};

  void finish(Slot& s) {
    if (!s.busy) return;
    s.stream.synchronize();
    if (s.pending_staged)
      copier.copy(s.pending_dst, s.h_out.get(), static_cast<std::size_t>(s.pending_count) * sizeof(FitResult));
    s.busy = false;
  }

  mutable std::size_t free_bytes = 0;  // device memory free when the plan first sized a chunk

  std::int64_t chunk_capacity(std::int64_t bytes_per_fit) const {
    if (options.max_chunk_fits > 0) return options.max_chunk_fits;
    // cudaMemGetInfo costs tens of µs, a large share of a small call: ask once
    // per plan (what the plan itself allocated later is counted in that share).
    if (free_bytes == 0) {
      std::size_t total_bytes = 0;
      NANOSCOPY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    }
    // A quarter of the free memory over the slots, leaving room for others.
    const std::int64_t by_memory =
        static_cast<std::int64_t>(free_bytes / 4) / static_cast<std::int64_t>(slots.size()) / bytes_per_fit;
    const std::int64_t cap = std::min(by_memory, kMaxChunkCap);
    if (cap < 1) throw DeviceError("cuda:" + std::to_string(device), "not enough free GPU memory to fit spots");
    return cap;
  }
};

FitPlan::FitPlan(int device, const FitSettings& settings, const FitPlanOptions& options)
    : impl_(std::make_unique<Impl>()) {
  impl_->device = device;
  impl_->settings = settings;
  // Automatic precision is float for every estimator (the kernels' default T). wlsq and mle ran in double until
  // solve_damped judged negligible information per relative change: before, float held α fixed on bright
  // spots (h_αα/h_xx ~ 1e-7 < float's 1e-6) and 99 % of the 13×13 2000-photon fits stopped elsewhere; since,
  // the gpu test "CUDA wlsq and mle in float" holds the host test's rules (tests/support/fit_compare.hpp).
  impl_->options = options;
  if (options.lanes_per_fit != 0 && (options.lanes_per_fit < 1 || options.lanes_per_fit > 32 ||
                                     (options.lanes_per_fit & (options.lanes_per_fit - 1))))
    throw UsageError("fit", "lanes per fit must be 1, 2, 4, 8, 16 or 32");
  if (options.lanes_per_fit != 0 && options.lanes_per_fit != kFp64Lanes && fit_fp64(settings.precision))
    throw UsageError("fit", "fp64 fits run with " + std::to_string(kFp64Lanes) + " lanes per fit");
  DeviceGuard guard(device);
  NANOSCOPY_CUDA_CHECK(cudaDeviceGetAttribute(&impl_->multiprocessors, cudaDevAttrMultiProcessorCount, device));
  preload_fit_kernels(impl_->settings.precision, impl_->settings.estimator);
  if (settings.model == ShapeModel::spline) {
    if (!settings.spline) throw UsageError("fit", "the spline model needs a spline PSF (a calibration)");
    if (settings.precision == FitPrecision::fp64)
      throw UsageError("fit", "the spline fit runs in float on the GPU (--precision auto or float)");
    preload_spline_fit_kernels(settings.estimator);
    const auto& c = settings.spline->coefficients;
    impl_->d_spline = DeviceBuffer<float>(c.size());
    NANOSCOPY_CUDA_CHECK(cudaMemcpy(impl_->d_spline.get(), c.data(), c.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  impl_->slots.resize(static_cast<std::size_t>(std::max(1, options.streams)));
}

FitPlan::~FitPlan() {
  if (!impl_) return;
  try {
    DeviceGuard guard(impl_->device);
    for (auto& s : impl_->slots) cudaStreamSynchronize(s.stream.get());
  } catch (...) {
  }
}

FitPlan::FitPlan(FitPlan&&) noexcept = default;
FitPlan& FitPlan::operator=(FitPlan&&) noexcept = default;

int FitPlan::device() const {
  return impl_->device;
}
const FitSettings& FitPlan::settings() const {
  return impl_->settings;
}

int FitPlan::lanes_for(int width, int height, std::int64_t count) const {
  return fit_geometry(width, height, count, impl_->options.lanes_per_fit, impl_->multiprocessors,
                      impl_->settings.precision, impl_->settings.estimator).lanes;
}

void FitPlan::fit_device(const void* d_pixels, PixelType type, std::int64_t count, int width, int height,
                         const SpotGuess* d_initial, FitResult* d_out, cudaStream_t stream,
                         const float* d_variance_shift) {
  RoiBatch check;
  check.pixels = d_pixels;
  check.type = type;
  check.count = count;
  check.width = width;
  check.height = height;
  check.validate();
  if (count == 0) return;
  if (!d_out) throw UsageError("fit", "no device buffer for the results");
  DeviceGuard guard(impl_->device);
  FitLaunch launch;
  launch.pixels = d_pixels;
  launch.pixels_u16 = type == PixelType::u16;
  launch.count = count;
  launch.width = width;
  launch.height = height;
  launch.initial = d_initial;
  launch.out = d_out;
  launch.variance_shift = d_variance_shift;
  launch.settings = impl_->settings;
  launch.spline_coefficients = impl_->d_spline.get();
  launch_fit(launch, fit_geometry(width, height, count, impl_->options.lanes_per_fit, impl_->multiprocessors,
                      impl_->settings.precision, impl_->settings.estimator), stream);
}

void FitPlan::fit(const RoiBatch& batch, std::span<FitResult> out) {
  batch.validate();
  if (static_cast<std::int64_t>(out.size()) != batch.count)
    throw UsageError("fit", "the result buffer holds " + std::to_string(out.size()) + " fits, the batch " +
                                std::to_string(batch.count));
  if (batch.count == 0) return;
  Impl& im = *impl_;
  DeviceGuard guard(im.device);

  const std::int64_t n = batch.roi_pixels();
  const std::int64_t pixel_bytes = n * static_cast<std::int64_t>(bytes_per_pixel(batch.type));
  const bool with_guesses = batch.initial != nullptr;
  // The variance shifts travel only for the estimators that read them.
  const bool with_shift = batch.variance_shift != nullptr && im.settings.estimator != Estimator::lsq;
  const std::int64_t bytes_per_fit = pixel_bytes + static_cast<std::int64_t>(sizeof(FitResult)) +
                                     (with_guesses ? static_cast<std::int64_t>(sizeof(SpotGuess)) : 0) +
                                     (with_shift ? n * static_cast<std::int64_t>(sizeof(float)) : 0);
  const std::int64_t cap = im.chunk_capacity(bytes_per_fit);
  const std::int64_t min_chunk = std::max(kMinChunkFits, kMinChunkBytes / pixel_bytes);
  std::int64_t chunk = batch.count;
  if (batch.count >= 2 * min_chunk) {
    const std::int64_t slots = static_cast<std::int64_t>(im.slots.size());
    const std::int64_t chunks = std::clamp(batch.count * pixel_bytes / kBytesPerExtraChunk, slots, kMaxPipelineChunks);
    chunk = std::clamp((batch.count + chunks - 1) / chunks, min_chunk, batch.count);
  }
  chunk = std::min(chunk, cap);

  const bool direct_in = is_pinned(batch.pixels) && (!with_guesses || is_pinned(batch.initial)) &&
                         (!with_shift || is_pinned(batch.variance_shift));
  const bool direct_out = is_pinned(out.data());
  const auto* src = static_cast<const unsigned char*>(batch.pixels);

  const FitGeometry geometry = fit_geometry(batch.width, batch.height, batch.count, im.options.lanes_per_fit,
                                            im.multiprocessors, im.settings.precision, im.settings.estimator);
  FitLaunch launch;
  launch.pixels_u16 = batch.type == PixelType::u16;
  launch.width = batch.width;
  launch.height = batch.height;
  launch.settings = im.settings;
  launch.spline_coefficients = im.d_spline.get();  // the spline model's table on this GPU (null for the others)

  try {
    std::size_t next_slot = 0;
    for (std::int64_t first = 0; first < batch.count; first += chunk) {
      const std::int64_t count = std::min(chunk, batch.count - first);
      Impl::Slot& s = im.slots[next_slot];
      next_slot = (next_slot + 1) % im.slots.size();
      im.finish(s);  // its previous chunk's results are copied out; its buffers are free
      grow(s.d_pixels, static_cast<std::size_t>(chunk * pixel_bytes));
      grow(s.d_out, static_cast<std::size_t>(chunk));
      if (with_guesses) grow(s.d_guesses, static_cast<std::size_t>(chunk));
      if (with_shift) grow(s.d_shift, static_cast<std::size_t>(chunk * n));

      const unsigned char* pixels_from = src + first * pixel_bytes;
      const SpotGuess* guesses_from = with_guesses ? batch.initial + first : nullptr;
      const float* shift_from = with_shift ? batch.variance_shift + first * n : nullptr;
      if (!direct_in) {
        grow(s.h_pixels, static_cast<std::size_t>(chunk * pixel_bytes));
        im.copier.copy(s.h_pixels.get(), pixels_from, static_cast<std::size_t>(count * pixel_bytes));
        pixels_from = s.h_pixels.get();
        if (with_guesses) {
          grow(s.h_guesses, static_cast<std::size_t>(chunk));
          std::memcpy(s.h_guesses.get(), guesses_from, static_cast<std::size_t>(count) * sizeof(SpotGuess));
          guesses_from = s.h_guesses.get();
        }
        if (with_shift) {
          grow(s.h_shift, static_cast<std::size_t>(chunk * n));
          im.copier.copy(s.h_shift.get(), shift_from, static_cast<std::size_t>(count * n) * sizeof(float));
          shift_from = s.h_shift.get();
        }
      }
      const cudaStream_t stream = s.stream.get();
      NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(s.d_pixels.get(), pixels_from, static_cast<std::size_t>(count * pixel_bytes),
                                           cudaMemcpyHostToDevice, stream));
      if (with_guesses)
        NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(s.d_guesses.get(), guesses_from,
                                             static_cast<std::size_t>(count) * sizeof(SpotGuess),
                                             cudaMemcpyHostToDevice, stream));
      launch.pixels = s.d_pixels.get();
      launch.count = count;
      if (with_shift)
        NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(s.d_shift.get(), shift_from,
                                             static_cast<std::size_t>(count * n) * sizeof(float),
                                             cudaMemcpyHostToDevice, stream));
      launch.initial = with_guesses ? s.d_guesses.get() : nullptr;
      launch.variance_shift = with_shift ? s.d_shift.get() : nullptr;
      launch.out = s.d_out.get();
      // The geometry of the whole batch, not of this chunk: the lanes per fit set the order of each fit's sums,
      // so a batch fitted from the host gives the bits of the same batch fitted from device memory.
      launch_fit(launch, geometry, stream);
      FitResult* dst = out.data() + first;
      if (!direct_out) {
        grow(s.h_out, static_cast<std::size_t>(chunk));
        NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(s.h_out.get(), s.d_out.get(),
                                             static_cast<std::size_t>(count) * sizeof(FitResult),
                                             cudaMemcpyDeviceToHost, stream));
      } else {
        NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(dst, s.d_out.get(), static_cast<std::size_t>(count) * sizeof(FitResult),
                                             cudaMemcpyDeviceToHost, stream));
      }
      s.pending_dst = dst;
      s.pending_count = count;
      s.pending_staged = !direct_out;
      s.busy = true;
    }
    for (auto& s : im.slots) im.finish(s);
  } catch (...) {
    for (auto& s : im.slots) {
      cudaStreamSynchronize(s.stream.get());
      s.busy = false;
    }
    throw;
  }
}

namespace {

class CudaFitEngine final : public FitEngine {
 public:
  CudaFitEngine(const std::vector<int>& gpus, const FitSettings& settings, const FitPlanOptions& options) {
    if (gpus.empty()) throw DeviceError("fit", "no GPU was selected for the CUDA backend");
    for (int g : gpus) plans_.emplace_back(g, settings, options);
  }

  void fit(const RoiBatch& batch, std::span<FitResult> out) override {
    batch.validate();
    if (static_cast<std::int64_t>(out.size()) != batch.count)
      throw UsageError("fit", "the result buffer holds " + std::to_string(out.size()) + " fits, the batch " +
                                  std::to_string(batch.count));
    const std::int64_t parts = std::min<std::int64_t>(static_cast<std::int64_t>(plans_.size()),
                                                      std::max<std::int64_t>(1, batch.count / kMinSplitFits));
    if (parts <= 1) {
      plans_.front().fit(batch, out);
      return;
    }
    // cuda:all: contiguous, nearly equal parts, one host thread per GPU.
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(parts));
    std::vector<std::thread> threads;
    const std::int64_t n = batch.roi_pixels() * static_cast<std::int64_t>(bytes_per_pixel(batch.type));
    for (std::int64_t p = 0; p < parts; ++p) {
      const std::int64_t first = batch.count * p / parts;
      const std::int64_t last = batch.count * (p + 1) / parts;
      RoiBatch part = batch;
      part.pixels = static_cast<const unsigned char*>(batch.pixels) + first * n;
      part.count = last - first;
      part.initial = batch.initial ? batch.initial + first : nullptr;
      part.variance_shift = batch.variance_shift ? batch.variance_shift + first * batch.roi_pixels() : nullptr;
      threads.emplace_back([this, p, part, out, first, &errors] {
        try {
          plans_[static_cast<std::size_t>(p)].fit(
              part, out.subspan(static_cast<std::size_t>(first), static_cast<std::size_t>(part.count)));
        } catch (...) {
          errors[static_cast<std::size_t>(p)] = std::current_exception();
        }
      });
    }
    for (auto& t : threads) t.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
  }

  std::string name() const override {
    std::string s;
    for (const auto& p : plans_) s += (s.empty() ? "cuda:" : ",cuda:") + std::to_string(p.device());
    return s;
  }

 private:
  std::vector<FitPlan> plans_;
};

}  // namespace

std::unique_ptr<FitEngine> make_cuda_fit_engine(const std::vector<int>& gpus, const FitSettings& settings,
                                                const FitPlanOptions& options) {
  return std::make_unique<CudaFitEngine>(gpus, settings, options);
}

}  // namespace nanoscopy::cuda
