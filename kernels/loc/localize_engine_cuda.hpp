// fit2d's detect → cut → fit on one GPU, from host pixels to host results
// (plain C++ header: no CUDA headers, so the backend registry and tests can
// include it). The raw chunk (uint16 or float32) is uploaded once; detection,
// ROI cutting and fitting run on the device; only candidates, ROI origins and
// fits come back.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "nanoscopy/fit/fit_types.hpp"
#include "nanoscopy/loc/detect/detect_types.hpp"
#include "nanoscopy/loc/localize_engine.hpp"

namespace nanoscopy::cuda {

// Owns, on one device, a stream, the device copy of the chunk, a DetectPlan, a
// FitPlan, the fit results and page-locked buffers for the transfers, all
// grown as needed and reused by every call. Not thread safe: one plan per thread.
class LocalizePlan {
 public:
  LocalizePlan(int device, const LocalizeSettings& settings);
  ~LocalizePlan();
  LocalizePlan(LocalizePlan&&) noexcept;
  LocalizePlan& operator=(LocalizePlan&&) noexcept;
  LocalizePlan(const LocalizePlan&) = delete;
  LocalizePlan& operator=(const LocalizePlan&) = delete;

  // LocalizeEngine::localize. Page-locked input (allocate_host) is uploaded
  // directly in one copy; other memory goes through two page-locked staging
  // buffers in turn, the host copy of one piece overlapping the upload of the
  // previous one. Candidates outside the regions are dropped by the detection
  // kernels, so only those kept are cut and fitted. Returns (when the results
  // are on the host) the number of candidates detected, the dropped ones included.
  std::int64_t localize(const ChunkPixels& chunk, std::vector<Candidate>& candidates, std::vector<RoiOrigin>& origins,
                std::vector<FitResult>& fits);

  // Page-locked host memory (common/pinned_memory.hpp), portable to every GPU.
  HostBuffer allocate_host(std::size_t bytes);

  int device() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The CUDA localize engine on one GPU.
std::unique_ptr<LocalizeEngine> make_cuda_localize_engine(int device, const LocalizeSettings& settings);

// bench localize's floor: an engine that uploads each chunk as the localize engine does (its own stream and
// device buffer, one copy from page-locked memory) and finds nothing, so a pipeline around it times reading,
// PCIe and the hand-over without detection or fitting.
std::unique_ptr<LocalizeEngine> make_cuda_upload_only_engine(int device);

}  // namespace nanoscopy::cuda
