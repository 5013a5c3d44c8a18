// Streams a sequence of frames through a SOFI engine block by block.
//
// A sequence is frames first, first + step, ... of a stack (step 2: the odd or
// even frames). It is cut into blocks of `block` frames, the last block taking
// the remainder (so every block has block..2*block-1 frames); each block is
// centred on its own mean (bleaching) and the block results are averaged. Within
// a block an order with largest lag L takes the tuples t in [b0, b1 - L) (its own
// window, problem.hpp), so the lag window never crosses a block edge and never
// depends on the other orders. A run may cover only [begin, end) of the sequence (a
// --partial chunk): blocks wholly inside are finished, blocks cut by the range
// edges are returned as raw sums (their lag overlap read from beyond `end`) to
// be completed by merge. Memory: one chunk of frames plus the engine's sums.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/sofi/corrections.hpp"
#include "nanoscopy/sofi/engine.hpp"

namespace nanoscopy {

class StackReader;

struct FrameSequence {
  std::int64_t first = 0;  // stack frame of sequence frame 0
  std::int64_t step = 1;
  std::int64_t count = 0;
  std::int64_t frame(std::int64_t j) const { return first + step * j; }
};

struct SofiBlocks {
  std::int64_t length = 0;  // sequence frames
  std::int64_t block = 500;
  std::int64_t count() const { return length / block; }
  std::int64_t begin(std::int64_t k) const { return k * block; }
  std::int64_t end(std::int64_t k) const { return k + 1 == count() ? length : (k + 1) * block; }
};

// UsageError/InputError when the sequence is shorter than one block or a block
// is not longer than the largest lag. `source` names the stack.
void check_blocks(const SofiBlocks& blocks, int max_lag, const std::string& source);

// What a run (or a merge of partial runs) has summed.
struct SofiAccumulation {
  PlaneSums finished;
  std::vector<BlockSums> open;  // blocks cut by the range edges, by block index
};

// Restores frames in place before they are accumulated (SOFI2(SMRE)); called
// with float32 frames, `first` numbering the first one as a stack frame.
using FrameFilter = std::function<void(std::span<float> frames, std::int64_t count, std::int64_t first_stack_frame)>;

struct SofiRunInput {
  StackReader* reader = nullptr;
  // Readers that decode each chunk in parallel threads (FrameReader; 0: auto):
  // page-cache reads of one thread top out near 8 GB/s, the GPU engine
  // consumes more. The sums do not depend on it.
  int read_threads = 0;
  FrameSequence sequence;
  std::int64_t begin = 0, end = 0;  // sequence range to accumulate
  std::int64_t block = 500;
  FrameFilter filter;  // may be empty
  // sofi --undrift / --bleach-correction exponential: every frame's correction
  // by stack frame, applied by the engine after the filter (may be null).
  const SofiCorrections* corrections = nullptr;
  bool quiet = false;
  std::string progress_label = "sofi";
};

SofiAccumulation run_sofi(const SofiProblem& problem, SofiEngine& engine, const SofiRunInput& input);

// The final images: every plane divided by the block count, and the mean image.
struct SofiImages {
  std::vector<std::vector<float>> planes;  // problem.planes order
  std::vector<float> mean;                 // width * height
  std::int64_t blocks = 0, frames = 0;
};
SofiImages finish_images(const SofiProblem& problem, const PlaneSums& sums);

}  // namespace nanoscopy
