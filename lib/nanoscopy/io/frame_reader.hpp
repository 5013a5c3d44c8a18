// FrameReader reads a span of frames into the caller's memory, split over
// several readers of the same stack in parallel threads. Reading, not the
// work, bounds the tools on a GPU: one thread reads a TIFF from the page cache
// at 6.3 GB/s, four at 15.5 GB/s (docs/benchmarks.md, sofi speed).
//
// The reader opens the others itself (StackReader::another_reader(): the same
// open file and page index) and keeps one worker thread per extra reader for
// its whole life, so a span costs two wake-ups, not thread starts. Part i of a
// span goes to reader i, so the frames land where one reader would put them:
// the pixels never depend on the number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "nanoscopy/io/pixel_type.hpp"
#include "nanoscopy/io/stack_reader.hpp"

namespace nanoscopy {

// The read threads `requested` stands for: itself when positive; 0 (auto):
// half the hardware threads (the other half is the tool's own work), at least
// 1 and at most 8. On the 16-thread H100 host, 256² uint16 from the page cache:
// 1 thread 5.0e4 frames/s, 4 threads 1.6e5, 8 threads 3.1e5, 12 threads 3.4e5;
// fit2d end to end (two engines on the GPU) 1.42e5 frames/s with 8, 1.43e5 with 12.
int resolve_read_threads(int requested);

class FrameReader {
 public:
  // `threads`: readers a span is split over (0: auto, resolve_read_threads);
  // fewer where the format has no second reader (HDF5, PNG). `step`: a span
  // of n frames from `first` is stack frames first, first + step, ...,
  // first + (n - 1) * step.
  explicit FrameReader(StackReader& reader, int threads = 1, std::int64_t step = 1);
  ~FrameReader();  // stops and joins the worker threads
  FrameReader(const FrameReader&) = delete;
  FrameReader& operator=(const FrameReader&) = delete;

  const StackInfo& info() const { return reader_.info(); }
  // Readers in use, the caller's one included.
  int threads() const;

  // Reads `count` frames from stack frame `first` into `dst` as `type`: u16
  // (the file's own values; only from a uint16 stack) or f32 (converted).
  // Throws what the stack reader throws (InputError naming file and frame);
  // when several parts fail, the error of the lowest frame.
  // A span that follows one read slower than the page cache gives (a disk) is
  // first announced to the stack reader (StackReader::will_read).
  void read(std::int64_t first, std::int64_t count, PixelType type, void* dst);

 private:
  struct Workers;
  void read_span(std::int64_t first, std::int64_t count, PixelType type, void* dst);
  void read_part(StackReader& reader, std::int64_t first, std::int64_t count, PixelType type, void* dst) const;

  StackReader& reader_;
  std::int64_t step_;
  std::unique_ptr<Workers> workers_;  // null with one thread
  double last_bytes_per_s_ = 0;       // of the file, over the last span read (0: none read yet)
};

}  // namespace nanoscopy
