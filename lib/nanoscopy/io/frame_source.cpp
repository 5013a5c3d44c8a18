#include "nanoscopy/io/frame_source.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace nanoscopy {

namespace {

// Two frames a reader at least (FrameReader's own rule for a span): a short
// range or small chunks need no threads that would never get a part.
int useful_read_threads(int requested, FrameRange::Resolved range, std::int64_t chunk_frames) {
  const std::int64_t frames = std::max<std::int64_t>(1, std::min(chunk_frames, range.count()));
  return static_cast<int>(std::clamp<std::int64_t>(frames / 2, 1, resolve_read_threads(requested)));
}

}  // namespace

std::span<const float> FrameChunk::floats() const {
  if (type != PixelType::f32) throw std::logic_error("FrameChunk::floats on a chunk that is not float32");
  return {static_cast<const float*>(pixels), static_cast<std::size_t>(count * pixels_per_frame)};
}

FrameSource::FrameSource(StackReader& reader, FrameRange::Resolved range, std::int64_t chunk_frames,
                         FrameSourceOptions options)
    : reader_(reader, useful_read_threads(options.read_threads, range, std::max<std::int64_t>(1, chunk_frames))),
      range_(range),
      chunk_frames_(std::max<std::int64_t>(1, chunk_frames)),
      options_(std::move(options)),
      pixels_per_frame_(reader.info().pixels_per_frame()),
      position_(range.first) {
  if (options_.prefetch < 0) throw std::logic_error("FrameSource: prefetch must not be negative");
  if (options_.hold < 1 || (options_.hold > 1 && options_.prefetch == 0))
    throw std::logic_error("FrameSource: hold must be at least 1, and more than 1 only with prefetch");
  // Checked here, in the consumer's thread, rather than on the first read.
  if (options_.type == PixelType::u16 && reader.info().type != PixelType::u16)
    throw std::logic_error("FrameSource: uint16 frames from a stack that is not uint16");
  if (options_.type != PixelType::u16 && options_.type != PixelType::f32)
    throw std::logic_error("FrameSource reads uint16 or float32 frames");
  const std::int64_t chunks = range_.count() > 0 ? (range_.count() + chunk_frames_ - 1) / chunk_frames_ : 0;
  const std::int64_t max_frames = std::max<std::int64_t>(1, std::min(chunk_frames_, range_.count()));
  buffer_bytes_ = static_cast<std::size_t>(max_frames * pixels_per_frame_) *
                  bytes_per_pixel(options_.type);
  // The consumer holds `hold` buffers while the reader fills up to `prefetch` more.
  const auto wanted = std::min<std::int64_t>(chunks, options_.prefetch + options_.hold);
  auto allocate = options_.allocate ? options_.allocate : allocate_plain_host;
  for (std::int64_t i = 0; i < std::max<std::int64_t>(wanted, 1); ++i) {  // allocated here: the engine's thread
    buffers_.push_back(allocate(buffer_bytes_));
    free_.push_back(buffers_.size() - 1);
  }
  if (options_.prefetch > 0 && chunks > 0) thread_ = std::thread([this] { read_ahead(); });
}

FrameSource::~FrameSource() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::int64_t FrameSource::chunk_count(std::int64_t first) const { return std::min(chunk_frames_, range_.last - first); }

void FrameSource::read_ahead() {
  using Clock = std::chrono::steady_clock;
  try {
    for (std::int64_t first = range_.first; first < range_.last; first += chunk_frames_) {
      std::size_t b;
      {
        const auto waited_from = Clock::now();
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || !free_.empty(); });
        if (stop_) break;
        b = free_.front();
        free_.pop_front();
        wait_seconds_ += std::chrono::duration<double>(Clock::now() - waited_from).count();
      }
      const std::int64_t count = chunk_count(first);
      const auto t0 = Clock::now();
      reader_.read(first, count, options_.type, buffers_[b].get());
      const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      {
        std::lock_guard lock(mutex_);
        read_seconds_ += seconds;
        filled_.push_back({b, first, count});
      }
      changed_.notify_all();
    }
  } catch (...) {
    std::lock_guard lock(mutex_);
    error_ = std::current_exception();
  }
  {
    std::lock_guard lock(mutex_);
    finished_ = true;
  }
  changed_.notify_all();
}

bool FrameSource::next(FrameChunk& chunk) {
  const std::int64_t pixels = pixels_per_frame_;
  if (!thread_.joinable()) {  // no prefetch: read here, into the one buffer
    if (position_ >= range_.last) return false;
    const std::int64_t count = chunk_count(position_);
    const auto t0 = std::chrono::steady_clock::now();
    reader_.read(position_, count, options_.type, buffers_[0].get());
    read_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    chunk = FrameChunk{position_, count, options_.type, buffers_[0].get(), pixels};
    position_ += count;
    return true;
  }
  std::unique_lock lock(mutex_);
  if (held_.size() >= static_cast<std::size_t>(options_.hold)) {
    free_.push_back(held_.front());
    held_.pop_front();
    changed_.notify_all();
  }
  changed_.wait(lock, [&] { return finished_ || !filled_.empty(); });
  if (filled_.empty()) {
    if (error_) std::rethrow_exception(error_);
    return false;
  }
  const Filled f = filled_.front();
  filled_.pop_front();
  held_.push_back(f.buffer);
  chunk = FrameChunk{f.first, f.count, options_.type, buffers_[f.buffer].get(), pixels};
  return true;
}

double FrameSource::read_seconds() const {
  std::lock_guard lock(mutex_);
  return read_seconds_;
}

double FrameSource::wait_seconds() const {
  std::lock_guard lock(mutex_);
  return wait_seconds_;
}

}  // namespace nanoscopy
