// The CUDA eSRRF engine: the slots' temporal sums live on one GPU; per chunk the
// frames are uploaded on a copy stream into one of two device buffers (so the
// upload of chunk k + 1 runs while the kernels of chunk k do), then the compute
// stream converts, takes the gradients and lattices and runs the RGC kernel.
// accumulate() returns once the upload has finished (the frame source may then
// reuse its host buffer), before the kernels have.
#include "sofi/esrrf_engine_cuda.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/owners.hpp"
#include "common/pinned_memory.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/pixel_type.hpp"
#include "sofi/esrrf_kernels.hpp"

namespace nanoscopy::cuda {
namespace {

class CudaEsrrfEngine final : public EsrrfEngine {
 public:
  CudaEsrrfEngine(int gpu, const EsrrfGeometry& g, const EsrrfSettings& s, std::int64_t chunk_frames)
      : gpu_(gpu), guard_(gpu), g_(g), table_(make_rgc_table(s)) {
    if (g.slots > kEsrrfMaxSlots)
      throw UsageError("--step", "more than " + std::to_string(kEsrrfMaxSlots) +
                                     " overlapping time points on the GPU (frames per timepoint / step); use a larger "
                                     "--step or --device cpu");
    cudaDeviceProp prop{};
    NANOSCOPY_CUDA_CHECK(cudaGetDeviceProperties(&prop, gpu));
    name_ = "cuda:" + std::to_string(gpu) + " (" + prop.name + ")";
    const int m = table_.magnification;
    out_pixels_ = g.width * m * g.height * m;
    state_ = DeviceBuffer<float>(static_cast<std::size_t>(g.slots) * 5 * static_cast<std::size_t>(out_pixels_));
    NANOSCOPY_CUDA_CHECK(cudaMemset(state_.get(), 0, state_.bytes()));
    taps_ = DeviceBuffer<esrrf_math::RgcTap>(std::max<std::size_t>(table_.taps.size(), 1));
    offset_ = DeviceBuffer<int>(table_.offset.size());
    NANOSCOPY_CUDA_CHECK(cudaMemcpy(taps_.get(), table_.taps.data(), table_.taps.size() * sizeof(esrrf_math::RgcTap),
                                    cudaMemcpyHostToDevice));
    NANOSCOPY_CUDA_CHECK(cudaMemcpy(offset_.get(), table_.offset.data(), offset_.bytes(), cudaMemcpyHostToDevice));
    // Per frame of a chunk: two raw copies, the float frame, two gradients, two lattices.
    const std::int64_t px = g.width * g.height, lp = (2 * g.width + 1) * (2 * g.height + 1);
    const double per_frame = 4.0 * static_cast<double>(2 * px + px + 2 * px + 2 * lp);
    std::size_t free_bytes = 0, total = 0;
    NANOSCOPY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    const auto fit = static_cast<std::int64_t>(0.25 * static_cast<double>(free_bytes) / per_frame);
    if (fit < 1)
      throw DeviceError(name_, "not enough GPU memory for one frame of " + std::to_string(g.width) + "x" +
                                   std::to_string(g.height) + " at magnification " + std::to_string(m));
    chunk_ = std::max<std::int64_t>(1, std::min(chunk_frames, fit));
    for (auto& r : raw_) r = DeviceBuffer<float>(static_cast<std::size_t>(chunk_ * px));
    frames_ = DeviceBuffer<float>(static_cast<std::size_t>(chunk_ * px));
    gc_ = DeviceBuffer<float>(static_cast<std::size_t>(chunk_ * px));
    gr_ = DeviceBuffer<float>(static_cast<std::size_t>(chunk_ * px));
    g2c_ = DeviceBuffer<float>(static_cast<std::size_t>(chunk_ * lp));
    g2r_ = DeviceBuffer<float>(static_cast<std::size_t>(chunk_ * lp));
    view_ = table_.view();
    view_.taps = taps_.get();
    view_.offset = offset_.get();
  }

  std::string name() const override { return name_; }
  std::int64_t chunk_capacity() const override { return chunk_; }

  HostBuffer allocate_host(std::size_t bytes) override {
    DeviceGuard guard(gpu_);
    return pinned_host_buffer(bytes);
  }

  void accumulate(const EsrrfChunk& chunk) override {
    DeviceGuard guard(gpu_);
    if (chunk.count > chunk_) throw std::logic_error("esrrf: chunk larger than the engine's capacity");
    if (static_cast<int>(chunk.slots.size()) > g_.slots) throw std::logic_error("esrrf: more slots than planned");
    const std::int64_t px = g_.width * g_.height;
    const bool u16 = chunk.type == PixelType::u16;
    const std::size_t bytes = static_cast<std::size_t>(chunk.count * px) * (u16 ? 2 : 4);
    const int b = next_;
    next_ = 1 - next_;
    cudaStream_t copy = copy_stream_.get(), compute = compute_stream_.get();
    // The kernels that last read raw_[b] must be done before it is overwritten.
    NANOSCOPY_CUDA_CHECK(cudaStreamWaitEvent(copy, raw_free_[b].get(), 0));
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(raw_[b].get(), chunk.pixels, bytes, cudaMemcpyHostToDevice, copy));
    NANOSCOPY_CUDA_CHECK(cudaEventRecord(uploaded_[b].get(), copy));
    NANOSCOPY_CUDA_CHECK(cudaStreamWaitEvent(compute, uploaded_[b].get(), 0));
    const EsrrfFrames f{g_.width, g_.height, chunk.count};
    launch_esrrf_convert(raw_[b].get(), u16, f, frames_.get(), compute);
    NANOSCOPY_CUDA_CHECK(cudaEventRecord(raw_free_[b].get(), compute));
    launch_esrrf_gradients(frames_.get(), f, gc_.get(), gr_.get(), compute);
    launch_esrrf_lattices(gc_.get(), gr_.get(), f, table_.magnification, g2c_.get(), g2r_.get(), compute);
    EsrrfSlotArray slots;
    slots.count = static_cast<int>(chunk.slots.size());
    for (int s = 0; s < slots.count; ++s) {
      slots.begin[s] = chunk.slots[static_cast<std::size_t>(s)].begin;
      slots.end[s] = chunk.slots[static_cast<std::size_t>(s)].end;
      slots.step[s] = std::max<std::int64_t>(chunk.slots[static_cast<std::size_t>(s)].step, 1);
    }
    launch_esrrf_rgc(view_, frames_.get(), g2c_.get(), g2r_.get(), f, chunk.first, slots, state_.get(), compute);
    // The host buffer may be reused once the upload is done.
    NANOSCOPY_CUDA_CHECK(cudaEventSynchronize(uploaded_[b].get()));
  }

  void read_slot(int slot, EsrrfSlotSums& out) override {
    DeviceGuard guard(gpu_);
    const auto n = static_cast<std::size_t>(out_pixels_);
    host_.resize(5 * n);
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(host_.data(), state_.get() + static_cast<std::size_t>(slot) * 5 * n,
                                         5 * n * sizeof(float), cudaMemcpyDeviceToHost, compute_stream_.get()));
    NANOSCOPY_CUDA_CHECK(cudaStreamSynchronize(compute_stream_.get()));
    const float* h = host_.data();
    out.k.assign(h, h + n);
    out.s1.assign(h + n, h + 2 * n);
    out.s2.assign(h + 2 * n, h + 3 * n);
    out.p.assign(h + 3 * n, h + 4 * n);
    out.last.assign(h + 4 * n, h + 5 * n);
  }

 private:
  int gpu_;
  DeviceGuard guard_;
  EsrrfGeometry g_;
  EsrrfTable table_;
  std::string name_;
  std::int64_t out_pixels_ = 0, chunk_ = 1;
  Stream copy_stream_, compute_stream_;
  std::array<Event, 2> uploaded_{Event(cudaEventDisableTiming), Event(cudaEventDisableTiming)};
  std::array<Event, 2> raw_free_{Event(cudaEventDisableTiming), Event(cudaEventDisableTiming)};
  int next_ = 0;
  std::array<DeviceBuffer<float>, 2> raw_;
  DeviceBuffer<float> frames_, gc_, gr_, g2c_, g2r_, state_;
  DeviceBuffer<esrrf_math::RgcTap> taps_;
  DeviceBuffer<int> offset_;
  esrrf_math::RgcTableView view_;
  std::vector<float> host_;
};

}  // namespace

std::unique_ptr<EsrrfEngine> make_cuda_esrrf_engine(int gpu, const EsrrfGeometry& geometry,
                                                    const EsrrfSettings& settings, std::int64_t chunk_frames) {
  return std::make_unique<CudaEsrrfEngine>(gpu, geometry, settings, chunk_frames);
}

}  // namespace nanoscopy::cuda
