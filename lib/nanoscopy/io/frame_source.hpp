// How every tool streams frames from a stack (fit2d's pipeline, sofi, smre,
// frc, the stack scan): one place that knows the pixel type a consumer wants,
// whose memory the frames land in, and how reading overlaps the work.
//
// FrameSource walks a frame range in chunks, in order. A reader thread reads
// the next chunks into buffers from the consumer's allocator (page-locked ones
// from a CUDA engine) while the consumer works on the current one; it runs at
// most `prefetch` chunks ahead, so memory is prefetch + 1 chunks whatever the
// stack length. Each chunk is decoded by `read_threads` readers of the stack
// in parallel (FrameReader, frame_reader.hpp), every one taking a share of its
// frames. Splitting a chunk, rather than reading several chunks at once, keeps
// memory at prefetch + 1 chunks whatever the threads, keeps the order without
// any reordering, and brings the first chunk sooner. A read error reaches the
// consumer, in its thread, after the chunks read before it, as the exception
// the reader threw (naming file and frame).
//
// sofi reads with a FrameReader straight into its engine's rotating pinned
// buffers: they already overlap reading the next chunk with the GPU's work on
// this one, and a buffer of the source's own would cost a copy of every frame.
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
#include "nanoscopy/io/frame_reader.hpp"
#include "nanoscopy/io/pixel_type.hpp"
#include "nanoscopy/io/stack_reader.hpp"

namespace nanoscopy {

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
  // Readers that decode each chunk in parallel (0: auto, resolve_read_threads);
  // never more than half the chunk's frames, and one for HDF5.
  int read_threads = 0;
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
  // Seconds the reader thread waited for a free buffer (the consumer held them all): the reading is not the
  // bottleneck while this grows.
  double wait_seconds() const;
  // The readers decoding each chunk (FrameSourceOptions::read_threads as resolved).
  int read_threads() const { return reader_.threads(); }

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
  double wait_seconds_ = 0;
  std::thread thread_;
};

}  // namespace nanoscopy
