#include "nanoscopy/sofi/corrections.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/finite_pixels.hpp"
#include "nanoscopy/core/progress.hpp"
#include "nanoscopy/io/frame_source.hpp"
#include "nanoscopy/io/stack_reader.hpp"

namespace nanoscopy {

BleachCorrection parse_bleach_correction(const std::string& text) {
  if (text == "none") return BleachCorrection::none;
  if (text == "block") return BleachCorrection::block;
  if (text == "exponential") return BleachCorrection::exponential;
  throw UsageError("--bleach-correction", "unknown '" + text + "' (none, block or exponential)");
}

const char* to_string(BleachCorrection b) {
  switch (b) {
    case BleachCorrection::none: return "none";
    case BleachCorrection::block: return "block";
    case BleachCorrection::exponential: return "exponential";
  }
  return "?";
}

const SofiFrameCorrection& SofiCorrections::at(std::int64_t stack_frame) const {
  const std::int64_t i = stack_frame - first;
  if (i < 0 || i >= static_cast<std::int64_t>(frames.size()))
    throw std::out_of_range("sofi: no correction for frame " + std::to_string(stack_frame));
  return frames[static_cast<std::size_t>(i)];
}

SofiCorrections measure_sofi_corrections(StackReader& reader, FrameRange::Resolved range,
                                         const SofiCorrectionSettings& s, const CorrelationEngineFactory& make_engine) {
  const auto t0 = std::chrono::steady_clock::now();
  const StackInfo& info = reader.info();
  const std::int64_t w = info.width, h = info.height, pixels = w * h, n = range.count();
  if (s.undrift && s.drift_block < 2) throw UsageError("--drift-block", "a drift block needs at least 2 frames");
  if (s.undrift && n / s.drift_block < 2)
    throw InputError(info.path, "--undrift needs at least 2 drift blocks: " + std::to_string(n) + " frames, blocks of " +
                                    std::to_string(s.drift_block) + " (use a smaller --drift-block)");
  std::optional<SofiDriftEstimator> estimator;
  if (s.undrift) estimator.emplace(w, h, make_engine(sofi_drift_geometry(w, h, s.drift)), s.drift);

  SofiCorrections out;
  out.first = range.first;
  out.frame_mean.resize(static_cast<std::size_t>(n));
  // Drift blocks as SofiBlocks cuts them: the last takes the remainder.
  const std::int64_t blocks = s.undrift ? n / s.drift_block : 0;
  auto block_end = [&](std::int64_t k) { return k + 1 == blocks ? n : (k + 1) * s.drift_block; };
  std::vector<double> sum(s.undrift ? static_cast<std::size_t>(pixels) : 0);
  std::vector<float> mean(sum.size());
  std::int64_t block = 0, block_first = 0;

  Progress progress("sofi first pass", n, s.quiet);
  FrameSourceOptions source_options;
  source_options.type = PixelType::f32;
  source_options.prefetch = 1;
  source_options.read_threads = s.read_threads;
  FrameSource source(reader, range, 64, std::move(source_options));
  for (FrameChunk chunk; source.next(chunk);) {
    const auto values = chunk.floats();
    for (std::int64_t j = 0; j < chunk.count; ++j) {
      const std::span<const float> frame = values.subspan(static_cast<std::size_t>(j * pixels),
                                                          static_cast<std::size_t>(pixels));
      const std::int64_t i = chunk.first + j - range.first;
      require_finite_pixels(frame, info.path + " frame " + std::to_string(chunk.first + j));
      double total = 0;
      for (float v : frame) total += v;
      out.frame_mean[static_cast<std::size_t>(i)] = total / static_cast<double>(pixels);
      if (!s.undrift) continue;
      for (std::int64_t p = 0; p < pixels; ++p) sum[static_cast<std::size_t>(p)] += frame[static_cast<std::size_t>(p)];
      if (i + 1 == block_end(block)) {
        const double frames = static_cast<double>(i + 1 - block_first);
        for (std::int64_t p = 0; p < pixels; ++p)
          mean[static_cast<std::size_t>(p)] = static_cast<float>(sum[static_cast<std::size_t>(p)] / frames);
        estimator->add_block(mean, 0.5 * static_cast<double>(block_first + i));
        std::fill(sum.begin(), sum.end(), 0.0);
        block_first = i + 1;
        ++block;
      }
    }
    progress.update(chunk.first + chunk.count - range.first);
  }
  progress.finish();

  if (s.undrift) out.drift = estimator->solve(n, info.path);
  if (s.bleach == BleachCorrection::exponential) out.bleach = fit_exponential_decay(out.frame_mean);
  out.frames.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    SofiFrameCorrection& c = out.frames[static_cast<std::size_t>(i)];
    if (out.drift) {
      c.dx = static_cast<float>(out.drift->dx[static_cast<std::size_t>(i)]);
      c.dy = static_cast<float>(out.drift->dy[static_cast<std::size_t>(i)]);
    }
    if (out.bleach && out.bleach->decays) {
      c.gain = static_cast<float>(out.bleach->gain(static_cast<double>(i)));  // about 0: Fiji's ratio
    }
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace nanoscopy
