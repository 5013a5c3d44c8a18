// The backend interface of eSRRF: "radial gradient convergence of a chunk of
// frames, added to the temporal sums of the time points they belong to". The
// CPU engine (esrrf_engine_cpu.cpp, OpenMP) is the reference; the CUDA engine
// (kernels/sofi/esrrf_engine_cuda.cpp) keeps the sums on the GPU and overlaps the
// upload of the next chunk with the work on this one. Both evaluate the same
// per-pixel functions (esrrf_math.hpp) in float, in the same order per pixel.
//
// A run (esrrf.hpp) walks the frames in chunks from the frame source
// (io/frame_source.hpp), whose buffers the engine allocates (allocate_host:
// page-locked on the GPU): accumulate(chunk) for each, read_slot(s) for each
// time point whose frames are all added. accumulate() may return before the
// work is done but not before it has stopped reading the chunk's host memory.
// Memory: the engine's chunk of frames plus slots x 5 float planes of the
// magnified size (width M x height M) — bounded by the chunk, not the stack.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/core/host_buffer.hpp"
#include "nanoscopy/io/pixel_type.hpp"
#include "nanoscopy/sofi/esrrf_math.hpp"

namespace nanoscopy {

struct EsrrfSettings {
  int magnification = 5;
  double radius = 1.5;       // input pixels; sigma = radius / 2.355
  double sensitivity = 1;    // RGC^sensitivity (where > 1)
  bool intensity_weighting = true;
  esrrf_math::Temporal temporal = esrrf_math::Temporal::avg;
  bool macro_pixel_correction = true;
};

// The RGC taps of every output-pixel phase (esrrf_math.hpp, step 4), in float.
struct EsrrfTable {
  std::vector<esrrf_math::RgcTap> taps;
  std::vector<int> offset;  // M * M + 1
  int magnification = 1;
  int margin = 0;
  float sensitivity = 1;
  bool intensity_weighting = true;
  // A view on host memory (the CPU engine); the CUDA engine copies the arrays.
  esrrf_math::RgcTableView view() const;
};
EsrrfTable make_rgc_table(const EsrrfSettings& settings);

// Frames t (stack numbering) with begin <= t < end and (t - begin) % step == 0
// are the slot's time point; a slot is reset by its first frame, t == begin.
struct EsrrfSlot {
  std::int64_t begin = 0, end = 0, step = 1;
  bool contains(std::int64_t t) const { return t >= begin && t < end && (t - begin) % step == 0; }
  std::int64_t frames() const { return end > begin ? (end - begin + step - 1) / step : 0; }
};

// `count` frames (T, Y, X) of `type` (u16 or f32) at `pixels`, frame j being
// stack frame first + j; slots[i] describes slot i (an inactive slot: begin == end).
struct EsrrfChunk {
  PixelType type = PixelType::f32;
  const void* pixels = nullptr;
  std::int64_t first = 0, count = 0;
  std::span<const EsrrfSlot> slots;
};

struct EsrrfGeometry {
  std::int64_t width = 0, height = 0;  // input frame
  int slots = 1;                       // time points summed at once
  std::int64_t out_width(int m) const { return width * m; }
  std::int64_t out_height(int m) const { return height * m; }
};

// Sums of one slot, plane-major (k, s1, s2, p, last; esrrf_math::TemporalState),
// each out_width * out_height floats.
struct EsrrfSlotSums {
  std::vector<float> k, s1, s2, p, last;
};

class EsrrfEngine {
 public:
  virtual ~EsrrfEngine() = default;
  virtual std::string name() const = 0;
  virtual std::int64_t chunk_capacity() const = 0;
  // Host memory for a chunk (page-locked on the GPU).
  virtual HostBuffer allocate_host(std::size_t bytes) = 0;
  virtual void accumulate(const EsrrfChunk& chunk) = 0;
  // The slot's sums (after every chunk accumulated so far).
  virtual void read_slot(int slot, EsrrfSlotSums& out) = 0;
};

std::unique_ptr<EsrrfEngine> make_cpu_esrrf_engine(const EsrrfGeometry& geometry, const EsrrfSettings& settings,
                                                   std::int64_t chunk_frames, int threads);

// The CPU reference's per-frame pieces, for tests and the GPU test's comparison:
// the Robert's cross images and the half-pixel gradient lattices of one frame, and
// the RGC map (out_width x out_height, intensity-weighted as the settings say).
void esrrf_lattices(const float* frame, std::int64_t width, std::int64_t height, int magnification,
                    std::vector<float>& g2c, std::vector<float>& g2r);
std::vector<float> esrrf_rgc_map(const float* frame, std::int64_t width, std::int64_t height,
                                 const EsrrfSettings& settings, int threads = 1);
// Catmull-Rom magnification of an image by an integer factor (NanoPyx's ShiftAndMagnify, no shift).
std::vector<float> cr_magnify(const float* image, std::int64_t width, std::int64_t height, int magnification);

}  // namespace nanoscopy
