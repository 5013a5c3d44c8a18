#include "smre/exact_projection.hpp"

#include <string>
#include <utility>

#include "common/cuda_check.hpp"
#include "nanoscopy/core/error.hpp"

namespace nanoscopy::cuda {

GraphExec::GraphExec(cudaGraph_t graph) {
  const cudaError_t err = cudaGraphInstantiate(&exec_, graph, 0);
  cudaGraphDestroy(graph);
  NANOSCOPY_CUDA_CHECK(err);
}

GraphExec::~GraphExec() {
  if (exec_) cudaGraphExecDestroy(exec_);
}

GraphExec::GraphExec(GraphExec&& o) noexcept : exec_(std::exchange(o.exec_, nullptr)) {}

GraphExec& GraphExec::operator=(GraphExec&& o) noexcept {
  if (this != &o) {
    if (exec_) cudaGraphExecDestroy(exec_);
    exec_ = std::exchange(o.exec_, nullptr);
  }
  return *this;
}

void GraphExec::launch(cudaStream_t stream) const { NANOSCOPY_CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

namespace {

// Captures what `enqueue` puts on `stream` into a graph; ends the capture on errors too.
template <typename F>
GraphExec capture_graph(cudaStream_t stream, F&& enqueue) {
  NANOSCOPY_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    enqueue();
  } catch (...) {
    cudaGraph_t partial = nullptr;
    cudaStreamEndCapture(stream, &partial);
    if (partial) cudaGraphDestroy(partial);
    throw;
  }
  cudaGraph_t graph = nullptr;
  NANOSCOPY_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  return GraphExec(graph);
}

// Bytes per frame of the square flags of every tiling.
std::int64_t flag_bytes(const SetFamily& family, std::int64_t width, std::int64_t height) {
  std::int64_t bytes = 0;
  for (int e : family.edges()) bytes += static_cast<std::int64_t>(e) * e * (width / e) * (height / e);
  return bytes;
}

}  // namespace

std::int64_t ExactProjection::bytes_per_frame(const SetFamily& family, std::int64_t width, std::int64_t height) {
  const std::int64_t n = width * height;
  return (family.exact_tilings() + 1) * n * static_cast<std::int64_t>(sizeof(float)) +
         flag_bytes(family, width, height) +
         exact_change_blocks(width, height) * static_cast<std::int64_t>(sizeof(double)) + 1;
}

ExactProjection::ExactProjection(const SetFamily& family, const Weights& weights, const SmreSettings& settings,
                                 std::int64_t capacity)
    : width_(family.width), height_(family.height), capacity_(capacity), max_sweeps_(settings.dykstra_max_sweeps) {
  for (int e : family.edges())
    if (!exact_edge_supported(e))
      throw DeviceError("smre", "the CUDA engine projects squares of at most 1024 px, not " + std::to_string(e));
  const std::int64_t n = width_ * height_;
  q_ = DeviceBuffer<float>(static_cast<std::size_t>(family.exact_tilings() * capacity_ * n));
  flags_ = DeviceBuffer<std::uint8_t>(static_cast<std::size_t>(flag_bytes(family, width_, height_) * capacity_));
  std::int64_t q_at = 0, flags_at = 0;
  for (int e : family.edges()) {
    ExactEdge g;
    g.edge = e;
    g.c = static_cast<float>(weights.c_for_edge(e));
    g.width = width_;
    g.height = height_;
    g.q_stride = capacity_ * n;
    g.q = q_.get() + q_at;
    g.flag_stride = capacity_ * g.flag_frame();
    g.flags = flags_.get() + flags_at;
    q_at += static_cast<std::int64_t>(e) * e * g.q_stride;
    flags_at += static_cast<std::int64_t>(e) * e * g.flag_stride;
    edges_.push_back(g);
  }
  edges_device_ = DeviceBuffer<ExactEdge>(edges_.size());
  NANOSCOPY_CUDA_CHECK(cudaMemcpy(edges_device_.get(), edges_.data(), edges_.size() * sizeof(ExactEdge),
                                  cudaMemcpyHostToDevice));
  const auto frames = static_cast<std::size_t>(capacity_);
  start_ = DeviceBuffer<float>(frames * static_cast<std::size_t>(n));
  partials_ = DeviceBuffer<double>(frames * static_cast<std::size_t>(exact_change_blocks(width_, height_)));
  on_ = DeviceBuffer<std::uint8_t>(frames);
  on_host_ = PinnedBuffer<std::uint8_t>(frames);
}

void ExactProjection::enqueue_sweep(const DykstraFrames& d, bool first, int* sweeps, cudaStream_t stream) {
  for (const ExactEdge& g : edges_)
    for (int sy = 0; sy < g.edge; ++sy) launch_exact_shift_row(d, g, sy, first, stream);
  launch_exact_change(d, start_.get(), partials_.get(), stream);
  launch_exact_decide(d, partials_.get(), on_.get(), sweeps, max_sweeps_, 0, stream);
  NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(on_host_.get(), on_.get(), static_cast<std::size_t>(d.frames),
                                       cudaMemcpyDeviceToHost, stream));
}

void ExactProjection::capture(const DykstraFrames& d, cudaStream_t stream) {
  first_sweep_ = GraphExec();
  next_sweep_ = GraphExec();
  graph_frames_ = -1;
  first_sweep_ = capture_graph(stream, [&] { enqueue_sweep(d, true, graph_sweeps_, stream); });
  next_sweep_ = capture_graph(stream, [&] { enqueue_sweep(d, false, graph_sweeps_, stream); });
  graph_frames_ = d.frames;
}

void ExactProjection::project(const DykstraFrames& frames, const std::uint8_t* active, int* sweeps,
                              cudaStream_t stream) {
  if (frames.frames <= 0) return;
  if (frames.frames > capacity_ || frames.width != width_ || frames.height != height_)
    throw Error(ErrorKind::other, "smre", "exact projection called for a batch it was not sized for");
  DykstraFrames d = frames;
  d.on = on_.get();
  const auto count = static_cast<std::size_t>(d.frames);
  NANOSCOPY_CUDA_CHECK(cudaMemsetAsync(sweeps, 0, count * sizeof(int), stream));
  NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(on_.get(), active, count, cudaMemcpyDeviceToDevice, stream));
  // Warm frames: eps = w + sum of q; every frame on: start = eps.
  launch_exact_warm_start(d, edges_device_.get(), static_cast<int>(edges_.size()), start_.get(), stream);
  if (graph_frames_ != d.frames || graph_eps_ != d.eps || graph_sweeps_ != sweeps || graph_sigma2_ != d.sigma2 ||
      graph_tol_ != d.tol || graph_warm_ != d.warm) {
    graph_eps_ = d.eps;
    graph_sweeps_ = sweeps;
    graph_sigma2_ = d.sigma2;
    graph_tol_ = d.tol;
    graph_warm_ = d.warm;
    capture(d, stream);
  }
  // The decide kernel stops every frame at max_sweeps; the bound here only guards the loop.
  const int bound = max_sweeps_ > 0 ? max_sweeps_ : 1;
  for (int sweep = 0; sweep < bound; ++sweep) {
    (sweep == 0 ? first_sweep_ : next_sweep_).launch(stream);
    NANOSCOPY_CUDA_CHECK(cudaStreamSynchronize(stream));
    bool any = false;
    for (std::size_t f = 0; f < count; ++f) any = any || on_host_[f] != 0;
    if (!any) return;
  }
}

}  // namespace nanoscopy::cuda
