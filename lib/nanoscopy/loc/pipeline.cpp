#include "nanoscopy/loc/pipeline.hpp"
#include "nanoscopy/loc/median_histogram.hpp"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/progress.hpp"
#include "nanoscopy/io/frame_source.hpp"
#include "nanoscopy/loc/localize_engine.hpp"

namespace nanoscopy {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

PipelineSummary run_localization(StackReader& reader, FrameRange::Resolved range, LocalizeEngine& localizer,
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

  // Frames as read: the raw uint16 pixels when the stack is uint16 (the
  // localizer filters them as float and fits uint16 ROIs), else float32; in the
  // localizer's own host memory (page-locked for CUDA: uploaded as is), read up
  // to two chunks ahead while this one is detected and fitted, each chunk
  // decoded by several threads (reading, not fitting, bounds a GPU run).
  FrameSourceOptions source_options;
  source_options.type = chunk_type;
  source_options.prefetch = 2;
  source_options.read_threads = settings.read_threads;
  source_options.allocate = [&](std::size_t bytes) { return localizer.allocate_host(bytes); };
  FrameSource source(reader, range, settings.chunk_frames, std::move(source_options));

  Progress progress("fit2d " + info.path, range.count(), settings.quiet);
  std::vector<Candidate> candidates;
  std::vector<RoiOrigin> origins;
  std::vector<FitResult> fits;
  std::vector<Localization> accepted;
  MedianHistogram precisions;
  FrameChunk c;
  while (source.next(c)) {
    std::int64_t detected = 0;
    on_frames(c.first, c.count, [&] {
      detected = localizer.localize(ChunkPixels{c.pixels, c.type, c.first, c.count, width, height}, candidates,
                                     origins, fits);
    });
    // Every candidate detected, those outside the regions (dropped before fitting) included.
    summary.candidates += detected;
    accepted.clear();
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      // net_gradient in camera counts, as Picasso's (a filter written for its numbers cuts the same).
      const auto loc = to_localization(fits[k], candidates[k].frame, origins[k].x0, origins[k].y0, settings.camera,
                                       settings.fit, candidates[k].net_gradient);
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
  }
  progress.finish();

  summary.median_precision_nm = precisions.median();
  summary.read_seconds = source.read_seconds();
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return summary;
}

}  // namespace nanoscopy
