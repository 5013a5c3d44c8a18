// The CUDA SMRE engine: buffers of one batch on one GPU, and the host loop
// that issues each ADMM iteration's kernels on one stream (engine.hpp states
// the iteration; engine_cpu.cpp is the reference it matches).
//
// Per iteration, on the stream: PSF row pass of r = rho1 (I - eps - A x) + u1,
// column pass fused with the x-step; row pass of x, column pass fused with
// A x, the projection's input and the l2/l1 z-step; the TV z-step; the
// projection (exact: one graph replay per sweep, the host waits per sweep;
// ICD: 5 launches); the dual update; the statistics. One small copy back.
//
// Warm start (SmreSettings::dykstra_warm_start, dykstra.hpp): the Dykstra
// memory q of every frame (exact: every tiling's q with its square flags, in
// ExactProjection; ICD: every pass's and scale's q, State::icd_q) persists
// between the projections of a frame. The host tracks per frame whether q
// holds a projection since start() (warm_) and uploads it with the active
// flags, so a frame's first projection after start() is cold, as are all of
// them with warm start off; frames that sit out an iteration keep their q.
#include "smre/engine_cuda.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/owners.hpp"
#include "nanoscopy/core/error.hpp"
#include "smre/dykstra_kernels.hpp"
#include "smre/exact_projection.hpp"
#include "smre/smre_kernels.hpp"

namespace nanoscopy::cuda {
namespace {

constexpr double kMemoryShare = 0.85;       // of the free device memory a batch may take
constexpr std::int64_t kMaxGridFrames = 65535;  // the grid's y/z extent

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GB", bytes / 1e9);
  return text;
}

// Device bytes of one frame of a batch.
std::int64_t bytes_per_frame(const SmreProblem& p) {
  const std::int64_t n = p.pixels();
  const std::int64_t arrays = 8 + (p.settings.regularizer == Regularizer::tv ? 2 : 0);
  std::int64_t bytes = arrays * n * static_cast<std::int64_t>(sizeof(float));
  bytes += (psf_col_blocks(p.width, p.height) + 2 * dual_blocks(p.width, p.height)) *
           static_cast<std::int64_t>(sizeof(double));
  bytes += static_cast<std::int64_t>(sizeof(float) + sizeof(double) + 4 * sizeof(std::uint8_t) + sizeof(int) +
                                     2 * sizeof(DeviceFrameStats));
  if (p.family.kind == Projection::exact)
    bytes += ExactProjection::bytes_per_frame(p.family, p.width, p.height);
  else if (p.settings.dykstra_warm_start)
    bytes += icd_q_floats(p.width, p.height) * static_cast<std::int64_t>(sizeof(float));
  return bytes;
}

// Everything that lives on the device; created and destroyed with the engine's GPU current.
struct State {
  Stream stream;
  DeviceBuffer<float> image, x, z, eps, ax, u1, u2, work, px, py;
  DeviceBuffer<float> taps;
  DeviceBuffer<float> sigma2;
  DeviceBuffer<double> tol;
  // Per frame: the active flags at [0, capacity), the warm flags (q holds the
  // frame's previous projection) at [capacity, 2 capacity).
  DeviceBuffer<std::uint8_t> active;
  PinnedBuffer<std::uint8_t> active_host;
  DeviceBuffer<float> icd_q;  // ICD with warm start: icd_q_floats() per frame
  DeviceBuffer<double> partials;  // step, c1, c2 sections
  DeviceBuffer<int> sweeps;
  DeviceBuffer<DeviceFrameStats> stats;
  PinnedBuffer<DeviceFrameStats> stats_host;
  std::unique_ptr<ExactProjection> exact;
};

class CudaSmreEngine final : public SmreEngine {
 public:
  CudaSmreEngine(int gpu, const SmreProblem& problem, std::int64_t max_batch) : gpu_(gpu), p_(problem) {
    if (p_.width <= 0 || p_.height <= 0 || p_.width % 32 != 0 || p_.height % 32 != 0)
      throw Error(ErrorKind::other, "smre",
                  "the CUDA engine needs a padded frame with sides multiples of 32, not " + std::to_string(p_.width) +
                      "x" + std::to_string(p_.height));
    if (p_.psf.taps.size() != static_cast<std::size_t>(2 * p_.psf.radius + 1))
      throw Error(ErrorKind::other, "smre", "the PSF kernel has the wrong number of taps");
    DeviceGuard guard(gpu_);
    cudaDeviceProp prop{};
    NANOSCOPY_CUDA_CHECK(cudaGetDeviceProperties(&prop, gpu_));
    name_ = "cuda:" + std::to_string(gpu_) + " (" + prop.name + ")";
    if (psf_col_shared_bytes(p_.psf.radius) > prop.sharedMemPerBlockOptin)
      throw DeviceError("cuda:" + std::to_string(gpu_),
                        "a PSF of radius " + std::to_string(p_.psf.radius) +
                            " px needs more shared memory per block than this GPU has");
    prepare_psf_kernels(p_.psf.radius);
    capacity_ = plan_capacity(max_batch);
    try {
      allocate();
    } catch (...) {
      st_.reset();  // free while this GPU is current
      throw;
    }
    const SmreSettings& s = p_.settings;
    scalars_.rho1 = static_cast<float>(s.rho1);
    scalars_.rho2 = static_cast<float>(s.rho2);
    scalars_.gamma = static_cast<float>(s.gamma);
    scalars_.lambda = static_cast<float>(s.lambda);
    scalars_.alpha1 = static_cast<float>(s.alpha1);
    scalars_.alpha2 = static_cast<float>(s.alpha2);
    for (int k = 0; k < kIcdScales; ++k)
      icd_c_[static_cast<std::size_t>(k)] = static_cast<float>(p_.weights.c_for_edge(1 << k));
  }

  ~CudaSmreEngine() override {
    try {
      DeviceGuard guard(gpu_);
      if (st_) cudaStreamSynchronize(st_->stream.get());
      st_.reset();  // frees with this engine's GPU current
    } catch (...) {
    }
  }

  CudaSmreEngine(const CudaSmreEngine&) = delete;
  CudaSmreEngine& operator=(const CudaSmreEngine&) = delete;

  std::string name() const override { return name_; }
  std::int64_t capacity() const override { return capacity_; }

  void start(std::span<const float> frames, std::span<const double> noise_sigma) override {
    const std::int64_t n = p_.pixels();
    const auto count = static_cast<std::int64_t>(frames.size()) / n;
    if (static_cast<std::int64_t>(frames.size()) != count * n)
      throw Error(ErrorKind::other, "smre", "a batch must hold whole padded frames");
    if (count > capacity_)
      throw Error(ErrorKind::other, "smre",
                  "a batch of " + std::to_string(count) + " frames exceeds the engine's capacity of " +
                      std::to_string(capacity_));
    if (noise_sigma.size() != static_cast<std::size_t>(count))
      throw Error(ErrorKind::other, "smre", "one noise sigma per frame is needed");
    DeviceGuard guard(gpu_);
    State& st = *st_;
    const cudaStream_t stream = st.stream.get();
    count_ = count;
    std::fill(warm_.begin(), warm_.end(), std::uint8_t{0});  // every frame's next projection is cold
    if (count == 0) return;
    const std::size_t bytes = static_cast<std::size_t>(count * n) * sizeof(float);
    std::vector<float> sigma2(static_cast<std::size_t>(count));
    std::vector<double> tol(static_cast<std::size_t>(count));
    for (std::size_t f = 0; f < sigma2.size(); ++f) {
      sigma2[f] = static_cast<float>(noise_sigma[f] * noise_sigma[f]);
      tol[f] = p_.settings.dykstra_tolerance * noise_sigma[f];
    }
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(st.image.get(), frames.data(), bytes, cudaMemcpyHostToDevice, stream));
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(st.sigma2.get(), sigma2.data(), sigma2.size() * sizeof(float),
                                         cudaMemcpyHostToDevice, stream));
    NANOSCOPY_CUDA_CHECK(
        cudaMemcpyAsync(st.tol.get(), tol.data(), tol.size() * sizeof(double), cudaMemcpyHostToDevice, stream));
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(st.x.get(), st.image.get(), bytes, cudaMemcpyDeviceToDevice, stream));
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(st.z.get(), st.image.get(), bytes, cudaMemcpyDeviceToDevice, stream));
    for (auto* b : {&st.eps, &st.u1, &st.u2, &st.px, &st.py})
      if (b->get()) NANOSCOPY_CUDA_CHECK(cudaMemsetAsync(b->get(), 0, bytes, stream));
    // A x of the start x = I, for the first iteration's residual.
    NANOSCOPY_CUDA_CHECK(cudaMemsetAsync(st.active.get(), 1, static_cast<std::size_t>(count), stream));
    const SmreBatch b = batch();
    launch_psf_rows_plain(b, taps(false), st.x.get(), st.work.get(), stream);
    launch_psf_cols_plain(b, taps(false), st.work.get(), st.ax.get(), stream);
    st.stream.synchronize();  // the pageable sources above die with this call
  }

  void iterate(std::span<const std::uint8_t> active, std::span<FrameStats> stats) override {
    const auto count = static_cast<std::size_t>(count_);
    if (active.size() < count || stats.size() < count)
      throw Error(ErrorKind::other, "smre", "iterate() needs an active flag and a stats slot per frame");
    if (std::none_of(active.begin(), active.begin() + static_cast<std::ptrdiff_t>(count),
                     [](std::uint8_t a) { return a != 0; }))
      return;
    DeviceGuard guard(gpu_);
    State& st = *st_;
    const cudaStream_t stream = st.stream.get();
    const auto cap = static_cast<std::size_t>(capacity_);
    for (std::size_t f = 0; f < count; ++f) {
      st.active_host[f] = active[f] ? 1 : 0;
      st.active_host[cap + f] = warm_[f];
    }
    NANOSCOPY_CUDA_CHECK(
        cudaMemcpyAsync(st.active.get(), st.active_host.get(), cap + count, cudaMemcpyHostToDevice, stream));

    const SmreBatch b = batch();
    const SmreArrays a = arrays();
    const StatPartials parts = partials();
    // x-step: A^T (rho1 (I - eps - A x) + u1), then x.
    launch_psf_rows_residual(b, taps(true), a, scalars_.rho1, a.work, stream);
    launch_psf_cols_x_update(b, taps(true), a, scalars_, parts.step, stream);
    // A x, the projection's input, and the z-step.
    launch_psf_rows_plain(b, taps(false), a.x, a.work, stream);
    launch_psf_cols_ax_step(b, taps(false), a, scalars_, p_.settings.regularizer, stream);
    if (p_.settings.regularizer == Regularizer::tv) launch_tv_step(b, a, scalars_, p_.settings.tv_iterations, stream);
    project();
    launch_dual_update(b, a, scalars_, parts, stream);
    launch_finish_stats(b, parts, st.sweeps.get(), st.stats.get(), stream);
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(st.stats_host.get(), st.stats.get(), count * sizeof(DeviceFrameStats),
                                         cudaMemcpyDeviceToHost, stream));
    st.stream.synchronize();
    for (std::size_t f = 0; f < count; ++f) {
      if (!active[f]) continue;
      warm_[f] = p_.settings.dykstra_warm_start ? 1 : 0;
      const DeviceFrameStats& d = st.stats_host[f];
      stats[f].c1 = d.c1;
      stats[f].c2 = d.c2;
      stats[f].step = d.step;
      stats[f].sweeps = d.sweeps;
    }
  }

  void read_x(std::span<float> out) override { read(st_->x.get(), out); }
  void read_eps(std::span<float> out) override { read(st_->eps.get(), out); }

 private:
  std::int64_t plan_capacity(std::int64_t max_batch) const {
    std::size_t free = 0, total = 0;
    NANOSCOPY_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    const std::int64_t per_frame = bytes_per_frame(p_);
    const auto budget = static_cast<std::int64_t>(kMemoryShare * static_cast<double>(free));
    const std::int64_t fits = budget / per_frame;
    if (fits < 1) {
      std::string what = "SMRE needs " + gib(static_cast<double>(per_frame)) + " of GPU memory for one " +
                         std::to_string(p_.width) + "x" + std::to_string(p_.height) + " padded frame";
      if (p_.family.kind == Projection::exact)
        what += " (exact Dykstra keeps " + std::to_string(p_.family.exact_tilings()) +
                " full-frame q arrays: lower MRdepth or use the icd projection)";
      what += ", but only " + gib(static_cast<double>(budget)) + " (85% of the free memory) is available";
      throw DeviceError("cuda:" + std::to_string(gpu_), what);
    }
    return std::max<std::int64_t>(1, std::min({max_batch, fits, kMaxGridFrames}));
  }

  void allocate() {
    st_ = std::make_unique<State>();
    State& st = *st_;
    const auto frames = static_cast<std::size_t>(capacity_);
    const auto n = frames * static_cast<std::size_t>(p_.pixels());
    for (auto* b : {&st.image, &st.x, &st.z, &st.eps, &st.ax, &st.u1, &st.u2, &st.work}) *b = DeviceBuffer<float>(n);
    if (p_.settings.regularizer == Regularizer::tv) {
      st.px = DeviceBuffer<float>(n);
      st.py = DeviceBuffer<float>(n);
    }
    st.taps = DeviceBuffer<float>(p_.psf.taps.size());
    NANOSCOPY_CUDA_CHECK(cudaMemcpy(st.taps.get(), p_.psf.taps.data(), p_.psf.taps.size() * sizeof(float),
                                    cudaMemcpyHostToDevice));
    st.sigma2 = DeviceBuffer<float>(frames);
    st.tol = DeviceBuffer<double>(frames);
    st.active = DeviceBuffer<std::uint8_t>(2 * frames);
    st.active_host = PinnedBuffer<std::uint8_t>(2 * frames);
    warm_.assign(frames, 0);
    st.partials = DeviceBuffer<double>(
        frames * static_cast<std::size_t>(psf_col_blocks(p_.width, p_.height) + 2 * dual_blocks(p_.width, p_.height)));
    st.sweeps = DeviceBuffer<int>(frames);
    st.stats = DeviceBuffer<DeviceFrameStats>(frames);
    st.stats_host = PinnedBuffer<DeviceFrameStats>(frames);
    if (p_.family.kind == Projection::exact)
      st.exact = std::make_unique<ExactProjection>(p_.family, p_.weights, p_.settings, capacity_);
    else if (p_.settings.dykstra_warm_start)
      st.icd_q = DeviceBuffer<float>(frames * static_cast<std::size_t>(icd_q_floats(p_.width, p_.height)));
  }

  SmreBatch batch() const {
    SmreBatch b;
    b.width = p_.width;
    b.height = p_.height;
    b.frames = static_cast<int>(count_);
    b.active = st_->active.get();
    return b;
  }

  SmreArrays arrays() const {
    const State& st = *st_;
    SmreArrays a;
    a.image = st.image.get();
    a.x = st.x.get();
    a.z = st.z.get();
    a.eps = st.eps.get();
    a.ax = st.ax.get();
    a.u1 = st.u1.get();
    a.u2 = st.u2.get();
    a.work = st.work.get();
    a.px = st.px.get();
    a.py = st.py.get();
    return a;
  }

  StatPartials partials() const {
    const auto frames = static_cast<std::size_t>(capacity_);
    StatPartials s;
    s.step = st_->partials.get();
    s.c1 = s.step + frames * static_cast<std::size_t>(psf_col_blocks(p_.width, p_.height));
    s.c2 = s.c1 + frames * static_cast<std::size_t>(dual_blocks(p_.width, p_.height));
    return s;
  }

  PsfTaps taps(bool adjoint) const { return PsfTaps{st_->taps.get(), p_.psf.radius, adjoint}; }

  // eps = P_G(eps) for the active frames; sweeps[f] = sweeps done.
  void project() {
    State& st = *st_;
    const cudaStream_t stream = st.stream.get();
    DykstraFrames d;
    d.width = p_.width;
    d.height = p_.height;
    d.frames = static_cast<int>(count_);
    d.eps = st.eps.get();
    d.on = st.active.get();
    d.sigma2 = st.sigma2.get();
    d.tol = st.tol.get();
    const SmreSettings& s = p_.settings;
    if (s.dykstra_warm_start) d.warm = st.active.get() + capacity_;
    if (st.exact) {
      st.exact->project(d, st.active.get(), st.sweeps.get(), stream);
      return;
    }
    NANOSCOPY_CUDA_CHECK(cudaMemsetAsync(st.sweeps.get(), 0, static_cast<std::size_t>(count_) * sizeof(int), stream));
    for (int pass = 0; pass < kIcdPasses; ++pass)
      launch_icd_pass(d, pass, icd_c_, s.dykstra_max_sweeps, s.icd_sweeps, st.sweeps.get(), st.icd_q.get(), stream);
  }

  void read(const float* src, std::span<float> out) {
    const auto values = static_cast<std::size_t>(count_ * p_.pixels());
    if (out.size() < values) throw Error(ErrorKind::other, "smre", "the output holds fewer values than the batch");
    if (values == 0) return;
    DeviceGuard guard(gpu_);
    NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(out.data(), src, values * sizeof(float), cudaMemcpyDeviceToHost,
                                         st_->stream.get()));
    st_->stream.synchronize();
  }

  int gpu_;
  SmreProblem p_;
  std::string name_;
  std::int64_t capacity_ = 0, count_ = 0;
  SmreScalars scalars_;
  std::array<float, kIcdScales> icd_c_{};
  std::unique_ptr<State> st_;
  std::vector<std::uint8_t> warm_;  // per frame of the capacity: q holds a projection since start()
};

}  // namespace

std::unique_ptr<SmreEngine> make_cuda_smre_engine(int gpu, const SmreProblem& problem, std::int64_t max_batch) {
  return std::make_unique<CudaSmreEngine>(gpu, problem, max_batch);
}

}  // namespace nanoscopy::cuda
