#include "nanoscopy/loc/pipeline.hpp"
#include "nanoscopy/loc/median_histogram.hpp"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/progress.hpp"
#include "nanoscopy/core/stage_profile_flag.hpp"
#include "nanoscopy/io/frame_source.hpp"
#include "nanoscopy/loc/duplicates.hpp"
#include "nanoscopy/loc/localize_dispatch.hpp"
#include "nanoscopy/loc/localize_engine.hpp"

namespace nanoscopy {
namespace {

using Clock = std::chrono::steady_clock;

// The sink (fit2d's writer: CSV/HDF5 formatting) on a thread of its own, fed
// in chunk order: this overlaps with the engines and the reading, and the main
// thread only hands chunks on. At most `depth` chunks wait. The first error is
// rethrown by the next put() or by finish(); after it the rest are dropped.
class SinkThread {
 public:
  using Handler = std::function<void(LocalizedChunk&)>;
  SinkThread(Handler handle, std::size_t depth)
      : handle_(std::move(handle)), depth_(depth), thread_([this] { run(); }) {}
  ~SinkThread() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  SinkThread(const SinkThread&) = delete;
  SinkThread& operator=(const SinkThread&) = delete;

  void put(LocalizedChunk chunk) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return queue_.size() < depth_ || error_; });
    if (error_) std::rethrow_exception(error_);
    queue_.push_back(std::move(chunk));
    changed_.notify_all();
  }

  double busy_seconds() {
    std::lock_guard lock(mutex_);
    return busy_seconds_;
  }

  // Waits until every chunk put is written; rethrows the sink's error.
  void finish() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return (queue_.empty() && !busy_) || error_; });
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;  // finish() emptied the queue, or an error unwinds: the rest is dropped
      LocalizedChunk chunk = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      lock.unlock();
      std::exception_ptr error;
      const auto t0 = std::chrono::steady_clock::now();
      try {
        handle_(chunk);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      busy_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      busy_ = false;
      if (error && !error_) error_ = error;
      if (error_) queue_.clear();
      changed_.notify_all();
    }
  }

  Handler handle_;
  std::size_t depth_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<LocalizedChunk> queue_;
  bool busy_ = false, stop_ = false;
  double busy_seconds_ = 0;  // in handle_ (the stage profile reads it after finish())
  std::exception_ptr error_;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace

PipelineSummary run_localization(StackReader& reader, FrameRange::Resolved range, LocalizeEngine& localizer,
                                 const PipelineSettings& settings, const LocalizationSink& sink) {
  LocalizeEngine* one[] = {&localizer};
  return run_localization(reader, range, one, settings, sink);
}

int localize_engines_per_gpu(const PipelineSettings& settings) {
  return resolve_read_threads(settings.read_threads) >= 8 ? 2 : 1;
}

PipelineSummary run_localization(StackReader& reader, FrameRange::Resolved range,
                                 std::span<LocalizeEngine* const> localizers, const PipelineSettings& settings,
                                 const LocalizationSink& sink) {
  if (localizers.empty()) throw std::logic_error("run_localization: no localize engine");
  LocalizeEngine& localizer = *localizers.front();
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
  std::vector<std::string> names;  // each GPU once (it runs two engines)
  for (LocalizeEngine* l : localizers)
    if (std::find(names.begin(), names.end(), l->name()) == names.end()) names.push_back(l->name());
  for (const auto& name : names) summary.device += (summary.device.empty() ? "" : " + ") + name;

  // Frames as read: the raw uint16 pixels when the stack is uint16 (the
  // localizer filters them as float and fits uint16 ROIs), else float32; in the
  // first localizer's host memory (page-locked for CUDA: uploaded as is; pinned
  // memory serves every GPU of the process), read up to two chunks ahead while
  // the engines detect and fit the chunks they hold, two each: an engine starts
  // its next chunk while this thread hands on the oldest (with one chunk per
  // engine the GPU waited for that). Each chunk is decoded by several
  // threads (reading, not fitting, bounds a GPU run).
  const int per_engine = 2;
  FrameSourceOptions source_options;
  source_options.type = chunk_type;
  source_options.prefetch = 2;
  source_options.read_threads = settings.read_threads;
  source_options.hold = static_cast<int>(localizers.size()) * per_engine;
  source_options.allocate = [&](std::size_t bytes) { return localizer.allocate_host(bytes); };
  const auto buffers_from = Clock::now();
  FrameSource source(reader, range, settings.chunk_frames, std::move(source_options));
  const double t_buffers = std::chrono::duration<double>(Clock::now() - buffers_from).count();
  // Each chunk's fits become localizations (conversion, filter, duplicates) on its engine's thread, beside
  // the GPU work of the other engines. On the writer thread that was about a quarter of its work (0.12 of
  // 0.44 s per 100k frames of 256² on the H100), and the writer held up the warm pipeline in some runs.
  const auto to_localizations = [&](LocalizedChunk& r) {
    r.accepted.reserve(r.candidates.size());
    for (std::size_t k = 0; k < r.candidates.size(); ++k) {
      // net_gradient in camera counts, as Picasso's (a filter written for its numbers cuts the same).
      const auto loc = to_localization(r.fits[k], r.candidates[k].frame, r.origins[k].x0, r.origins[k].y0,
                                       settings.camera, settings.fit, r.candidates[k].net_gradient);
      if (accept(loc, settings.filter, settings.camera))
        r.accepted.push_back(loc);
      else
        ++r.rejected;
    }
    r.rejected += remove_duplicates(r.accepted, settings.duplicate_distance_px);
  };
  LocalizeDispatcher dispatcher(localizers, per_engine, to_localizations);  // after the source: stopped before its buffers go

  Progress progress("fit2d " + info.path, range.count(), settings.quiet);
  MedianHistogram precisions;
  std::int64_t rejected = 0, localizations = 0;  // the writer thread's; read after writer.finish()
  SinkThread writer(
      [&](LocalizedChunk& r) {
        for (const Localization& loc : r.accepted) precisions.add(loc.lpx * settings.camera.pixel_size_nm);
        rejected += r.rejected;
        localizations += static_cast<std::int64_t>(r.accepted.size());
        sink(r.accepted);
      },
      2);
  // NANOSCOPY_STAGE_PROFILE=1: where the main thread's time goes (stderr at the end), beside the GPU stages.
  const bool profile = stage_profile_enabled();
  double t_take = 0, t_put = 0, t_next = 0, t_submit = 0, t_sink = 0;
  const auto lap = [&](double& into, Clock::time_point& since) {
    const auto now = Clock::now();
    into += std::chrono::duration<double>(now - since).count();
    since = now;
  };
  // The oldest chunk's fits to the writer thread: chunks are taken in the order given.
  auto take_oldest = [&] {
    auto t = Clock::now();
    LocalizedChunk r = dispatcher.take();
    if (profile) lap(t_take, t);
    // Every candidate detected, those outside the regions (dropped before fitting) included.
    summary.candidates += r.detected;
    summary.frames += r.count;
    writer.put(std::move(r));
    if (profile) lap(t_put, t);
    progress.update(summary.frames);
  };
  FrameChunk c;
  for (;;) {
    // A full dispatcher first gives back its oldest chunk: the one whose buffer next() hands back.
    if (dispatcher.in_flight() == dispatcher.capacity()) take_oldest();
    bool more = false;
    auto t = Clock::now();
    try {
      more = source.next(c);
      if (profile) lap(t_next, t);
    } catch (...) {
      // A read error comes after the chunks read before it, as with one engine.
      while (dispatcher.in_flight() > 0) take_oldest();
      writer.finish();
      throw;
    }
    if (!more) break;
    dispatcher.submit(ChunkPixels{c.pixels, c.type, c.first, c.count, width, height});
    if (profile) lap(t_submit, t);
  }
  while (dispatcher.in_flight() > 0) take_oldest();
  auto t_end = Clock::now();
  writer.finish();
  if (profile) lap(t_sink, t_end);
  summary.rejected = rejected;
  summary.localizations = localizations;
  progress.finish();
  if (profile)
    std::fprintf(stderr,
                 "pipeline profile: %.3f s in all; chunk buffers %.3f; main thread: take %.3f, hand on %.3f, next "
                 "chunk %.3f, submit %.3f, final wait %.3f s; converting and writing thread busy %.3f s; reader "
                 "thread reading %.3f, waiting for a free buffer %.3f s\n",
                 std::chrono::duration<double>(Clock::now() - start).count(), t_buffers, t_take, t_put, t_next,
                 t_submit, t_sink, writer.busy_seconds(), source.read_seconds(), source.wait_seconds());

  summary.median_precision_nm = precisions.median();
  summary.read_seconds = source.read_seconds();
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return summary;
}

}  // namespace nanoscopy
