#include "nanoscopy/loc/pipeline.hpp"
#include "nanoscopy/loc/median_histogram.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/progress.hpp"
#include "nanoscopy/loc/chunk_localizer.hpp"

namespace nanoscopy {
namespace {

using Clock = std::chrono::steady_clock;

// A chunk of frames as read: the raw uint16 pixels when the stack is uint16
// (the localizer filters them as float and fits uint16 ROIs), else float32; in
// the localizer's own host memory (page-locked for CUDA: uploaded as is).
struct Chunk {
  std::int64_t first = 0, count = 0;
  HostBuffer pixels{nullptr, [](void*) {}};
};

// A tiny blocking queue with a capacity: the reader runs at most `capacity`
// chunks ahead, so memory stays bounded whatever the stack length.
template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity) {}
  void push(T item) {
    std::unique_lock lock(mutex_);
    not_full_.wait(lock, [&] { return items_.size() < capacity_; });
    items_.push_back(std::move(item));
    not_empty_.notify_one();
  }
  T pop() {
    std::unique_lock lock(mutex_);
    not_empty_.wait(lock, [&] { return !items_.empty(); });
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }

 private:
  std::size_t capacity_;
  std::deque<T> items_;
  std::mutex mutex_;
  std::condition_variable not_full_, not_empty_;
};

}  // namespace

PipelineSummary run_localization(StackReader& reader, FrameRange::Resolved range, ChunkLocalizer& localizer,
                                 const PipelineSettings& settings, const LocalizationSink& sink) {
  const auto start = Clock::now();
  const StackInfo& info = reader.info();
  validate_detect_settings(settings.detect);
  try {
    check_frame_size(info.width, info.height, settings.detect.box);
  } catch (const InputError& e) {
    throw InputError(info.path, e.what());
  }
  settings.camera.validate("camera");
  const int width = static_cast<int>(info.width), height = static_cast<int>(info.height);
  const bool u16 = info.type == PixelType::u16;
  const PixelType chunk_type = u16 ? PixelType::u16 : PixelType::f32;

  PipelineSummary summary;
  summary.device = localizer.name();

  // Reader thread: up to two chunks ahead; std::nullopt marks the end (or an error).
  BoundedQueue<std::optional<Chunk>> full(2);
  BoundedQueue<Chunk> spare(3);
  const std::int64_t max_frames = std::max<std::int64_t>(1, std::min(settings.chunk_frames, range.count()));
  for (int i = 0; i < 3; ++i) {
    Chunk c;
    c.pixels = localizer.allocate_host(
        static_cast<std::size_t>(max_frames * info.pixels_per_frame()) * bytes_per_pixel(chunk_type));
    spare.push(std::move(c));
  }
  std::exception_ptr read_error;
  double read_seconds = 0;
  std::atomic<bool> stop{false};  // set when the worker fails: no point reading on
  std::thread reader_thread([&] {
    try {
      for (std::int64_t first = range.first; first < range.last && !stop; first += settings.chunk_frames) {
        Chunk c = spare.pop();
        const auto t0 = Clock::now();
        c.first = first;
        c.count = std::min(settings.chunk_frames, range.last - first);
        if (u16)
          reader.read_raw(c.first, c.count, c.pixels.get());
        else
          reader.read_float(c.first, c.count, static_cast<float*>(c.pixels.get()));
        read_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
        full.push(std::move(c));
      }
    } catch (...) {
      read_error = std::current_exception();
    }
    full.push(std::nullopt);
  });

  Progress progress("fit2d " + info.path, range.count(), settings.quiet);
  std::vector<Candidate> candidates;
  std::vector<RoiOrigin> origins;
  std::vector<FitResult> fits;
  std::vector<Localization> accepted;
  MedianHistogram precisions;
  std::exception_ptr work_error;
  for (;;) {
    std::optional<Chunk> item = full.pop();
    if (!item) break;
    if (work_error) {  // drain the reader after a failure
      spare.push(std::move(*item));
      continue;
    }
    try {
      Chunk& c = *item;
      on_frames(c.first, c.count, [&] {
        localizer.localize(ChunkPixels{c.pixels.get(), chunk_type, c.first, c.count, width, height}, candidates,
                            origins, fits);
      });
      summary.candidates += static_cast<std::int64_t>(candidates.size());
      accepted.clear();
      for (std::size_t k = 0; k < candidates.size(); ++k) {
        if (!in_regions(settings.regions, candidates[k].x, candidates[k].y)) continue;  // not counted
        const auto loc = to_localization(fits[k], candidates[k].frame, origins[k].x0, origins[k].y0, settings.camera,
                                         settings.fit.model,
                                         candidates[k].net_gradient * settings.camera.photons_per_adu());
        if (accept(loc, settings.filter, settings.camera)) {
          accepted.push_back(loc);
          precisions.add(loc.lpx * settings.camera.pixel_size_nm);
        } else {
          ++summary.rejected;
        }
      }
      summary.localizations += static_cast<std::int64_t>(accepted.size());
      sink(accepted);
      summary.frames += c.count;
      progress.update(summary.frames);
    } catch (...) {
      work_error = std::current_exception();
      stop = true;
    }
    spare.push(std::move(*item));
  }
  reader_thread.join();
  if (work_error) std::rethrow_exception(work_error);
  if (read_error) std::rethrow_exception(read_error);
  progress.finish();

  summary.median_precision_nm = precisions.median();
  summary.read_seconds = read_seconds;
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return summary;
}

}  // namespace nanoscopy
