// Exact Dykstra on the GPU for a batch of frames (project_exact_cpu's
// semantics per frame): owns every tiling's q (exact_tilings() * pixels floats
// per frame) with its per-square flags, the sweep's start copy of eps and the
// stop flags. q and the flags persist between projections (warm start: frames
// whose DykstraFrames::warm flag is set start from eps = w + sum of q, summed
// by one kernel before the first sweep). One sweep (one launch per edge and shift sy, sum of e of them,
// for e <= 16 and widths <= 2048, else one per tiling; then the change and the
// stop decision, then a copy of the stop flags to pinned memory) is a CUDA
// graph, captured once per batch size and replayed; the host waits once per sweep.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "common/owners.hpp"
#include "nanoscopy/smre/set_family.hpp"
#include "nanoscopy/smre/smre_settings.hpp"
#include "nanoscopy/smre/weights.hpp"
#include "smre/dykstra_kernels.hpp"

namespace nanoscopy::cuda {

// An instantiated CUDA graph (owner).
class GraphExec {
 public:
  GraphExec() = default;
  explicit GraphExec(cudaGraph_t graph);  // instantiates and destroys `graph`
  ~GraphExec();
  GraphExec(GraphExec&& o) noexcept;
  GraphExec& operator=(GraphExec&& o) noexcept;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  void launch(cudaStream_t stream) const;
  explicit operator bool() const { return exec_ != nullptr; }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

class ExactProjection {
 public:
  // Device bytes per frame of a width x height frame (q and flags of every tiling, start copy, partials).
  static std::int64_t bytes_per_frame(const SetFamily& family, std::int64_t width, std::int64_t height);

  ExactProjection(const SetFamily& family, const Weights& weights, const SmreSettings& settings,
                  std::int64_t capacity);

  // Projects d.eps of every frame whose flag in `active` (device) is set, in
  // place, warm-started where d.warm[f] is set (the frame's previous projection
  // by this object left its q); sweeps[f] (device) = the sweeps done (0 for other frames).
  // Returns after the last sweep has finished on `stream`.
  void project(const DykstraFrames& d, const std::uint8_t* active, int* sweeps, cudaStream_t stream);

 private:
  void capture(const DykstraFrames& d, cudaStream_t stream);
  void enqueue_sweep(const DykstraFrames& d, bool first, int* sweeps, cudaStream_t stream);

  std::int64_t width_, height_, capacity_;
  int max_sweeps_;
  std::vector<ExactEdge> edges_;  // largest first
  DeviceBuffer<ExactEdge> edges_device_;
  DeviceBuffer<float> q_, start_;
  DeviceBuffer<std::uint8_t> flags_;
  DeviceBuffer<double> partials_;
  DeviceBuffer<std::uint8_t> on_;
  PinnedBuffer<std::uint8_t> on_host_;
  // Sweep graphs for `graph_frames_` frames and the pointers they were captured with.
  GraphExec first_sweep_, next_sweep_;
  int graph_frames_ = -1;
  float* graph_eps_ = nullptr;
  int* graph_sweeps_ = nullptr;
  const float* graph_sigma2_ = nullptr;
  const double* graph_tol_ = nullptr;
  const std::uint8_t* graph_warm_ = nullptr;
};

}  // namespace nanoscopy::cuda
