// The backend interface of SOFI: "accumulate cumulant sums for a frame block".
// The CPU engine (engine_cpu.cpp) is the reference; the CUDA engine
// (kernels/sofi) keeps the block's sums and the plane sums on the GPU and
// overlaps the upload of the next chunk with the work on the current one.
//
// A run walks blocks of frames (runner.hpp). For each block:
//   start_block(K)                      K = the block's first frame (float32)
//   repeat: buf = input_buffer(type); read frames into buf; accumulate(chunk)
//   finish_block(frames, tuples)        the block's cumulants -> plane sums
// or, for a block only partly inside a --partial range, read_block() instead of
// finish_block(): the raw sums go to the partial file and are finished at merge.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/io/pixel_type.hpp"
#include "nanoscopy/sofi/frame_correction.hpp"
#include "nanoscopy/sofi/problem.hpp"

namespace nanoscopy {

// One chunk of consecutive frames of a block, in the buffer last returned by
// input_buffer(type): `count` frames (T, Y, X) of `type` (u16 or f32), frame j being
// sequence frame first + j. Tuples t in [first, tuple_end) are added to the sums
// of the terms whose window allows them (t + term.window < block_end; their
// frames t + lag, lag <= window, lie in the chunk), frames [first, sum_end) to
// the frame sums.
struct SofiChunk {
  PixelType type = PixelType::u16;
  std::int64_t first = 0;
  std::int64_t count = 0;
  std::int64_t tuple_end = 0;  // <= first: no tuples in this chunk
  std::int64_t sum_end = 0;    // <= first + count
  std::int64_t block_end = 0;  // the end b1 of the chunk's block (sequence frames)
  // sofi --undrift / --bleach-correction exponential: `count` corrections, one per
  // frame of the chunk, applied before anything is summed (frame_correction.hpp);
  // null: the frames as read.
  const SofiFrameCorrection* corrections = nullptr;
};

// A block's raw sums (host copy), as stored in partial files.
struct BlockSums {
  std::int64_t block = 0;   // block index in its sequence
  std::int64_t frames = 0;  // frames added to frame_sum
  std::int64_t tuples = 0;  // tuples of the widest window (max_lag) added; a finished block has frames - max_lag
  std::vector<float> shift;       // K, width * height
  std::vector<double> frame_sum;  // sum of (F - K), width * height
  std::vector<double> terms;      // problem.terms.size() * width * height, term-major
};

// Running sums of finished blocks.
struct PlaneSums {
  std::int64_t blocks = 0;                 // blocks finished
  std::int64_t frames = 0;                 // frames in those blocks
  std::vector<std::vector<double>> planes;  // per problem plane: sum over blocks of the block's value
  std::vector<double> frame_sum;           // sum over those frames of F (for the mean image)

  void reset(const SofiProblem& problem);
  void add(const PlaneSums& other);  // merges
};

class SofiEngine {
 public:
  virtual ~SofiEngine() = default;
  virtual std::string name() const = 0;  // "cpu (2 threads)", "cuda:0 (NVIDIA H100 ...)"
  // Frames one chunk may hold.
  virtual std::int64_t chunk_capacity() const = 0;
  // Host memory for chunk_capacity() frames of `type` (u16 or f32) to read the next chunk into (pinned on the
  // GPU, made on first use at the size the type needs). Engines may rotate several buffers; this waits until
  // the returned one is no longer in use.
  virtual void* input_buffer(PixelType type) = 0;
  // Zeroes the block sums and sets the shift frame (width * height floats).
  virtual void start_block(std::span<const float> shift) = 0;
  // Adds the chunk (in the buffer last returned by input_buffer(chunk.type)). May return
  // before the work is done.
  virtual void accumulate(const SofiChunk& chunk) = 0;
  // Adds the block's plane values and frames to the plane sums (the counts are
  // those of the chunks since start_block; tuples: of the widest window, frames - max_lag).
  virtual void finish_block(std::int64_t frames, std::int64_t tuples) = 0;
  // The block's raw sums (block index and counts are filled by the caller).
  virtual void read_block(BlockSums& out) = 0;
  // The plane sums so far (blocks/frames counts are kept by the caller).
  virtual void read_planes(PlaneSums& out) = 0;
};

std::unique_ptr<SofiEngine> make_cpu_sofi_engine(const SofiProblem& problem, std::int64_t chunk_frames, int threads);

// The CPU finishing step on host sums, used by the CPU engine and by merge: adds
// the block's value of every plane pixel, and its frames (K * frames + frame_sum)
// to `sums.frame_sum`; the counts are left to the caller.
void finish_block_cpu(const SofiProblem& problem, const BlockSums& block, PlaneSums& sums, int threads);

}  // namespace nanoscopy
