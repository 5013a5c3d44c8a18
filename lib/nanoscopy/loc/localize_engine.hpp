// The localize engine: one step of fit2d's pipeline behind one interface: a
// chunk of frames in (host pixels), candidates, their ROI origins and the fits
// out. The CPU engine detects (detect_cpu), cuts ROIs on the host and fits with
// the CPU fitter; the CUDA one (kernels/loc/localize_engine_cuda.hpp) uploads
// the raw pixels once and detects, cuts and fits on the GPU, copying back only
// the results. Both give the same candidates and origins (detection is
// bit-identical) and fits that agree within the fitter's CPU/GPU tolerance.
// Candidates outside the settings' regions are dropped right after detection,
// before any ROI is cut or fitted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nanoscopy/core/camera_maps.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/host_buffer.hpp"  // HostBuffer: what allocate_host hands out
#include "nanoscopy/fit/fit_types.hpp"
#include "nanoscopy/io/pixel_type.hpp"
#include "nanoscopy/loc/detect/detect.hpp"
#include "nanoscopy/loc/detect/detect_types.hpp"
#include "nanoscopy/loc/regions.hpp"

namespace nanoscopy {

// `count` frames of width × height pixels on the host, (T, Y, X), row-major,
// frame `first_frame` first; `type` is PixelType::u16 or PixelType::f32. Not owned.
struct ChunkPixels {
  const void* pixels = nullptr;
  PixelType type = PixelType::u16;
  std::int64_t first_frame = 0;
  std::int64_t count = 0;
  int width = 0;
  int height = 0;

  std::size_t frame_bytes() const {
    return static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * bytes_per_pixel(type);
  }
  std::size_t bytes() const { return static_cast<std::size_t>(count) * frame_bytes(); }
};

// The one check of a chunk, shared by the CPU and CUDA engines (inline: the
// CUDA engine does not link this library's objects by itself). UsageError for
// a pixel type other than u16/f32 or a null pointer with count > 0;
// InputError for frames smaller than the box.
inline void validate_chunk(const ChunkPixels& c, int box) {
  if (c.type != PixelType::u16 && c.type != PixelType::f32)
    throw UsageError("localize", "frames must be uint16 or float32, not " + to_string(c.type));
  if (c.count < 0 || (c.count > 0 && !c.pixels)) throw UsageError("localize", "no frames given");
  check_frame_size(c.width, c.height, box);
}

// What a localize engine does: detect with `detect`, fit with `fit`, and keep
// only the candidates inside `regions` (empty: everywhere).
// With `camera_maps` (sCMOS; wlsq and mle only) each ROI is fitted in photons
// with its per-pixel variance shift (CameraMaps::to_photons), and the fit's
// amplitude and background are reported in the units of fit.photon_offset and
// fit.photons_per_value (the camera's ADU), as without maps. Both engines
// apply them (the CUDA engine converts the cut ROIs on the device:
// kernels/loc/camera_maps_kernels.cu).
struct LocalizeSettings {
  DetectSettings detect;
  FitSettings fit;
  std::vector<Region> regions;
  std::shared_ptr<const CameraMaps> camera_maps;
  // A fit whose centre is more than this (px) from its box's centre is fitted again in a box
  // around it (loc/recenter.hpp); 0: never.
  double recenter_px = 0;

  // The fit's settings: with maps the data are photons already (offset 0, 1 photon per value).
  FitSettings fit_in_photons() const {
    FitSettings s = fit;
    if (camera_maps) {
      s.photon_offset = 0;
      s.photons_per_value = 1;
    }
    return s;
  }
  // With maps: α, β (and the CRLBs of β and the photons) of fits made in photons back in the camera's
  // units of fit.photon_offset and fit.photons_per_value, as without maps.
  void to_camera_units(FitResult* fits, std::size_t n) const {
    if (!camera_maps) return;
    for (std::size_t i = 0; i < n; ++i) {
      FitResult& r = fits[i];
      r.amplitude = static_cast<float>(r.amplitude / fit.photons_per_value);
      r.background = static_cast<float>(r.background / fit.photons_per_value + fit.photon_offset);
      r.crlb_background = static_cast<float>(r.crlb_background / fit.photons_per_value);
      r.crlb_photons = static_cast<float>(r.crlb_photons / fit.photons_per_value);
    }
  }
};

class LocalizeEngine {
 public:
  virtual ~LocalizeEngine() = default;

  // Detects spots in the chunk, drops those outside the regions and fits a
  // box × box ROI around each one kept. The three vectors are cleared and
  // filled with one entry per kept candidate, in (frame, y, x) order: the
  // candidate, the top-left pixel of its ROI in the frame (frame coordinates =
  // origin + fit coordinates), the fit. Returns the number of candidates
  // detected, the dropped ones included. An empty chunk gives nothing.
  // validate_chunk's errors.
  virtual std::int64_t localize(const ChunkPixels& chunk, std::vector<Candidate>& candidates,
                                std::vector<RoiOrigin>& origins, std::vector<FitResult>& fits) = 0;

  // `bytes` of host memory this engine reads chunks from fastest: page-locked
  // for CUDA (uploaded without a staging copy), plain for the CPU. Any host
  // memory may be given to localize(); this is only the fast path.
  virtual HostBuffer allocate_host(std::size_t bytes) = 0;

  virtual std::string name() const = 0;  // "cpu (2 threads)", "cuda:0"
};

// DetectEngine + cut_rois + the CPU fitter, on `threads` threads (≤ 0: all).
// UsageError for invalid settings.
std::unique_ptr<LocalizeEngine> make_cpu_localize_engine(const LocalizeSettings& settings, int threads);

}  // namespace nanoscopy
