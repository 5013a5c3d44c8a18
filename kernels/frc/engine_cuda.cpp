#include "frc/engine_cuda.hpp"

#include <cuda_runtime.h>

#include <string>
#include <utility>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/cufft_plan.hpp"
#include "common/owners.hpp"
#include "frc/frc_kernels.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/frc/frc_math.hpp"
#include "nanoscopy/frc/frc_validate.hpp"

namespace nanoscopy::cuda {
namespace {

class CudaFrcEngine final : public FrcEngine {
 public:
  CudaFrcEngine(int gpu, const FrcGeometry& g) : FrcEngine(g), gpu_(gpu), guard_(gpu) {
    const std::int64_t w = g.width, h = g.height, n = w * h;
    if (n >= (1LL << 31))
      throw DeviceError("cuda:" + std::to_string(gpu), "an image of " + std::to_string(w) + "x" + std::to_string(h) +
                                                           " px is too large for the CUDA FRC (use --device cpu)");
    cudaDeviceProp prop{};
    NANOSCOPY_CUDA_CHECK(cudaGetDeviceProperties(&prop, gpu));
    name_ = "cuda:" + std::to_string(gpu) + " (" + prop.name + ")";
    shared_limit_ = prop.sharedMemPerBlockOptin;
    blocks_ = 4 * prop.multiProcessorCount;
    rings_ = frc_math::last_ring(w, h) + 1;
    columns_ = w / 2 + 1;

    std::size_t free_bytes = 0, total_bytes = 0;
    NANOSCOPY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    // inputs (float), windowed (double), spectra (double2), and a cuFFT work area of about the spectra again
    const double need = static_cast<double>(2 * n) * (sizeof(float) + sizeof(double)) +
                        2.0 * static_cast<double>(2 * h * columns_) * sizeof(double2);
    if (need > 0.9 * static_cast<double>(free_bytes))
      throw DeviceError(name_, "an FRC of " + std::to_string(w) + "x" + std::to_string(h) + " needs about " +
                                   std::to_string(static_cast<long long>(need / 1e6)) + " MB of device memory, " +
                                   std::to_string(static_cast<long long>(free_bytes / 1000000)) + " MB are free");

    images_ = DeviceBuffer<float>(static_cast<std::size_t>(2 * n));
    real_ = DeviceBuffer<double>(static_cast<std::size_t>(2 * n));
    spectra_ = DeviceBuffer<double2>(static_cast<std::size_t>(2 * h * columns_));
    window_ = DeviceBuffer<double>(static_cast<std::size_t>(w + h));
    sums_ = DeviceBuffer<double>(static_cast<std::size_t>(3 * rings_));
    sums_host_ = PinnedBuffer<double>(static_cast<std::size_t>(3 * rings_));
    // The window is computed once on the host (frc.cpp) and uploaded, so both engines use the same values.
    std::vector<double> window = tukey_window(w, g.tukey_fraction);
    const std::vector<double> wy = tukey_window(h, g.tukey_fraction);
    window.insert(window.end(), wy.begin(), wy.end());
    NANOSCOPY_CUDA_CHECK(
        cudaMemcpy(window_.get(), window.data(), window.size() * sizeof(double), cudaMemcpyHostToDevice));
    pixels_ = frc_ring_pixels(w, h);
    radii_ = frc_ring_radii(w, h);  // the rings' frequencies: the same host values as the CPU engine's

    plan_.make_many_d2z(static_cast<int>(h), static_cast<int>(w), 2);
    NANOSCOPY_CUFFT_CHECK(cufftSetStream(plan_.get(), stream_.get()));
  }

  std::string name() const override { return name_; }

  FrcRingSums ring_sums(std::span<const float> a, std::span<const float> b) override {
    check_frc_inputs(a, b, geometry_);
    DeviceGuard guard(gpu_);
    const std::int64_t w = geometry_.width, h = geometry_.height, n = w * h;
    const cudaStream_t s = stream_.get();
    const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(images_.get(), a.data(), bytes, cudaMemcpyHostToDevice, s));
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(images_.get() + n, b.data(), bytes, cudaMemcpyHostToDevice, s));
    launch_frc_window(images_.get(), images_.get() + n, window_.get(), window_.get() + w, w, h, real_.get(), blocks_,
                      s);
    NANOSCOPY_CUFFT_CHECK(
        cufftExecD2Z(plan_.get(), real_.get(), reinterpret_cast<cufftDoubleComplex*>(spectra_.get())));
    NANOSCOPY_CUDA_CHECK(cudaMemsetAsync(sums_.get(), 0, sums_.bytes(), s));
    launch_frc_ring_sums(spectra_.get(), w, h, rings_, sums_.get(), blocks_, shared_limit_, s);
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(sums_host_.get(), sums_.get(), sums_.bytes(), cudaMemcpyDeviceToHost, s));
    stream_.synchronize();

    FrcRingSums out;
    const double* p = sums_host_.get();
    const auto r = static_cast<std::size_t>(rings_);
    out.cross.assign(p, p + r);
    out.power1.assign(p + r, p + 2 * r);
    out.power2.assign(p + 2 * r, p + 3 * r);
    out.pixels = pixels_;
    out.radius = radii_;
    return out;
  }

 private:
  int gpu_;
  DeviceGuard guard_;  // the GPU is current while the members below are made and destroyed
  std::string name_;
  std::size_t shared_limit_ = 0;
  int blocks_ = 0;
  std::int64_t rings_ = 0, columns_ = 0;
  Stream stream_;
  DeviceBuffer<float> images_;
  DeviceBuffer<double> real_;
  DeviceBuffer<double2> spectra_;
  DeviceBuffer<double> window_;
  DeviceBuffer<double> sums_;
  PinnedBuffer<double> sums_host_;
  std::vector<std::int64_t> pixels_;
  std::vector<double> radii_;
  CufftPlan plan_;
};

}  // namespace

std::unique_ptr<FrcEngine> make_cuda_frc_engine(int gpu, const FrcGeometry& geometry) {
  check_frc_geometry(geometry);
  return std::make_unique<CudaFrcEngine>(gpu, geometry);
}

}  // namespace nanoscopy::cuda
