// Merging partial SOFI sums (sofi --partial, sofi merge, MPI ranks): finished
// block sums add; a block cut between two partial runs is completed by adding
// its raw sums (same shift frame, disjoint frames and tuples) and finished here.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "nanoscopy/sofi/runner.hpp"

namespace nanoscopy {

// Adds `part` to `total` (which starts empty: total.finished.reset(problem)).
// `source` names the part for errors (two parts disagreeing on a block's first frame).
void merge_accumulation(SofiAccumulation& total, SofiAccumulation&& part, const std::string& source);

// Finishes every open block that is now complete (all its frames and tuples)
// and leaves the others open.
void finish_complete_blocks(const SofiProblem& problem, const SofiBlocks& blocks, SofiAccumulation& acc, int threads);

// Finishes every open block that is now complete; InputError naming `source`
// when a block is still incomplete (a missing frame range).
void close_open_blocks(const SofiProblem& problem, const SofiBlocks& blocks, SofiAccumulation& acc, const std::string& source,
                       int threads);

// An accumulation as one array of doubles (sent between MPI ranks) and back.
// Layout: blocks, frames, the planes, frame_sum, the number of open blocks, then
// per open block: block, frames, tuples, shift, frame_sum, terms (sizes from the problem).
std::vector<double> pack_accumulation(const SofiAccumulation& acc);
SofiAccumulation unpack_accumulation(const SofiProblem& problem, std::span<const double> values);

}  // namespace nanoscopy
