// Merging partial SOFI sums (sofi --partial, sofi merge, MPI ranks): finished
// block sums add; a block cut between two partial runs is completed by adding
// its raw sums (same shift frame, disjoint frames and tuples) and finished here.
#pragma once

#include <string>

#include "nanoscopy/sofi/sofi_runner.hpp"

namespace nanoscopy {

// Adds `part` to `total` (which starts empty: total.finished.reset(plan)).
// `source` names the part for errors (two parts disagreeing on a block's first frame).
void merge_accumulation(SofiAccumulation& total, SofiAccumulation&& part, const std::string& source);

// Finishes every open block that is now complete; InputError naming `source`
// when a block is still incomplete (a missing frame range).
void close_open_blocks(const SofiPlan& plan, const SofiBlocks& blocks, SofiAccumulation& acc, const std::string& source,
                       int threads);

}  // namespace nanoscopy
