// The CUDA spot fitter: a persistent plan per GPU (plain C++ header: no CUDA
// headers, so bench and the backend registry can include it).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "nanoscopy/fit/engine.hpp"

// Same declaration as the CUDA runtime's, so both may be seen together.
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;

namespace nanoscopy::cuda {

struct FitPlanOptions {
  int lanes_per_fit = 0;            // 0: chosen from ROI and batch size; else 1, 2, 4, 8, 16 or 32
  std::int64_t max_chunk_fits = 0;  // fits per transfer chunk; 0: sized from free device memory
  int streams = 3;                  // chunks in flight (H2D, kernel and D2H overlap across them)
};

// Owns, on one device, streams and lazily grown device buffers and pinned
// staging buffers, reused by every call. Not thread safe: one plan per thread.
class FitPlan {
 public:
  FitPlan(int device, const FitSettings& settings, const FitPlanOptions& options = {});
  ~FitPlan();
  FitPlan(FitPlan&&) noexcept;
  FitPlan& operator=(FitPlan&&) noexcept;
  FitPlan(const FitPlan&) = delete;
  FitPlan& operator=(const FitPlan&) = delete;

  // Host data in, host results out; returns when `out` is filled. Large
  // batches are cut into chunks that stream through pinned buffers on several
  // streams. A batch in pinned (cudaMallocHost/cudaHostRegister) memory is
  // copied without staging.
  void fit(const RoiBatch& batch, std::span<FitResult> out);

  // Data already on this plan's device (d_pixels: count·width·height values of
  // `type`, u16 or f32, laid out as RoiBatch; d_initial: count guesses or null;
  // d_out: count results; d_variance_shift: the sCMOS shifts laid out as the
  // pixels, or null). Enqueues one kernel on `stream` and returns; the caller
  // synchronizes the stream.
  void fit_device(const void* d_pixels, PixelType type, std::int64_t count, int width, int height,
                  const SpotGuess* d_initial, FitResult* d_out, cudaStream_t stream,
                  const float* d_variance_shift = nullptr);

  int device() const;
  const FitSettings& settings() const;
  // The lanes per fit a batch of this shape would use.
  int lanes_for(int width, int height, std::int64_t count) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The CUDA FitEngine over one or several GPUs (cuda:all splits each batch
// evenly and runs the parts concurrently).
std::unique_ptr<FitEngine> make_cuda_fit_engine(const std::vector<int>& gpus, const FitSettings& settings,
                                                const FitPlanOptions& options = {});

}  // namespace nanoscopy::cuda
