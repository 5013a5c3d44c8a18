#include "nanoscopy/io/frame_source.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace nanoscopy {

FrameReader::FrameReader(StackReader& reader, std::vector<StackReader*> extra_readers, std::int64_t step)
    : reader_(reader), extra_(std::move(extra_readers)), step_(step) {
  if (step_ < 1) throw std::logic_error("FrameReader: step must be at least 1");
}

void FrameReader::read_part(StackReader& reader, std::int64_t first, std::int64_t count, PixelType type, void* dst) {
  const std::int64_t pixels = reader.info().pixels_per_frame();
  const bool u16 = type == PixelType::u16;
  auto read = [&](std::int64_t frame, std::int64_t n, std::int64_t offset_frames) {
    if (u16)
      reader.read_raw(frame, n, static_cast<std::uint16_t*>(dst) + offset_frames * pixels);
    else
      reader.read_float(frame, n, static_cast<float*>(dst) + offset_frames * pixels);
  };
  if (step_ == 1) return read(first, count, 0);
  for (std::int64_t j = 0; j < count; ++j) read(first + j * step_, 1, j);  // not contiguous in the file
}

void FrameReader::read(std::int64_t first, std::int64_t count, PixelType type, void* dst) {
  if (type != PixelType::u16 && type != PixelType::f32)
    throw std::logic_error("FrameReader reads uint16 or float32 frames");
  if (type == PixelType::u16 && reader_.info().type != PixelType::u16)
    throw std::logic_error("FrameReader: uint16 frames from a stack that is not uint16");
  const auto parts = static_cast<std::int64_t>(extra_.size()) + 1;
  // Below two frames a part, threads cost more than they win.
  if (parts == 1 || count < 2 * parts) return read_part(reader_, first, count, type, dst);
  const std::size_t frame_bytes =
      static_cast<std::size_t>(reader_.info().pixels_per_frame()) * (type == PixelType::u16 ? 2 : 4);
  // Part i: frames [count * i / parts, count * (i + 1) / parts) of the span, by reader i.
  auto part = [&](std::int64_t i, StackReader& r) {
    const std::int64_t lo = count * i / parts, hi = count * (i + 1) / parts;
    read_part(r, first + lo * step_, hi - lo, type,
              static_cast<unsigned char*>(dst) + static_cast<std::size_t>(lo) * frame_bytes);
  };
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(parts));
  std::vector<std::thread> threads;
  for (std::int64_t i = 1; i < parts; ++i)
    threads.emplace_back([&, i] {
      try {
        part(i, *extra_[static_cast<std::size_t>(i - 1)]);
      } catch (...) {
        errors[static_cast<std::size_t>(i)] = std::current_exception();
      }
    });
  try {
    part(0, reader_);
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors)  // the first part's error first: the lowest frame that failed
    if (e) std::rethrow_exception(e);
}

std::span<const float> FrameChunk::floats() const {
  if (type != PixelType::f32) throw std::logic_error("FrameChunk::floats on a chunk that is not float32");
  return {static_cast<const float*>(pixels), static_cast<std::size_t>(count * pixels_per_frame)};
}

FrameSource::FrameSource(StackReader& reader, FrameRange::Resolved range, std::int64_t chunk_frames,
                         FrameSourceOptions options)
    : reader_(reader, options.extra_readers),
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
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || !free_.empty(); });
        if (stop_) break;
        b = free_.front();
        free_.pop_front();
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

}  // namespace nanoscopy
