#include "nanoscopy/sofi/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/finite_pixels.hpp"
#include "nanoscopy/core/progress.hpp"
#include "nanoscopy/core/stage_profile_flag.hpp"
#include "nanoscopy/io/frame_source.hpp"
#include "nanoscopy/io/pixel_type.hpp"
#include "nanoscopy/io/stack_reader.hpp"

namespace nanoscopy {

void check_blocks(const SofiBlocks& blocks, int max_lag, const std::string& source) {
  if (blocks.block < 2) throw UsageError("--block", "a block needs at least 2 frames");
  if (blocks.length < blocks.block)
    throw InputError(source, "only " + std::to_string(blocks.length) + " frames, shorter than one block of " +
                                 std::to_string(blocks.block) + " (use a smaller --block)");
  if (blocks.block <= max_lag)
    throw UsageError("--lags", "the largest lag (" + std::to_string(max_lag) + ") must be shorter than the block (" +
                                   std::to_string(blocks.block) + " frames)");
}

namespace {

// Refuse NaN and infinite pixels (core/finite_pixels.hpp), naming the frame.
// Integer stacks cannot hold one.
void check_finite(const SofiRunInput& in, std::int64_t c, std::int64_t count, const float* frames) {
  const StackInfo& info = in.reader->info();
  if (info.type != PixelType::f32 && info.type != PixelType::f64) return;
  const auto pixels = static_cast<std::size_t>(info.pixels_per_frame());
  for (std::int64_t j = 0; j < count; ++j) {
    require_finite_pixels({frames + static_cast<std::size_t>(j) * pixels, pixels},
                          info.path + " frame " + std::to_string(in.sequence.frame(c + j)));
  }
}

// The block's shift frame K corrected like its frame (K is only a provisional
// centre, but one close to the corrected frames keeps the sums' cancellation small).
void correct_shift_frame(const SofiRunInput& in, std::int64_t stack_frame, std::vector<float>& shift) {
  if (!in.corrections) return;
  const std::vector<float> raw = shift;
  const std::int64_t w = in.reader->info().width, h = in.reader->info().height;
  const SofiFrameCorrection& c = in.corrections->at(stack_frame);
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x)
      shift[static_cast<std::size_t>(y * w + x)] = sofi_math::corrected_pixel(raw.data(), w, h, x, y, c);
}

// The shift frame from frame 0 of a chunk buffer: the values the float32 read of that frame gives.
void shift_from_frame(const void* buffer, PixelType type, std::vector<float>& shift) {
  if (type == PixelType::u16) {
    convert_to_float(PixelType::u16, buffer, shift.size(), shift.data());
  } else {
    const auto* frame = static_cast<const float*>(buffer);
    std::copy(frame, frame + shift.size(), shift.begin());
  }
}

}  // namespace

SofiAccumulation run_sofi(const SofiProblem& problem, SofiEngine& engine, const SofiRunInput& in) {
  const StackInfo& info = in.reader->info();
  if (info.width != problem.width || info.height != problem.height) throw std::logic_error("sofi problem and stack sizes differ");
  const SofiBlocks blocks{in.sequence.count, in.block};
  check_blocks(blocks, problem.max_lag, info.path);
  const std::int64_t capacity = engine.chunk_capacity();
  const std::int64_t step_frames = capacity - problem.max_lag;
  if (step_frames < 1) throw std::logic_error("sofi engine chunk not longer than the largest lag");
  const PixelType type = (info.type == PixelType::u16 && !in.filter) ? PixelType::u16 : PixelType::f32;

  // Straight into the engine's buffers (pinned on the GPU, where the engine
  // overlaps their upload with its work), each chunk decoded by several threads.
  FrameReader frames_in(*in.reader, in.read_threads, in.sequence.step);

  // NANOSCOPY_STAGE_PROFILE=1: where this run's one thread spends its time, on stderr at the end.
  using Clock = std::chrono::steady_clock;
  const bool profile = stage_profile_enabled();
  const auto start = Clock::now();
  double t_shift = 0, t_start = 0, t_wait = 0, t_read = 0, t_accumulate = 0, t_block = 0;
  auto t = start;
  const auto lap = [&](double& into) {
    if (!profile) return;
    const auto now = Clock::now();
    into += std::chrono::duration<double>(now - t).count();
    t = now;
  };

  SofiAccumulation acc;
  acc.finished.reset(problem);
  std::vector<float> shift(static_cast<std::size_t>(problem.pixels()));
  std::vector<SofiFrameCorrection> chunk_corrections;
  Progress progress(in.progress_label, in.end - in.begin, in.quiet);
  for (std::int64_t k = 0; k < blocks.count(); ++k) {
    const std::int64_t b0 = blocks.begin(k), b1 = blocks.end(k);
    const std::int64_t lo = std::max(in.begin, b0), sum_hi = std::min(in.end, b1);
    if (lo >= sum_hi) continue;
    // Tuples up to the smallest window's end; each term stops at its own (t + window < b1).
    const std::int64_t tuple_hi = std::min(in.end, b1 - problem.min_window);
    const std::int64_t widest_hi = std::min(in.end, b1 - problem.max_lag);
    lap(t_block);
    // K: the raw first frame of the block, even with a filter. Where the block's first chunk starts at b0 it is
    // that chunk's frame 0 (below), read once; a range that starts inside the block reads it on its own.
    const auto start_block = [&] {
      check_finite(in, b0, 1, shift.data());
      correct_shift_frame(in, in.sequence.frame(b0), shift);
      lap(t_shift);
      engine.start_block(shift);
      lap(t_start);
    };
    if (lo != b0) {
      frames_in.read(in.sequence.frame(b0), 1, PixelType::f32, shift.data());
      start_block();
    }
    lap(t_shift);
    std::int64_t frames = 0, tuples = 0;
    for (std::int64_t c = lo; c < sum_hi;) {
      const std::int64_t n = std::min(step_frames, sum_hi - c);
      const std::int64_t tuple_end = std::min(c + n, tuple_hi);
      const std::int64_t load_end = std::min(b1, std::max(c + n, tuple_end + problem.max_lag));
      const std::int64_t count = load_end - c;
      void* buffer = engine.input_buffer(type);
      lap(t_wait);
      frames_in.read(in.sequence.frame(c), count, type, buffer);
      lap(t_read);
      if (c == b0) {  // before the filter below changes the frames
        shift_from_frame(buffer, type, shift);
        start_block();
      }
      if (type == PixelType::f32) check_finite(in, c, count, static_cast<const float*>(buffer));
      if (in.corrections) {
        chunk_corrections.resize(static_cast<std::size_t>(count));
        for (std::int64_t j = 0; j < count; ++j)
          chunk_corrections[static_cast<std::size_t>(j)] = in.corrections->at(in.sequence.frame(c + j));
      }
      on_frames(in.sequence.frame(c), count, [&] {
        if (in.filter)
          in.filter(std::span<float>(static_cast<float*>(buffer), static_cast<std::size_t>(count * problem.pixels())), count,
                    in.sequence.frame(c));
        engine.accumulate({type, c, count, tuple_end, c + n, b1, in.corrections ? chunk_corrections.data() : nullptr});
      });
      lap(t_accumulate);
      frames += n;
      tuples += std::max<std::int64_t>(std::min(tuple_end, widest_hi) - c, 0);
      c += n;
      progress.update(c - in.begin);
    }
    if (lo == b0 && sum_hi == b1) {
      engine.finish_block(frames, tuples);
      acc.finished.blocks += 1;
      acc.finished.frames += frames;
    } else {
      BlockSums open;
      engine.read_block(open);
      open.block = k;
      open.frames = frames;
      open.tuples = tuples;
      acc.open.push_back(std::move(open));
    }
  }
  const auto blocks_done = acc.finished.blocks, frames_done = acc.finished.frames;
  lap(t_block);
  engine.read_planes(acc.finished);
  acc.finished.blocks = blocks_done;
  acc.finished.frames = frames_done;
  progress.finish();
  if (profile) {
    double t_final = 0;
    lap(t_final);
    std::fprintf(stderr,
                 "sofi profile: %.3f s in all; shift frames %.3f, starting blocks %.3f, waiting for a free buffer "
                 "%.3f, reading %.3f, accumulate %.3f, block ends %.3f, final read-back %.3f s\n",
                 std::chrono::duration<double>(Clock::now() - start).count(), t_shift, t_start, t_wait, t_read,
                 t_accumulate, t_block, t_final);
  }
  return acc;
}

SofiImages finish_images(const SofiProblem& problem, const PlaneSums& sums) {
  if (sums.blocks < 1 || sums.frames < 1) throw InputError("sofi", "no complete block to make an image from");
  SofiImages out;
  out.blocks = sums.blocks;
  out.frames = sums.frames;
  const double inv_blocks = 1.0 / static_cast<double>(sums.blocks);
  for (std::size_t p = 0; p < problem.planes.size(); ++p) {
    std::vector<float> plane(sums.planes[p].size());
    for (std::size_t i = 0; i < plane.size(); ++i) plane[i] = static_cast<float>(sums.planes[p][i] * inv_blocks);
    out.planes.push_back(std::move(plane));
  }
  const double inv_frames = 1.0 / static_cast<double>(sums.frames);
  out.mean.resize(sums.frame_sum.size());
  for (std::size_t i = 0; i < out.mean.size(); ++i) out.mean[i] = static_cast<float>(sums.frame_sum[i] * inv_frames);
  return out;
}

}  // namespace nanoscopy
