// How every tool streams frames from a stack (fit2d's pipeline, sofi, smre,
// frc, the stack scan): one place that knows the pixel type a consumer wants,
// whose memory the frames land in, and how reading overlaps the work.
//
// FrameReader reads a span of frames into the caller's memory, split over
// several readers of the same stack in parallel threads when it has them: one
// thread reads a TIFF from the page cache at 6.3 GB/s, four at 15.5 GB/s
// (docs/benchmarks.md, sofi speed), and the sofi GPU engine consumes more than
// one can read. sofi reads straight into its engine's rotating pinned buffers:
// they already overlap reading the next chunk with the GPU's work on this one,
// and a buffer of the source's own would cost a copy of every frame.
//
// FrameSource walks a frame range in chunks, in order. A reader thread reads
// the next chunks into buffers from the consumer's allocator (page-locked ones
// from a CUDA engine) while the consumer works on the current one; it runs at
// most `prefetch` chunks ahead, so memory is prefetch + 1 chunks whatever the
// stack length. A read error reaches the consumer, in its thread, after the
// chunks read before it, as the exception the reader threw.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "nanoscopy/core/frame_range.hpp"
#include "nanoscopy/core/host_buffer.hpp"
#include "nanoscopy/io/pixel_type.hpp"
#include "nanoscopy/io/stack_reader.hpp"

namespace nanoscopy {

class FrameReader {
 public:
  // `extra_readers`: more readers of the same stack, opened separately (a
  // StackReader is not thread-safe). `step`: a span of n frames from `first` is
  // stack frames first, first + step, ..., first + (n - 1) * step.
  explicit FrameReader(StackReader& reader, std::vector<StackReader*> extra_readers = {}, std::int64_t step = 1);

  const StackInfo& info() const { return reader_.info(); }

  // Reads `count` frames from stack frame `first` into `dst` as `type`: u16
  // (the file's own values; only from a uint16 stack) or f32 (converted).
  // Throws what the stack reader throws (InputError naming file and frame).
  void read(std::int64_t first, std::int64_t count, PixelType type, void* dst);

 private:
  void read_part(StackReader& reader, std::int64_t first, std::int64_t count, PixelType type, void* dst);

  StackReader& reader_;
  std::vector<StackReader*> extra_;
  std::int64_t step_;
};

struct FrameChunk {
  std::int64_t first = 0;  // stack frame of the chunk's first frame
  std::int64_t count = 0;
  PixelType type = PixelType::f32;
  const void* pixels = nullptr;  // count frames (T, Y, X) of `type`; valid until the next next()
  std::int64_t pixels_per_frame = 0;

  // The pixels as float32 (std::logic_error unless type is f32).
  std::span<const float> floats() const;
};

struct FrameSourceOptions {
  PixelType type = PixelType::f32;  // u16 only from a uint16 stack
  int prefetch = 1;                 // chunks read ahead by the reader thread; 0: read in next(), no thread
  // Chunk memory (bytes); empty: plain host memory.
  std::function<HostBuffer(std::size_t)> allocate;
  std::vector<StackReader*> extra_readers;  // parallel reads of each chunk (FrameReader)
  // Chunks the consumer holds at once (> 1 needs prefetch > 0): a chunk's pixels
  // stay valid until `hold` more next() calls, which hand buffers back oldest
  // first (fit2d's pipeline keeps chunks in flight on every GPU: loc/localize_dispatch.hpp).
  int hold = 1;
  // (last: the fields above are set by position elsewhere)
};

class FrameSource {
 public:
  // Chunks of at most `chunk_frames` (>= 1) frames over `range`; the last may be shorter.
  FrameSource(StackReader& reader, FrameRange::Resolved range, std::int64_t chunk_frames,
              FrameSourceOptions options = {});
  ~FrameSource();  // stops the reader thread and waits for it
  FrameSource(const FrameSource&) = delete;
  FrameSource& operator=(const FrameSource&) = delete;

  // The next chunk, or false at the end. Hands the oldest held chunk's buffer
  // back to the reader once `hold` chunks are held. Rethrows a read error once the chunks before it are taken.
  bool next(FrameChunk& chunk);

  // Seconds spent reading (decode + convert) so far, in the reader thread or in next().
  double read_seconds() const;

 private:
  struct Filled {
    std::size_t buffer;
    std::int64_t first, count;
  };
  std::int64_t chunk_count(std::int64_t first) const;
  void read_ahead();  // the reader thread

  FrameReader reader_;
  FrameRange::Resolved range_;
  std::int64_t chunk_frames_;
  FrameSourceOptions options_;
  std::int64_t pixels_per_frame_;
  std::size_t buffer_bytes_ = 0;
  std::vector<HostBuffer> buffers_;
  std::int64_t position_;  // next frame to read

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::size_t> free_;  // buffers the reader may fill
  std::deque<Filled> filled_;     // read, in order, not yet taken
  std::deque<std::size_t> held_;  // the buffers of the chunks the consumer holds, oldest first
  bool finished_ = false;         // the reader has stopped (end or error)
  bool stop_ = false;             // the consumer is gone
  std::exception_ptr error_;
  double read_seconds_ = 0;
  std::thread thread_;
};

}  // namespace nanoscopy
