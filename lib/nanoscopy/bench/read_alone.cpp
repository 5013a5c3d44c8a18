#include "nanoscopy/bench/read_alone.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <vector>

#include "nanoscopy/bench/page_cache.hpp"
#include "nanoscopy/core/host_buffer.hpp"
#include "nanoscopy/io/frame_source.hpp"
#include "nanoscopy/io/stack_reader.hpp"

namespace nanoscopy {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

double time_frame_source(const std::string& path, std::int64_t chunk_frames, PixelType type, int prefetch,
                         int threads, int* used, std::function<HostBuffer(std::size_t)> allocate) {
  auto reader = open_stack(path);
  const auto t0 = Clock::now();
  FrameSourceOptions options;
  options.type = type;
  options.prefetch = prefetch;
  options.read_threads = threads;
  options.allocate = std::move(allocate);
  FrameSource source(*reader, {0, reader->info().frames}, chunk_frames, std::move(options));
  if (used) *used = source.read_threads();
  for (FrameChunk chunk; source.next(chunk);) {
  }
  return seconds_since(t0);
}

double time_frame_reader(const std::string& path, std::int64_t chunk_frames, int threads, int* used) {
  auto reader = open_stack(path);
  const StackInfo& info = reader->info();
  const PixelType type = info.type == PixelType::u16 ? PixelType::u16 : PixelType::f32;
  HostBuffer buffer =
      allocate_plain_host(static_cast<std::size_t>(chunk_frames * info.pixels_per_frame()) * bytes_per_pixel(type));
  const auto t0 = Clock::now();
  FrameReader frames(*reader, threads);
  if (used) *used = frames.threads();
  for (std::int64_t f = 0; f < info.frames; f += chunk_frames)
    frames.read(f, std::min(chunk_frames, info.frames - f), type, buffer.get());
  return seconds_since(t0);
}

TimedPasses best_of_passes(const std::string& path, bool cold, int passes, const std::function<double()>& pass) {
  TimedPasses out;
  out.cache = cold ? "cold" : "warm";
  out.seconds = 1e300;
  if (!cold) pass();
  for (int r = 0; r < std::max(passes, 1); ++r) {
    if (cold) {
      const CacheDrop drop = drop_file_cache(path);
      out.drop_method = drop.method;
      out.resident_after = std::max(out.resident_after, drop.resident_after);
    }
    out.seconds = std::min(out.seconds, pass());
  }
  return out;
}

double median_paired_ratio(const std::vector<double>& run_s, const std::vector<double>& read_s) {
  if (run_s.empty() || run_s.size() != read_s.size()) throw std::logic_error("median_paired_ratio: unpaired runs");
  std::vector<double> ratios;
  for (std::size_t i = 0; i < run_s.size(); ++i) ratios.push_back(run_s[i] / read_s[i]);
  std::sort(ratios.begin(), ratios.end());
  const std::size_t m = ratios.size() / 2;
  return ratios.size() % 2 ? ratios[m] : 0.5 * (ratios[m - 1] + ratios[m]);
}

}  // namespace nanoscopy
