#include "nanoscopy/sofi/sofi_merge.hpp"

#include <algorithm>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

void merge_accumulation(SofiAccumulation& total, SofiAccumulation&& part, const std::string& source) {
  total.finished.add(part.finished);
  for (auto& block : part.open) {
    auto it = std::find_if(total.open.begin(), total.open.end(), [&](const BlockSums& b) { return b.block == block.block; });
    if (it == total.open.end()) {
      total.open.push_back(std::move(block));
      continue;
    }
    if (it->shift != block.shift)
      throw InputError(source, "block " + std::to_string(block.block) +
                                   " starts with a different frame than in the other parts (another stack?)");
    it->frames += block.frames;
    it->tuples += block.tuples;
    for (std::size_t i = 0; i < it->frame_sum.size(); ++i) it->frame_sum[i] += block.frame_sum[i];
    for (std::size_t i = 0; i < it->terms.size(); ++i) it->terms[i] += block.terms[i];
  }
}

void close_open_blocks(const SofiPlan& plan, const SofiBlocks& blocks, SofiAccumulation& acc, const std::string& source,
                       int threads) {
  std::sort(acc.open.begin(), acc.open.end(), [](const BlockSums& a, const BlockSums& b) { return a.block < b.block; });
  std::vector<BlockSums> still_open;
  for (auto& block : acc.open) {
    const std::int64_t length = blocks.end(block.block) - blocks.begin(block.block);
    if (block.frames == length && block.tuples == length - plan.max_lag) {
      finish_block_cpu(plan, block, acc.finished, threads);
      acc.finished.blocks += 1;
      acc.finished.frames += block.frames;
    } else {
      still_open.push_back(std::move(block));
    }
  }
  acc.open = std::move(still_open);
  if (!acc.open.empty()) {
    const auto& b = acc.open.front();
    throw InputError(source, "block " + std::to_string(b.block) + " (frames " + std::to_string(blocks.begin(b.block)) +
                                 ":" + std::to_string(blocks.end(b.block)) + ") has only " + std::to_string(b.frames) +
                                 " of its frames: a frame range is missing");
  }
}

}  // namespace nanoscopy
