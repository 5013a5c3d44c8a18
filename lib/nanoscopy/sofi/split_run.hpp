// sofi on several GPUs (--device cuda:all): the run's frame range is cut into
// one part per engine, each part is summed by run_sofi on its own engine in its
// own thread (with its own stack readers), and the parts' sums are merged the
// way `sofi merge` merges part files (merge.hpp): whole blocks' plane sums add;
// a block cut between two parts has its raw sums added and is finished on the
// host.
//
// The cuts fall on block edges whenever the range has at least one block per
// engine, so every block is summed and finished on its GPU exactly as on one
// GPU; only the order in which the per-block values are added to the (double)
// plane sums differs: part by part, then the parts. The images therefore equal
// those of `sofi --partial` runs over the same parts merged by `sofi merge`
// bit for bit, and those of one GPU to within the rounding of that order
// (measured: a relative difference of at most 1e-6, most pixels identical;
// tests/gpu/test_sofi_gpu.cpp, tests/test_sofi_split.cpp). With fewer blocks
// than engines (--bleach-correction none: one block) the cuts fall inside
// blocks, which are then finished on the host as sofi merge finishes them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nanoscopy/sofi/engine.hpp"
#include "nanoscopy/sofi/runner.hpp"

namespace nanoscopy {

// The part edges of [begin, end) for `parts` engines: begin, the cuts, end
// (fewer parts when the range is short; never an empty one). Cuts snap to the
// block edges nearest the even split when there are enough edges inside.
std::vector<std::int64_t> sofi_split_points(const SofiBlocks& blocks, std::int64_t begin, std::int64_t end, int parts);

// Runs `inputs[g]` (the same sequence, range, block, filter and corrections;
// each its own readers) on `engines[g]` over part g of [inputs[0].begin,
// inputs[0].end), in parallel, and merges the parts in order. Blocks cut by the
// range's own edges stay open, as run_sofi leaves them. The first part's error,
// if any, is thrown once every part has stopped. Only the first input's progress
// is shown (its part's share of the range). The filter must be thread-safe
// (sofi --pre-smre's is not: it runs on one engine).
SofiAccumulation run_sofi_split(const SofiProblem& problem, std::span<SofiEngine* const> engines,
                                std::span<const SofiRunInput> inputs);

}  // namespace nanoscopy
