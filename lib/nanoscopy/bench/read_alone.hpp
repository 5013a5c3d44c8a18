// Reading a stack alone, through the same machinery the tools read with, so a
// bench's "pipeline / read" compares like with like: fit2d's FrameSource (read
// ahead, each chunk decoded by several threads) and sofi's FrameReader (each
// chunk decoded by several threads, in the caller's thread). Warm (the file in
// the page cache) or cold (its pages dropped before each pass: page_cache.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nanoscopy/core/host_buffer.hpp"
#include "nanoscopy/io/pixel_type.hpp"

namespace nanoscopy {

// Seconds to take every frame of the stack, in chunks, from a FrameSource with
// these settings (the reader opened before the clock starts); `threads` is
// FrameSourceOptions::read_threads. Returns the threads it resolved to in `used`.
// `allocate` (optional) gives the chunk buffers, as FrameSourceOptions::allocate.
double time_frame_source(const std::string& path, std::int64_t chunk_frames, PixelType type, int prefetch,
                         int threads, int* used = nullptr,
                         std::function<HostBuffer(std::size_t)> allocate = {});

// Seconds to read every frame into one chunk buffer with a FrameReader of
// `threads` readers (sofi's reading; float32 unless the stack is uint16).
double time_frame_reader(const std::string& path, std::int64_t chunk_frames, int threads, int* used = nullptr);

struct TimedPasses {
  double seconds = 0;          // the best pass
  std::string cache;           // "warm" or "cold"
  std::string drop_method;     // cold: how the pages were dropped
  double resident_after = -1;  // cold: the largest fraction of the file still cached after a drop
};

// The best of `passes` runs of `pass` (each returns its seconds). Warm: one
// untimed run first fills the page cache. Cold: the file's pages are dropped
// before every run.
TimedPasses best_of_passes(const std::string& path, bool cold, int passes, const std::function<double()>& pass);

// The median of run_s[i] / read_s[i]: each pipeline run against a read-alone pass made just before it. The
// host's own read rate moves by up to a third between passes a minute apart (docs/benchmarks.md, 2026-12-07),
// so a run paired with the pass beside it says more than the best run against the best pass of another minute.
double median_paired_ratio(const std::vector<double>& run_s, const std::vector<double>& read_s);

}  // namespace nanoscopy
