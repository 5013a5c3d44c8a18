#include "nanoscopy/io/frame_reader.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace nanoscopy {

int resolve_read_threads(int requested) {
  if (requested > 0) return requested;
  if (requested < 0) throw std::logic_error("read threads must not be negative");
  const int hardware = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(hardware / 2, 1, 8);
}

// One thread per extra reader, woken for each span: a generation count says
// there is a new part to read, `pending` counts the parts not yet done.
struct FrameReader::Workers {
  std::vector<std::unique_ptr<StackReader>> readers;  // reader i + 1 of the span's parts
  std::vector<std::thread> threads;

  std::mutex mutex;
  std::condition_variable start, done;
  std::uint64_t generation = 0;
  int pending = 0;
  bool quit = false;
  std::function<void(std::size_t, StackReader&)> part;  // set before each generation, unchanged until done
  std::vector<std::exception_ptr> errors;                // by part

  void run(std::size_t i) {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mutex);
        start.wait(lock, [&] { return quit || generation != seen; });
        if (quit) return;
        seen = generation;
      }
      std::exception_ptr error;
      try {
        part(i + 1, *readers[i]);
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard lock(mutex);
      errors[i + 1] = error;
      if (--pending == 0) done.notify_all();
    }
  }

  ~Workers() {
    {
      std::lock_guard lock(mutex);
      quit = true;
    }
    start.notify_all();
    for (auto& t : threads) t.join();
  }
};

FrameReader::FrameReader(StackReader& reader, int threads, std::int64_t step) : reader_(reader), step_(step) {
  if (step_ < 1) throw std::logic_error("FrameReader: step must be at least 1");
  const int wanted = resolve_read_threads(threads);
  if (wanted == 1) return;
  auto workers = std::make_unique<Workers>();
  for (int i = 1; i < wanted; ++i) {
    auto another = reader.another_reader();
    if (!another) break;  // a format read by one thread (HDF5)
    workers->readers.push_back(std::move(another));
  }
  if (workers->readers.empty()) return;
  workers->errors.resize(workers->readers.size() + 1);
  workers_ = std::move(workers);
  // Started once the readers are all open: a failed open leaves no thread behind.
  for (std::size_t i = 0; i < workers_->readers.size(); ++i)
    workers_->threads.emplace_back([w = workers_.get(), i] { w->run(i); });
}

FrameReader::~FrameReader() = default;

int FrameReader::threads() const { return workers_ ? static_cast<int>(workers_->readers.size()) + 1 : 1; }

void FrameReader::read_part(StackReader& reader, std::int64_t first, std::int64_t count, PixelType type,
                            void* dst) const {
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

namespace {

// Spans read slower than this come from a disk, not the page cache, and the next one is announced
// (StackReader::will_read): from a cold file, 8 threads then read 1.67 instead of 1.29 GB/s on the GPU machine's
// disk. From the page cache (5 GB/s with one thread there, 17–35 GB/s with eight) the announcement would only cost
// its page lookups (about 1 ms per 33 MB chunk: it halved 8 threads' warm rate there), so it is left out.
constexpr double kAnnounceBelowBytesPerS = 3e9;
// Reads smaller than this do not change that judgement: one frame converted to float by one thread
// (sofi's shift frame of each block) runs below 3 GB/s from the page cache too, and the 134 MB chunk
// after it would be announced, paying the page lookups (about 1 ms per 33 MB) for nothing.
constexpr double kJudgeFromBytes = 4e6;

}  // namespace

void FrameReader::read(std::int64_t first, std::int64_t count, PixelType type, void* dst) {
  if (type != PixelType::u16 && type != PixelType::f32)
    throw std::logic_error("FrameReader reads uint16 or float32 frames");
  if (type == PixelType::u16 && reader_.info().type != PixelType::u16)
    throw std::logic_error("FrameReader: uint16 frames from a stack that is not uint16");
  const auto start = std::chrono::steady_clock::now();
  if (step_ == 1 && last_bytes_per_s_ < kAnnounceBelowBytesPerS) reader_.will_read(first, count);
  read_span(first, count, type, dst);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double bytes = static_cast<double>(count) * static_cast<double>(reader_.info().bytes_per_frame());
  if (bytes >= kJudgeFromBytes) last_bytes_per_s_ = seconds > 0 ? bytes / seconds : kAnnounceBelowBytesPerS;
}

void FrameReader::read_span(std::int64_t first, std::int64_t count, PixelType type, void* dst) {
  const std::int64_t parts = threads();
  // Below two frames a part, the wake-ups cost more than they win.
  if (parts == 1 || count < 2 * parts) return read_part(reader_, first, count, type, dst);
  const std::size_t frame_bytes =
      static_cast<std::size_t>(reader_.info().pixels_per_frame()) * (type == PixelType::u16 ? 2 : 4);
  Workers& w = *workers_;
  {
    std::lock_guard lock(w.mutex);
    // Part i: frames [count * i / parts, count * (i + 1) / parts) of the span, by reader i.
    w.part = [&, parts](std::size_t i, StackReader& r) {
      const auto k = static_cast<std::int64_t>(i);
      const std::int64_t lo = count * k / parts, hi = count * (k + 1) / parts;
      read_part(r, first + lo * step_, hi - lo, type,
                static_cast<unsigned char*>(dst) + static_cast<std::size_t>(lo) * frame_bytes);
    };
    std::fill(w.errors.begin(), w.errors.end(), nullptr);
    w.pending = static_cast<int>(parts - 1);
    ++w.generation;
  }
  w.start.notify_all();
  std::exception_ptr mine;
  try {
    w.part(0, reader_);
  } catch (...) {
    mine = std::current_exception();
  }
  std::unique_lock lock(w.mutex);
  w.done.wait(lock, [&] { return w.pending == 0; });
  w.errors[0] = mine;
  for (auto& e : w.errors)  // the first part's error first: the lowest frame that failed
    if (e) std::rethrow_exception(e);
}

}  // namespace nanoscopy
