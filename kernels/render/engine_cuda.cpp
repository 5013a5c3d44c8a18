#include "render/engine_cuda.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/cuda_check.hpp"
#include "common/owners.hpp"
#include "nanoscopy/core/error.hpp"
#include "render/render_kernels.hpp"

namespace nanoscopy::cuda {
namespace {

using render_math::RenderPoint;

class CudaRenderEngine final : public RenderEngine {
 public:
  CudaRenderEngine(int gpu, const RenderGeometry& g) : RenderEngine(g), gpu_(gpu), guard_(gpu) {
    cudaDeviceProp prop{};
    NANOSCOPY_CUDA_CHECK(cudaGetDeviceProperties(&prop, gpu));
    name_ = "cuda:" + std::to_string(gpu) + " (" + prop.name + ")";
    blocks_ = 8 * prop.multiProcessorCount;
    const auto pixels = static_cast<std::size_t>(g.width * g.height);
    std::size_t free_bytes = 0, total_bytes = 0;
    NANOSCOPY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const double need = static_cast<double>(pixels * sizeof(float) * (g.z_sum ? 2 : 1));
    if (need > 0.9 * static_cast<double>(free_bytes))
      throw DeviceMemoryError(name_, "a " + std::to_string(g.width) + " x " + std::to_string(g.height) +
                                         " picture needs " + std::to_string(static_cast<long long>(need / 1e6)) +
                                         " MB of device memory, " + std::to_string(free_bytes / 1000000) +
                                         " MB are free (choose a larger --pixel, or --device cpu)");
    density_ = DeviceBuffer<float>(pixels);
    NANOSCOPY_CUDA_CHECK(cudaMemsetAsync(density_.get(), 0, density_.bytes(), stream_.get()));
    if (g.z_sum) {
      z_sum_ = DeviceBuffer<float>(pixels);
      NANOSCOPY_CUDA_CHECK(cudaMemsetAsync(z_sum_.get(), 0, z_sum_.bytes(), stream_.get()));
    }
  }

  std::string name() const override { return name_; }

  std::span<RenderPoint> buffer(std::size_t count) override {
    DeviceGuard guard(gpu_);
    current_ = 1 - current_;
    Slot& slot = slots_[static_cast<std::size_t>(current_)];
    if (slot.used) slot.done.synchronize();  // its previous chunk's transfer is complete
    slot.used = false;
    grow(slot.host, count);
    return {slot.host.get(), count};
  }

  void add(std::span<const RenderPoint> points) override {
    if (points.empty()) return;
    DeviceGuard guard(gpu_);
    Slot* slot = &slots_[static_cast<std::size_t>(current_)];
    const auto at = [](const RenderPoint* p) { return reinterpret_cast<std::uintptr_t>(p); };
    const bool from_slot = slot->host.get() && at(points.data()) >= at(slot->host.get()) &&
                           at(points.data() + points.size()) <= at(slot->host.get() + slot->host.size());
    if (!from_slot) {
      // Memory of the caller's: staged through the next slot (the same path as buffer()).
      const std::span<RenderPoint> room = buffer(points.size());
      std::memcpy(room.data(), points.data(), points.size_bytes());
      slot = &slots_[static_cast<std::size_t>(current_)];
    }
    const cudaStream_t s = stream_.get();
    grow(slot->device, points.size());
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(slot->device.get(), points.data(), points.size_bytes(), cudaMemcpyHostToDevice, s));
    slot->done.record(s);
    slot->used = true;
    const auto count = static_cast<std::int64_t>(points.size());
    float* z = geometry_.z_sum ? z_sum_.get() : nullptr;
    if (geometry_.mode == RenderMode::histogram)
      launch_render_histogram(slot->device.get(), count, geometry_.width, geometry_.height, density_.get(), z, blocks_, s);
    else
      launch_render_gaussian(slot->device.get(), count, geometry_.width, geometry_.height, density_.get(), z, blocks_, s);
  }

  void read(std::span<float> density, std::span<float> z_sum) override {
    if (density.size() != density_.size() || (geometry_.z_sum && z_sum.size() != z_sum_.size()))
      throw UsageError("render", "read into images of the wrong size");
    DeviceGuard guard(gpu_);
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(density.data(), density_.get(), density_.bytes(), cudaMemcpyDeviceToHost, stream_.get()));
    if (geometry_.z_sum)
      NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(z_sum.data(), z_sum_.get(), z_sum_.bytes(), cudaMemcpyDeviceToHost, stream_.get()));
    stream_.synchronize();
  }

 private:
  // A chunk's page-locked host buffer and its device copy; `done` marks the end of the upload (the host
  // buffer is free again); the device copy is reused only after the kernels that read it, which the one
  // stream orders.
  struct Slot {
    PinnedBuffer<RenderPoint> host;
    DeviceBuffer<RenderPoint> device;
    Event done{cudaEventDisableTiming};
    bool used = false;
  };

  int gpu_;
  DeviceGuard guard_;  // the GPU is current while the members below are made and destroyed
  std::string name_;
  int blocks_ = 0;
  Stream stream_;
  DeviceBuffer<float> density_, z_sum_;
  std::array<Slot, 2> slots_;
  int current_ = 1;  // the slot buffer() gave last
};

}  // namespace

std::unique_ptr<RenderEngine> make_cuda_render_engine(int gpu, const RenderGeometry& geometry) {
  validate_render_geometry(geometry, "render");
  return std::make_unique<CudaRenderEngine>(gpu, geometry);
}

}  // namespace nanoscopy::cuda
