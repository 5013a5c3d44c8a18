#include "sofi/deconvolve_engine_cuda.hpp"

#include <cuda_runtime.h>

#include <string>

#include "common/cuda_check.hpp"
#include "common/owners.hpp"
#include "nanoscopy/core/error.hpp"
#include "sofi/deconvolve_kernels.hpp"

namespace nanoscopy::cuda {
namespace {

class CudaDeconvolveEngine final : public DeconvolveEngine {
 public:
  explicit CudaDeconvolveEngine(int gpu) : gpu_(gpu), guard_(gpu) {
    cudaDeviceProp prop{};
    NANOSCOPY_CUDA_CHECK(cudaGetDeviceProperties(&prop, gpu));
    name_ = "cuda:" + std::to_string(gpu) + " (" + prop.name + ")";
  }

  std::string name() const override { return name_; }

  void iterate(std::span<const float> y, std::span<float> x, std::int64_t w, std::int64_t h, const PsfKernel& kernel,
               int iterations, float floor) override {
    if (kernel.taps.size() > 129) throw UsageError("deconvolution", "a PSF kernel of more than 129 taps on the GPU");
    DeviceGuard guard(gpu_);
    const std::size_t n = y.size();
    if (y_.size() < n) {
      y_ = DeviceBuffer<float>(n), x_ = DeviceBuffer<float>(n), tmp_ = DeviceBuffer<float>(n);
      ratio_ = DeviceBuffer<float>(n);
    }
    taps_ = DeviceBuffer<float>(kernel.taps.size());
    cudaStream_t s = stream_.get();
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(taps_.get(), kernel.taps.data(), taps_.bytes(), cudaMemcpyHostToDevice, s));
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(y_.get(), y.data(), n * sizeof(float), cudaMemcpyHostToDevice, s));
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(x_.get(), y_.get(), n * sizeof(float), cudaMemcpyDeviceToDevice, s));
    const RlImage im{w, h, taps_.get(), kernel.radius};
    for (int it = 0; it < iterations; ++it) {
      launch_rl_rows(im, false, x_.get(), tmp_.get(), s);
      launch_rl_columns(im, false, ColumnStep::ratio, tmp_.get(), y_.get(), floor, ratio_.get(), s);
      launch_rl_rows(im, true, ratio_.get(), tmp_.get(), s);
      launch_rl_columns(im, true, ColumnStep::multiply, tmp_.get(), nullptr, 0.0f, x_.get(), s);
    }
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(x.data(), x_.get(), n * sizeof(float), cudaMemcpyDeviceToHost, s));
    NANOSCOPY_CUDA_CHECK(cudaStreamSynchronize(s));
  }

 private:
  int gpu_;
  DeviceGuard guard_;
  std::string name_;
  Stream stream_;
  DeviceBuffer<float> y_, x_, tmp_, ratio_, taps_;
};

}  // namespace

std::unique_ptr<DeconvolveEngine> make_cuda_deconvolve_engine(int gpu) {
  return std::make_unique<CudaDeconvolveEngine>(gpu);
}

}  // namespace nanoscopy::cuda
