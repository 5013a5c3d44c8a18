// One step of fit2d's pipeline behind one interface: a chunk of frames in
// (host pixels), candidates, their ROI origins and the fits out. The CPU
// implementation detects (detect_cpu), cuts ROIs on the host and fits with the
// CPU fitter; the CUDA one (kernels/loc/localize_plan.hpp) uploads the raw
// pixels once and detects, cuts and fits on the GPU, copying back only the
// results. Both give the same candidates and origins (detection is
// bit-identical) and fits that agree within the fitter's CPU/GPU tolerance.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nanoscopy/core/host_buffer.hpp"  // HostBuffer: what allocate_host hands out
#include "nanoscopy/fit/fit_types.hpp"
#include "nanoscopy/io/pixel_type.hpp"
#include "nanoscopy/loc/detect_types.hpp"

namespace nanoscopy {

struct Device;

// `count` frames of width × height pixels on the host, (T, Y, X), row-major,
// frame `first_frame` first; `type` is PixelType::u16 or PixelType::f32. Not owned.
struct ChunkPixels {
  const void* pixels = nullptr;
  PixelType type = PixelType::u16;
  std::int64_t first_frame = 0;
  std::int64_t count = 0;
  int width = 0;
  int height = 0;
};

class ChunkLocalizer {
 public:
  virtual ~ChunkLocalizer() = default;

  // Detects spots in the chunk and fits a box × box ROI around each. The three
  // vectors are cleared and filled with one entry per candidate, in (frame, y,
  // x) order: the candidate, the top-left pixel of its ROI in the frame (frame
  // coordinates = origin + fit coordinates), the fit. An empty chunk gives
  // nothing. UsageError for a pixel type other than u16/f32 or a null pointer
  // with count > 0; InputError for frames smaller than the box.
  virtual void localize(const ChunkPixels& chunk, std::vector<Candidate>& candidates,
                        std::vector<RoiOrigin>& origins, std::vector<FitResult>& fits) = 0;

  // `bytes` of host memory this localizer reads chunks from fastest: page-locked
  // for CUDA (uploaded without a staging copy), plain for the CPU. Any host
  // memory may be given to localize(); this is only the fast path.
  virtual HostBuffer allocate_host(std::size_t bytes) = 0;

  virtual std::string name() const = 0;  // "cpu (2 threads)", "cuda:0"
};

// Detector + cut_rois + the CPU fitter, on `threads` threads (≤ 0: all).
std::unique_ptr<ChunkLocalizer> make_cpu_chunk_localizer(const DetectSettings& detect, const FitSettings& fit,
                                                         int threads);

// The localizer for a selected device (defined in the backend registry; CUDA
// runs on the device's first GPU). UsageError for invalid settings.
std::unique_ptr<ChunkLocalizer> make_chunk_localizer(const Device& device, const DetectSettings& detect,
                                                     const FitSettings& fit);

}  // namespace nanoscopy
