// The CUDA SOFI engine: a block's term and frame sums, the plane sums and the
// mean-frame sum live on one GPU; engine_cpu.cpp is the reference each call
// matches (sofi_kernels.hpp states the kernels).
//
// Overlap: two pinned host buffers and two device frame buffers, paired by
// index. input_buffer() hands out the other pair's host buffer once its last
// upload has finished (event). accumulate() uploads the chunk on the copy
// stream (after the kernel that last read that device buffer, event), then
// the compute stream waits for the upload and runs the kernel. So the host
// fills buffer k+1 and the copy of chunk k+1 runs while the kernel of chunk k
// does. Every other call (start_block, finish_block, reads) runs on the compute
// stream, after all the chunk kernels before it.
#include "sofi/engine_cuda.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/owners.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/fault_injection.hpp"
#include "sofi/correction_kernels.hpp"
#include "sofi/sofi_kernels.hpp"

namespace nanoscopy::cuda {
namespace {

constexpr double kMemoryShare = 0.85;  // of the free device memory the engine may take

std::string gb(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GB", bytes / 1e9);
  return text;
}

// The auto path applies when every variable sits at (0, 0), their lags are a
// permutation of 0..nv-1 and every term is a distinct (subset of them, window):
// fills term_of (-1 where no term) and returns nv.
int auto_path(const SofiProblem& plan, int term_of[kSofiMaxOrder][kSofiMaxSubsets]) {
  const int nv = static_cast<int>(plan.variables.size());
  if (nv < 2 || nv > kSofiMaxOrder || plan.max_lag != nv - 1) return 0;
  int slots = 0;
  for (const auto& v : plan.variables) {
    if (v.dx != 0 || v.dy != 0 || v.lag < 0 || v.lag >= nv || (slots & (1 << v.lag))) return 0;
    slots |= 1 << v.lag;
  }
  std::vector<int> seen(static_cast<std::size_t>(kSofiMaxOrder << nv), -1);  // (window, mask) -> term
  for (std::size_t t = 0; t < plan.terms.size(); ++t) {
    const auto& term = plan.terms[t];
    int mask = 0;
    for (int i = 0; i < term.size; ++i) {
      const int bit = 1 << plan.variables[static_cast<std::size_t>(term.var[i])].lag;
      if (mask & bit) return 0;  // a repeated variable
      mask |= bit;
    }
    if (term.window < 0 || term.window >= nv) return 0;
    const auto key = static_cast<std::size_t>((term.window << nv) | mask);
    if (mask == 0 || seen[key] >= 0) return 0;
    seen[key] = static_cast<int>(t);
  }
  for (int w = 0; w < kSofiMaxOrder; ++w)
    for (int m = 0; m < kSofiMaxSubsets; ++m)
      term_of[w][m] = (w < nv && m < (1 << nv)) ? seen[static_cast<std::size_t>((w << nv) | m)] : -1;
  return nv;
}

// The plan's arrays on the device.
struct DevicePlanArrays {
  DeviceBuffer<SofiVariable> variables;
  DeviceBuffer<SofiTerm> terms;
  DeviceBuffer<SofiCombo> combos;
  DeviceBuffer<unsigned char> planes;  // byte copies of SofiPlane (plain data)
  SofiDevicePlan view;

  explicit DevicePlanArrays(const SofiProblem& plan)
      : variables(plan.variables.size()),
        terms(plan.terms.size()),
        combos(plan.combos.size()),
        planes(plan.planes.size() * sizeof(SofiPlane)) {
    if (!plan.variables.empty())
      NANOSCOPY_CUDA_CHECK(cudaMemcpy(variables.get(), plan.variables.data(), variables.bytes(), cudaMemcpyHostToDevice));
    if (!plan.terms.empty())
      NANOSCOPY_CUDA_CHECK(cudaMemcpy(terms.get(), plan.terms.data(), terms.bytes(), cudaMemcpyHostToDevice));
    if (!plan.combos.empty())
      NANOSCOPY_CUDA_CHECK(cudaMemcpy(combos.get(), plan.combos.data(), combos.bytes(), cudaMemcpyHostToDevice));
    if (!plan.planes.empty())
      NANOSCOPY_CUDA_CHECK(cudaMemcpy(planes.get(), static_cast<const void*>(plan.planes.data()), planes.bytes(),
                                      cudaMemcpyHostToDevice));
    view.width = plan.width;
    view.height = plan.height;
    view.max_lag = plan.max_lag;
    view.moments = plan.moments;
    view.nvars = static_cast<int>(plan.variables.size());
    view.nterms = static_cast<int>(plan.terms.size());
    view.variables = variables.get();
    view.terms = terms.get();
    view.combos = combos.get();
    view.planes = reinterpret_cast<const SofiPlane*>(planes.get());
    view.auto_nv = auto_path(plan, view.term_of);
  }
};

// Device bytes of the sums (independent of the chunk size).
double sum_bytes(const SofiProblem& plan) {
  const double p = static_cast<double>(plan.pixels());
  double bytes = p * (sizeof(float) + 2 * sizeof(double)) + p * static_cast<double>(plan.terms.size()) * sizeof(double);
  for (std::size_t i = 0; i < plan.planes.size(); ++i)
    bytes += static_cast<double>(plan.plane_width(static_cast<int>(i)) * plan.plane_height(static_cast<int>(i))) *
             sizeof(double);
  bytes += static_cast<double>(plan.combos.size() * sizeof(SofiCombo) + plan.terms.size() * sizeof(SofiTerm) +
                               plan.planes.size() * sizeof(SofiPlane) + plan.variables.size() * sizeof(SofiVariable));
  return bytes;
}

int multiprocessors_of(int gpu) {
  int sms = 0;
  NANOSCOPY_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, gpu));
  return sms;
}

// Whether every K is an integer the fused uint16 conversion holds exactly.
bool integral_shift(std::span<const float> shift) {
  return std::all_of(shift.begin(), shift.end(),
                     [](float k) { return std::fabs(k) < 2147483648.0f && std::floor(k) == k; });
}

struct State {
  Stream copy, compute;
  DevicePlanArrays plan;
  DeviceBuffer<float> shift;
  DeviceBuffer<double> frame_sum, terms, mean;
  std::vector<DeviceBuffer<double>> planes;
  // The chunk frames on the host, made by the first input_buffer() for the type it is asked for: a uint16
  // movie pins half the memory of float32 frames, and pinning is most of the engine's set-up.
  std::array<PinnedBuffer<unsigned char>, 2> host;
  std::array<DeviceBuffer<float>, 2> frames;   // the uploaded chunks
  std::array<Event, 2> uploaded{Event(cudaEventDisableTiming), Event(cudaEventDisableTiming)};
  std::array<Event, 2> consumed{Event(cudaEventDisableTiming), Event(cudaEventDisableTiming)};

  State(const SofiProblem& p, std::int64_t chunk) : plan(p) {
    const auto n = static_cast<std::size_t>(p.pixels());
    shift = DeviceBuffer<float>(n);
    frame_sum = DeviceBuffer<double>(n);
    terms = DeviceBuffer<double>(n * p.terms.size());
    mean = DeviceBuffer<double>(n);
    for (std::size_t i = 0; i < p.planes.size(); ++i)
      planes.emplace_back(static_cast<std::size_t>(p.plane_width(static_cast<int>(i)) *
                                                   p.plane_height(static_cast<int>(i))));
    for (int b = 0; b < 2; ++b) frames[static_cast<std::size_t>(b)] = DeviceBuffer<float>(static_cast<std::size_t>(chunk) * n);
  }
};

class CudaSofiEngine final : public SofiEngine {
 public:
  CudaSofiEngine(int gpu, const SofiProblem& plan, std::int64_t chunk_frames) : gpu_(gpu), plan_(plan) {
    if (plan_.pixels() <= 0) throw UsageError("sofi", "empty frame");
    DeviceGuard guard(gpu_);
    cudaDeviceProp prop{};
    NANOSCOPY_CUDA_CHECK(cudaGetDeviceProperties(&prop, gpu_));
    name_ = "cuda:" + std::to_string(gpu_) + " (" + prop.name + ")";
    multiprocessors_ = multiprocessors_of(gpu_);
    std::size_t free_bytes = 0, total_bytes = 0;
    NANOSCOPY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const double budget = kMemoryShare * static_cast<double>(free_bytes);
    const double fixed = sum_bytes(plan_);
    const double per_frame = 2.0 * static_cast<double>(plan_.pixels()) * sizeof(float);  // two frame buffers
    const std::int64_t fit = fixed < budget ? static_cast<std::int64_t>((budget - fixed) / per_frame) : 0;
    if (fit < plan_.max_lag + 1)
      throw DeviceError("cuda:" + std::to_string(gpu_),
                        "the SOFI sums of " + std::to_string(plan_.width) + "x" + std::to_string(plan_.height) +
                            " frames (" + std::to_string(plan_.terms.size()) + " terms, " +
                            std::to_string(plan_.planes.size()) + " planes) and " + std::to_string(plan_.max_lag + 1) +
                            " frames of input need " + gb(fixed + per_frame * (plan_.max_lag + 1)) + ", but only " +
                            gb(budget) + " of this GPU's free memory may be used");
    chunk_ = std::max<std::int64_t>(1, std::min(chunk_frames, fit));
    try {
      st_ = std::make_unique<State>(plan_, chunk_);
      const auto n = static_cast<std::size_t>(plan_.pixels());
      NANOSCOPY_CUDA_CHECK(cudaMemsetAsync(st_->mean.get(), 0, n * sizeof(double), st_->compute.get()));
      NANOSCOPY_CUDA_CHECK(cudaMemsetAsync(st_->shift.get(), 0, n * sizeof(float), st_->compute.get()));
      NANOSCOPY_CUDA_CHECK(cudaMemsetAsync(st_->frame_sum.get(), 0, n * sizeof(double), st_->compute.get()));
      NANOSCOPY_CUDA_CHECK(cudaMemsetAsync(st_->terms.get(), 0, st_->terms.bytes(), st_->compute.get()));
      for (auto& p : st_->planes)
        NANOSCOPY_CUDA_CHECK(cudaMemsetAsync(p.get(), 0, p.bytes(), st_->compute.get()));
      st_->compute.synchronize();
    } catch (...) {
      st_.reset();  // free while this GPU is current
      throw;
    }
    shift_.assign(static_cast<std::size_t>(plan_.pixels()), 0.0f);
  }

  ~CudaSofiEngine() override {
    try {
      DeviceGuard guard(gpu_);
      if (st_) {
        cudaStreamSynchronize(st_->copy.get());
        cudaStreamSynchronize(st_->compute.get());
      }
      st_.reset();
      corrected_ = DeviceBuffer<float>();
      corrections_ = DeviceBuffer<SofiFrameCorrection>();
    } catch (...) {
    }
  }

  CudaSofiEngine(const CudaSofiEngine&) = delete;
  CudaSofiEngine& operator=(const CudaSofiEngine&) = delete;

  std::string name() const override { return name_; }
  std::int64_t chunk_capacity() const override { return chunk_; }

  void* input_buffer(PixelType type) override {
    if (type != PixelType::u16 && type != PixelType::f32) throw std::logic_error("sofi engines take uint16 or float32 frames");
    DeviceGuard guard(gpu_);
    current_ ^= 1;
    const auto b = static_cast<std::size_t>(current_);
    // The buffer's previous upload must be done before the host overwrites it.
    st_->uploaded[b].synchronize();
    const std::size_t bytes = static_cast<std::size_t>(chunk_ * plan_.pixels()) * bytes_per_pixel(type);
    if (st_->host[b].size() < bytes) st_->host[b] = PinnedBuffer<unsigned char>(bytes);
    return st_->host[b].get();
  }

  void start_block(std::span<const float> shift) override {
    const auto n = static_cast<std::size_t>(plan_.pixels());
    if (shift.size() != n) throw std::logic_error("sofi start_block: the shift frame has the wrong size");
    DeviceGuard guard(gpu_);
    const cudaStream_t s = st_->compute.get();
    std::copy(shift.begin(), shift.end(), shift_.begin());
    integral_shift_ = integral_shift(shift);
    // Pageable source: the call returns once the data is staged.
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(st_->shift.get(), shift_.data(), n * sizeof(float), cudaMemcpyHostToDevice, s));
    NANOSCOPY_CUDA_CHECK(cudaMemsetAsync(st_->frame_sum.get(), 0, n * sizeof(double), s));
    NANOSCOPY_CUDA_CHECK(cudaMemsetAsync(st_->terms.get(), 0, st_->terms.bytes(), s));
  }

  void accumulate(const SofiChunk& chunk) override {
    if (chunk.count > chunk_) throw std::logic_error("sofi chunk larger than the engine's capacity");
    inject_device_fault(chunk.first, chunk.count, gpu_);
    if (chunk.type != PixelType::u16 && chunk.type != PixelType::f32)
      throw std::logic_error("sofi engines take uint16 or float32 frames");
    if (chunk.count <= 0) return;
    DeviceGuard guard(gpu_);
    const auto b = static_cast<std::size_t>(current_);
    const bool f32 = chunk.type == PixelType::f32;
    const std::size_t bytes = static_cast<std::size_t>(chunk.count * plan_.pixels()) * bytes_per_pixel(chunk.type);
    if (st_->host[b].size() < bytes) throw std::logic_error("sofi chunk not in a buffer from input_buffer() for its type");
    const cudaStream_t copy = st_->copy.get(), compute = st_->compute.get();
    // Upload after the kernel that last read this device buffer.
    NANOSCOPY_CUDA_CHECK(cudaStreamWaitEvent(copy, st_->consumed[b].get(), 0));
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(st_->frames[b].get(), st_->host[b].get(), bytes, cudaMemcpyHostToDevice, copy));
    st_->uploaded[b].record(copy);
    NANOSCOPY_CUDA_CHECK(cudaStreamWaitEvent(compute, st_->uploaded[b].get(), 0));
    SofiChunkArgs args;
    args.frames = st_->frames[b].get();
    args.source = f32 ? SofiSource::f32 : (integral_shift_ ? SofiSource::u16_integral_shift : SofiSource::u16);
    if (chunk.corrections) {
      // Corrected into a third buffer (float32) on the compute stream, which
      // orders it after the previous chunk's kernel, then summed from there.
      ensure_corrected();
      NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(corrections_.get(), chunk.corrections,
                                           static_cast<std::size_t>(chunk.count) * sizeof(SofiFrameCorrection),
                                           cudaMemcpyHostToDevice, compute));  // pageable: staged before return
      launch_sofi_correct_frames(st_->frames[b].get(), !f32, plan_.width, plan_.height, chunk.count,
                                 corrections_.get(), corrected_.get(), compute);
      args.frames = corrected_.get();
      args.source = SofiSource::f32;
    }
    args.first = chunk.first;
    args.count = chunk.count;
    args.tuple_end = chunk.tuple_end;
    args.sum_end = chunk.sum_end;
    args.block_end = chunk.block_end;
    args.shift = st_->shift.get();
    args.frame_sum = st_->frame_sum.get();
    args.terms = st_->terms.get();
    launch_sofi_accumulate(st_->plan.view, args, multiprocessors_, compute);
    st_->consumed[b].record(compute);
  }

  void finish_block(std::int64_t frames, std::int64_t tuples) override {
    if (frames < 1 || tuples < 1) throw InputError("sofi", "a block has no frames or no lag tuples");
    if (tuples != frames - plan_.max_lag)
      throw InputError("sofi", "a block has " + std::to_string(tuples) + " lag tuples for " + std::to_string(frames) +
                                   " frames");
    DeviceGuard guard(gpu_);
    const cudaStream_t s = st_->compute.get();
    for (std::size_t p = 0; p < plan_.planes.size(); ++p)
      launch_sofi_finish_plane(st_->plan.view, static_cast<int>(p), plan_.plane_width(static_cast<int>(p)),
                               plan_.plane_height(static_cast<int>(p)), st_->terms.get(), st_->frame_sum.get(), frames,
                               st_->planes[p].get(), s);
    launch_sofi_mean_frame(st_->shift.get(), st_->frame_sum.get(), frames, plan_.pixels(), st_->mean.get(), s);
  }

  void read_block(BlockSums& out) override {
    DeviceGuard guard(gpu_);
    const auto n = static_cast<std::size_t>(plan_.pixels());
    out.shift = shift_;
    out.frame_sum.resize(n);
    out.terms.resize(n * plan_.terms.size());
    const cudaStream_t s = st_->compute.get();
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(out.frame_sum.data(), st_->frame_sum.get(), n * sizeof(double),
                                         cudaMemcpyDeviceToHost, s));
    if (!out.terms.empty())
      NANOSCOPY_CUDA_CHECK(
          cudaMemcpyAsync(out.terms.data(), st_->terms.get(), st_->terms.bytes(), cudaMemcpyDeviceToHost, s));
    st_->compute.synchronize();
  }

  void read_planes(PlaneSums& out) override {
    DeviceGuard guard(gpu_);
    const cudaStream_t s = st_->compute.get();
    out.planes.resize(plan_.planes.size());
    for (std::size_t p = 0; p < plan_.planes.size(); ++p) {
      out.planes[p].resize(st_->planes[p].size());
      NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(out.planes[p].data(), st_->planes[p].get(), st_->planes[p].bytes(),
                                           cudaMemcpyDeviceToHost, s));
    }
    out.frame_sum.resize(static_cast<std::size_t>(plan_.pixels()));
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(out.frame_sum.data(), st_->mean.get(), st_->mean.bytes(),
                                         cudaMemcpyDeviceToHost, s));
    st_->compute.synchronize();
  }

 private:
  // The corrections' buffers, made on the first corrected chunk (runs without
  // corrections never pay for them): chunk_ float32 frames and chunk_ corrections.
  void ensure_corrected() {
    if (corrected_.get()) return;
    const auto n = static_cast<std::size_t>(chunk_ * plan_.pixels());
    corrected_ = DeviceBuffer<float>(n);
    corrections_ = DeviceBuffer<SofiFrameCorrection>(static_cast<std::size_t>(chunk_));
  }

  int gpu_;
  SofiProblem plan_;
  std::string name_;
  int multiprocessors_ = 1;
  std::int64_t chunk_ = 0;
  int current_ = 1;  // the pair last handed out by input_buffer(); the first call hands out 0
  std::vector<float> shift_;
  bool integral_shift_ = true;
  std::unique_ptr<State> st_;
  DeviceBuffer<float> corrected_;                   // see ensure_corrected()
  DeviceBuffer<SofiFrameCorrection> corrections_;
};

}  // namespace

std::unique_ptr<SofiEngine> make_cuda_sofi_engine(int gpu, const SofiProblem& plan, std::int64_t chunk_frames) {
  return std::make_unique<CudaSofiEngine>(gpu, plan, chunk_frames);
}

double time_device_resident_sofi(int gpu, const SofiProblem& plan, std::int64_t frames, int repeats,
                                 std::int64_t* bytes_moved) {
  if (frames <= plan.max_lag) throw UsageError("sofi", "the timing needs more frames than the largest lag");
  DeviceGuard guard(gpu);
  const auto n = static_cast<std::size_t>(plan.pixels());
  Stream stream;
  DevicePlanArrays dplan(plan);
  DeviceBuffer<std::uint16_t> data(static_cast<std::size_t>(frames) * n);
  DeviceBuffer<float> shift(n);
  DeviceBuffer<double> frame_sum(n), terms(n * plan.terms.size());
  const cudaStream_t s = stream.get();
  launch_sofi_fill_random(data.get(), static_cast<std::int64_t>(data.size()), 12345, s);
  NANOSCOPY_CUDA_CHECK(cudaMemsetAsync(shift.get(), 0, shift.bytes(), s));  // K = 0: integral
  NANOSCOPY_CUDA_CHECK(cudaMemsetAsync(frame_sum.get(), 0, frame_sum.bytes(), s));
  NANOSCOPY_CUDA_CHECK(cudaMemsetAsync(terms.get(), 0, terms.bytes(), s));
  SofiChunkArgs args;
  args.frames = data.get();
  args.source = SofiSource::u16_integral_shift;
  args.first = 0;
  args.count = frames;
  args.tuple_end = frames - plan.min_window;
  args.sum_end = frames;
  args.block_end = frames;
  args.shift = shift.get();
  args.frame_sum = frame_sum.get();
  args.terms = terms.get();
  const int sms = multiprocessors_of(gpu);
  const SofiLaunchInfo info = launch_sofi_accumulate(dplan.view, args, sms, s);  // warm-up
  Event start, stop;
  repeats = std::max(repeats, 1);
  start.record(s);
  for (int r = 0; r < repeats; ++r) launch_sofi_accumulate(dplan.view, args, sms, s);
  stop.record(s);
  stop.synchronize();
  if (bytes_moved) {
    const auto p = static_cast<std::int64_t>(n);
    *bytes_moved = frames * p * 2 + p * 4 +
                   static_cast<std::int64_t>(info.segments) * (static_cast<std::int64_t>(plan.terms.size()) + 1) * p * 16;
  }
  return static_cast<double>(stop.elapsed_ms_since(start)) * 1e-3 / repeats;
}

}  // namespace nanoscopy::cuda
