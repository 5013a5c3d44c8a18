// Spot detection on the GPU: a persistent plan per device (plain C++ header: no
// CUDA headers, so the backend registry and tests can include it). Same
// algorithm and bit-identical arithmetic as the CPU reference (detect.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "nanoscopy/io/pixel_type.hpp"
#include "nanoscopy/loc/detect/detect.hpp"
#include "nanoscopy/loc/detect/engine.hpp"
#include "nanoscopy/loc/regions.hpp"

// Same declaration as the CUDA runtime's, so both may be seen together.
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;

namespace nanoscopy::cuda {

// Owns, on one device, the filter buffers (for up to 2^24 pixels of frames at
// a time), the candidate key and sort buffers, and the output buffers
// (candidates, ROI origins, ROIs), grown as needed and reused by every call.
// Not thread safe: one plan per thread.
class DetectPlan {
 public:
  // Candidates outside `regions` (empty: everywhere) are dropped as they are
  // found, before their ROIs are cut (outside_count() counts them).
  explicit DetectPlan(int device, const DetectSettings& settings, std::vector<Region> regions = {});
  ~DetectPlan();
  DetectPlan(DetectPlan&&) noexcept;
  DetectPlan& operator=(DetectPlan&&) noexcept;
  DetectPlan(const DetectPlan&) = delete;
  DetectPlan& operator=(const DetectPlan&) = delete;

  // Detects spots in `count` frames already on this plan's device (d_frames:
  // count·width·height values of `type`, u16 or f32, (T, Y, X); frame
  // `first_frame` first). Work runs on `stream`; the call waits on it once per
  // block of frames (to learn how many candidates there are) and returns their
  // number. The results stay on the device, sorted by (frame, y, x), until the
  // next call: candidates(), origins() and rois() (box·box values of `type`
  // per candidate, ROI-major, row-major: ready for FitPlan::fit_device with
  // width = height = box). The last kernels may still be running on `stream`.
  std::int64_t detect_device(const void* d_frames, PixelType type, std::int64_t first_frame, std::int64_t count,
                             int width, int height, cudaStream_t stream);
  const Candidate* candidates() const;  // device
  const RoiOrigin* origins() const;     // device
  const void* rois() const;             // device
  PixelType roi_type() const;
  std::int64_t candidate_count() const;
  std::int64_t outside_count() const;  // candidates of the last call dropped as outside the regions

  // Host frames in (uploaded on the plan's own stream), host candidates out
  // (cleared and filled, sorted by (frame, y, x)).
  void detect(const float* frames, std::int64_t first_frame, std::int64_t count, int width, int height,
              std::vector<Candidate>& out);
  // Copies the last call's results to the host (waits for the stream given to
  // that call). `rois` gets candidate_count()·box² values of roi_type();
  // any pointer may be null.
  void download(std::vector<Candidate>* candidates, std::vector<RoiOrigin>* origins, std::vector<float>* rois_f32,
                std::vector<std::uint16_t>* rois_u16);

  int device() const;
  const DetectSettings& settings() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The CUDA detect engine on one GPU.
std::unique_ptr<DetectEngine> make_cuda_detect_engine(int device, const DetectSettings& settings);

}  // namespace nanoscopy::cuda
