#include "undrift/engine_cuda.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/cufft_plan.hpp"
#include "common/owners.hpp"
#include "nanoscopy/core/error.hpp"
#include "undrift/rcc_kernels.hpp"

namespace nanoscopy::cuda {
namespace {

// Pairs per batched inverse transform at most: enough to fill the GPU with
// 1,024² grids; more only grows the buffer.
constexpr int kMaxBatch = 64;

std::string megabytes(double bytes) { return std::to_string(static_cast<long long>(bytes / 1e6 + 0.5)) + " MB"; }

class CudaCorrelationEngine final : public CorrelationEngine {
 public:
  CudaCorrelationEngine(int gpu, const CorrelationGeometry& g)
      : CorrelationEngine(g), gpu_(gpu), guard_(gpu), columns_(g.width / 2 + 1) {
    cudaDeviceProp prop{};
    NANOSCOPY_CUDA_CHECK(cudaGetDeviceProperties(&prop, gpu));
    name_ = "cuda:" + std::to_string(gpu) + " (" + prop.name + ", cuFFT)";
    blocks_ = 4 * prop.multiProcessorCount;
    image_ = DeviceBuffer<float>(static_cast<std::size_t>(g.width * g.height));
    const std::vector<float> gx = correlation_blur_transfer(g.width, columns_, g.blur_px);
    const std::vector<float> gy = correlation_blur_transfer(g.height, g.height, g.blur_px);
    gx_ = DeviceBuffer<float>(gx.size());
    gy_ = DeviceBuffer<float>(gy.size());
    NANOSCOPY_CUDA_CHECK(cudaMemcpy(gx_.get(), gx.data(), gx_.bytes(), cudaMemcpyHostToDevice));
    NANOSCOPY_CUDA_CHECK(cudaMemcpy(gy_.get(), gy.data(), gy_.bytes(), cudaMemcpyHostToDevice));
    forward_.make_many_r2c(static_cast<int>(g.height), static_cast<int>(g.width), 1);
    NANOSCOPY_CUFFT_CHECK(cufftSetStream(forward_.get(), stream_.get()));
  }

  std::string name() const override { return name_; }

  void add_segment(std::span<const float> image) override {
    if (static_cast<std::int64_t>(image.size()) != geometry_.width * geometry_.height)
      throw InputError("undrift", "a segment image of " + std::to_string(image.size()) + " values for a grid of " +
                                      std::to_string(geometry_.width * geometry_.height));
    DeviceGuard guard(gpu_);
    NANOSCOPY_CUDA_CHECK(
        cudaMemcpyAsync(image_.get(), image.data(), image_.bytes(), cudaMemcpyHostToDevice, stream_.get()));
    transform_segment();
  }

  void add_segment_points(std::span<const rcc_math::GridPoint> points) override {
    DeviceGuard guard(gpu_);
    const cudaStream_t s = stream_.get();
    if (!points.empty()) {
      // The previous segment's work is complete (transform_segment synchronizes): the buffer is free.
      grow(points_, points.size());
      NANOSCOPY_CUDA_CHECK(
          cudaMemcpyAsync(points_.get(), points.data(), points.size_bytes(), cudaMemcpyHostToDevice, s));
    }
    NANOSCOPY_CUDA_CHECK(cudaMemsetAsync(image_.get(), 0, image_.bytes(), s));
    launch_rcc_deposit(points_.get(), static_cast<std::int64_t>(points.size()), geometry_.width, geometry_.height,
                       image_.get(), blocks_, s);
    transform_segment();
  }

  std::int64_t segments() const override { return static_cast<std::int64_t>(spectra_.size()); }
  std::size_t spectrum_bytes() const override { return spectra_.size() * spectrum_count() * sizeof(float2); }

  void correlate(std::span<const SegmentPair> pairs, std::span<CorrelationPeak> peaks) override {
    if (pairs.size() != peaks.size()) throw UsageError("undrift", "pairs and peaks differ in length");
    for (const SegmentPair& p : pairs)
      if (p.i < 0 || p.j < 0 || p.i >= segments() || p.j >= segments())
        throw UsageError("undrift", "a pair names a segment that was not added");
    if (pairs.empty()) return;
    DeviceGuard guard(gpu_);
    allocate_batch();
    const cudaStream_t s = stream_.get();
    const std::int64_t row_stride = 2 * columns_;
    for (std::size_t first = 0; first < pairs.size(); first += static_cast<std::size_t>(batch_)) {
      const int count = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(batch_), pairs.size() - first));
      // The previous batch's table and peaks were read (synchronized below) before they are overwritten.
      for (int k = 0; k < count; ++k) {
        const SegmentPair& p = pairs[first + static_cast<std::size_t>(k)];
        table_host_[static_cast<std::size_t>(k)] = spectra_[static_cast<std::size_t>(p.i)].get();
        table_host_[static_cast<std::size_t>(batch_ + k)] = spectra_[static_cast<std::size_t>(p.j)].get();
      }
      NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(table_.get(), table_host_.get(), table_.bytes(), cudaMemcpyHostToDevice, s));
      launch_rcc_products(table_.get(), table_.get() + batch_, gx_.get(), gy_.get(), geometry_.height, columns_,
                          products_.get(), count, blocks_, s);
      NANOSCOPY_CUFFT_CHECK(cufftExecC2R(inverse_plan(count), reinterpret_cast<cufftComplex*>(products_.get()),
                                         reinterpret_cast<cufftReal*>(products_.get())));
      launch_rcc_peaks(reinterpret_cast<const float*>(products_.get()), geometry_.width, geometry_.height, row_stride,
                       geometry_.max_shift_px, peaks_.get(), count, s);
      NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(peaks_host_.get(), peaks_.get(), static_cast<std::size_t>(count) * sizeof(DevicePeak),
                                           cudaMemcpyDeviceToHost, s));
      stream_.synchronize();
      for (int k = 0; k < count; ++k) {
        const DevicePeak& d = peaks_host_[static_cast<std::size_t>(k)];
        CorrelationPeak& out = peaks[first + static_cast<std::size_t>(k)];
        out.shift_x = d.shift_x;
        out.shift_y = d.shift_y;
        out.found = d.found != 0;
        for (std::size_t w = 0; w < out.window.size(); ++w) out.window[w] = static_cast<double>(d.window[w]);
      }
    }
  }

 private:
  std::size_t spectrum_count() const { return static_cast<std::size_t>(geometry_.height * columns_); }

  // Free device memory, or DeviceMemoryError saying what `what` needs.
  void require(double bytes, const std::string& what) const {
    std::size_t free_bytes = 0, total_bytes = 0;
    NANOSCOPY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (bytes > 0.9 * static_cast<double>(free_bytes))
      throw DeviceMemoryError(name_, what + " needs " + megabytes(bytes) + " of device memory, " +
                                         megabytes(static_cast<double>(free_bytes)) +
                                         " are free (a larger --segment or a smaller --max-grid needs less; or "
                                         "--device cpu)");
  }

  // The spectrum of image_, kept on the device.
  void transform_segment() {
    const double bytes = static_cast<double>(spectrum_count() * sizeof(float2));
    require(bytes, "the spectrum of segment " + std::to_string(spectra_.size() + 1) + " (" +
                       megabytes(bytes * static_cast<double>(spectra_.size() + 1)) + " for all so far)");
    DeviceBuffer<float2> spectrum(spectrum_count());
    NANOSCOPY_CUFFT_CHECK(cufftExecR2C(forward_.get(), image_.get(), reinterpret_cast<cufftComplex*>(spectrum.get())));
    stream_.synchronize();  // the points' upload is complete before their buffer can be reused
    spectra_.push_back(std::move(spectrum));
  }

  // The batch buffers, once, sized by the device memory left after the spectra: the products (in place
  // with their maps) and cuFFT's work area of about as much again.
  void allocate_batch() {
    if (batch_ > 0) return;
    const double per_pair = 2.0 * static_cast<double>(spectrum_count() * sizeof(float2));
    std::size_t free_bytes = 0, total_bytes = 0;
    NANOSCOPY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    batch_ = static_cast<int>(std::clamp(0.5 * static_cast<double>(free_bytes) / per_pair, 1.0,
                                         static_cast<double>(kMaxBatch)));
    require(per_pair * batch_, "a batch of " + std::to_string(batch_) + " correlations");
    products_ = DeviceBuffer<float2>(static_cast<std::size_t>(batch_) * spectrum_count());
    table_ = DeviceBuffer<const float2*>(static_cast<std::size_t>(2 * batch_));
    table_host_ = PinnedBuffer<const float2*>(static_cast<std::size_t>(2 * batch_));
    peaks_ = DeviceBuffer<DevicePeak>(static_cast<std::size_t>(batch_));
    peaks_host_ = PinnedBuffer<DevicePeak>(static_cast<std::size_t>(batch_));
  }

  // A plan of exactly `count` transforms (a short last batch does not transform stale slots); plans are
  // kept per count, at most a few (the calls of rcc.cpp have one or two sizes).
  cufftHandle inverse_plan(int count) {
    auto it = inverse_.find(count);
    if (it == inverse_.end()) {
      if (inverse_.size() >= 4)  // keep the full batch's plan, drop a short one
        for (auto old = inverse_.begin(); old != inverse_.end(); ++old)
          if (old->first != batch_) {
            inverse_.erase(old);
            break;
          }
      it = inverse_.try_emplace(count).first;
      it->second.make_many_c2r_in_place(static_cast<int>(geometry_.height), static_cast<int>(geometry_.width), count);
      NANOSCOPY_CUFFT_CHECK(cufftSetStream(it->second.get(), stream_.get()));
    }
    return it->second.get();
  }

  int gpu_;
  DeviceGuard guard_;  // the GPU is current while the members below are made and destroyed
  std::int64_t columns_;
  std::string name_;
  int blocks_ = 0;
  int batch_ = 0;
  Stream stream_;
  DeviceBuffer<float> image_;
  DeviceBuffer<float> gx_, gy_;
  DeviceBuffer<rcc_math::GridPoint> points_;
  std::vector<DeviceBuffer<float2>> spectra_;
  DeviceBuffer<float2> products_;
  DeviceBuffer<const float2*> table_;
  PinnedBuffer<const float2*> table_host_;
  DeviceBuffer<DevicePeak> peaks_;
  PinnedBuffer<DevicePeak> peaks_host_;
  CufftPlan forward_;
  std::map<int, CufftPlan> inverse_;
};

}  // namespace

std::unique_ptr<CorrelationEngine> make_cuda_correlation_engine(int gpu, const CorrelationGeometry& geometry) {
  validate_correlation_geometry(geometry, "undrift");
  return std::make_unique<CudaCorrelationEngine>(gpu, geometry);
}

}  // namespace nanoscopy::cuda
