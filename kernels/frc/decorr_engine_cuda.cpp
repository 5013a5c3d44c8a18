#include "frc/decorr_engine_cuda.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/cufft_plan.hpp"
#include "common/owners.hpp"
#include "frc/decorr_kernels.hpp"
#include "nanoscopy/core/error.hpp"

namespace nanoscopy::cuda {
namespace {

class CudaDecorrEngine final : public DecorrEngine {
 public:
  CudaDecorrEngine(int gpu, const DecorrGeometry& g) : DecorrEngine(g), gpu_(gpu), guard_(gpu) {
    const std::int64_t w = g.width, h = g.height, n = w * h;
    cudaDeviceProp prop{};
    NANOSCOPY_CUDA_CHECK(cudaGetDeviceProperties(&prop, gpu));
    name_ = "cuda:" + std::to_string(gpu) + " (" + prop.name + ")";
    columns_ = w / 2 + 1;
    // Enough blocks to fill the GPU, no more than the work items (rows x runs of 8 coefficients).
    const std::int64_t items = h * ((columns_ + 7) / 8);
    blocks_ = static_cast<int>(std::clamp<std::int64_t>((items + 255) / 256, 1, 4LL * prop.multiProcessorCount));
    stride_max_ = decorr_sums_stride(kMaxDecorrRadii, kMaxDecorrFilters);

    std::size_t free_bytes = 0, total_bytes = 0;
    NANOSCOPY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    // image and apodized image (float), spectrum (float2), and a cuFFT work area of about the spectrum again
    const double need =
        static_cast<double>(2 * n) * sizeof(float) + 2.0 * static_cast<double>(h * columns_) * sizeof(float2);
    if (need > 0.9 * static_cast<double>(free_bytes))
      throw DeviceError(name_, "decorrelation analysis of " + std::to_string(w) + "x" + std::to_string(h) +
                                   " px needs about " + std::to_string(static_cast<long long>(need / 1e6)) +
                                   " MB of device memory, " +
                                   std::to_string(static_cast<long long>(free_bytes / 1000000)) + " MB are free");
    image_ = DeviceBuffer<float>(static_cast<std::size_t>(n));
    real_ = DeviceBuffer<float>(static_cast<std::size_t>(n));
    spectrum_ = DeviceBuffer<float2>(static_cast<std::size_t>(h * columns_));
    window_ = DeviceBuffer<float>(static_cast<std::size_t>(w + h));
    mean_parts_ = DeviceBuffer<float>(static_cast<std::size_t>(blocks_));
    partials_ = DeviceBuffer<float>(static_cast<std::size_t>(blocks_) * static_cast<std::size_t>(stride_max_));
    sums_ = DeviceBuffer<float>(static_cast<std::size_t>(stride_max_));
    sums_host_ = PinnedBuffer<float>(static_cast<std::size_t>(stride_max_));
    // The apodization masks: the same host values as the CPU engine's (decorr.cpp), as float.
    std::vector<float> window;
    for (double v : decorr_apodization(w, g.apodization_px)) window.push_back(static_cast<float>(v));
    for (double v : decorr_apodization(h, g.apodization_px)) window.push_back(static_cast<float>(v));
    NANOSCOPY_CUDA_CHECK(
        cudaMemcpy(window_.get(), window.data(), window.size() * sizeof(float), cudaMemcpyHostToDevice));
    plan_.make_many_r2c(static_cast<int>(h), static_cast<int>(w), 1);
    NANOSCOPY_CUFFT_CHECK(cufftSetStream(plan_.get(), stream_.get()));
  }

  std::string name() const override { return name_; }

  void upload(std::span<const float> image) override {
    const std::int64_t n = geometry_.width * geometry_.height;
    if (static_cast<std::int64_t>(image.size()) != n)
      throw InputError("decorr", "an image of " + std::to_string(image.size()) + " pixels, the engine is planned for " +
                                     std::to_string(n));
    DeviceGuard guard(gpu_);
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(image_.get(), image.data(), image.size() * sizeof(float),
                                         cudaMemcpyHostToDevice, stream_.get()));
  }

  void transform() override {
    DeviceGuard guard(gpu_);
    const std::int64_t w = geometry_.width, h = geometry_.height;
    const cudaStream_t s = stream_.get();
    launch_decorr_partial_sums(image_.get(), w * h, mean_parts_.get(), blocks_, s);
    launch_decorr_apodize(image_.get(), window_.get(), window_.get() + w, w, h, mean_parts_.get(), blocks_, real_.get(),
                          blocks_, s);
    NANOSCOPY_CUFFT_CHECK(cufftExecR2C(plan_.get(), real_.get(), reinterpret_cast<cufftComplex*>(spectrum_.get())));
  }

  void synchronize() override { stream_.synchronize(); }

  DecorrSums sums(const DecorrPass& pass) override {
    DeviceGuard guard(gpu_);
    const int nr = pass.nr, nf = static_cast<int>(pass.g.size());
    if (nr < 2 || nr > kMaxDecorrRadii || nf < 1 || nf > kMaxDecorrFilters)
      throw UsageError("decorr", "a pass of " + std::to_string(nr) + " radii and " + std::to_string(nf) +
                                     " filters is outside the engine's limits");
    DecorrPassParams p;
    p.width = geometry_.width;
    p.height = geometry_.height;
    p.inv_hx = 1.0f / static_cast<float>(geometry_.width / 2);
    p.inv_hy = 1.0f / static_cast<float>(geometry_.height / 2);
    const double step = (pass.r_max - pass.r_min) / (nr - 1);
    p.r_min = static_cast<float>(pass.r_min);
    p.inv_step = step > 0 ? static_cast<float>(1.0 / step) : 0.0f;
    p.nr = nr;
    p.nf = nf;
    for (int f = 0; f < nf; ++f) {
      const double g = pass.g[static_cast<std::size_t>(f)];
      p.two_g2[f] = g > 0 ? static_cast<float>(2 * g * g) : -1.0f;
    }
    const int stride = decorr_sums_stride(nr, nf);
    const cudaStream_t s = stream_.get();
    launch_decorr_histogram(spectrum_.get(), p, partials_.get(), blocks_, s);
    launch_decorr_reduce(partials_.get(), blocks_, stride, sums_.get(), s);
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(sums_host_.get(), sums_.get(),
                                         static_cast<std::size_t>(stride) * sizeof(float), cudaMemcpyDeviceToHost, s));
    stream_.synchronize();
    const float* v = sums_host_.get();
    DecorrSums out;
    out.amplitude.assign(v, v + nf * nr);
    out.count.assign(v + nf * nr, v + nf * nr + nr);
    out.power.assign(v + nf * nr + nr, v + stride);
    return out;
  }

 private:
  int gpu_;
  DeviceGuard guard_;  // the GPU is current while the members below are made and destroyed
  std::string name_;
  std::int64_t columns_ = 0;
  int blocks_ = 0, stride_max_ = 0;
  Stream stream_;
  DeviceBuffer<float> image_, real_;
  DeviceBuffer<float2> spectrum_;
  DeviceBuffer<float> window_, mean_parts_, partials_, sums_;
  PinnedBuffer<float> sums_host_;
  CufftPlan plan_;
};

}  // namespace

std::unique_ptr<DecorrEngine> make_cuda_decorr_engine(int gpu, const DecorrGeometry& geometry) {
  check_decorr_geometry(geometry);
  return std::make_unique<CudaDecorrEngine>(gpu, geometry);
}

}  // namespace nanoscopy::cuda
