#include "nanoscopy/sofi/merge.hpp"

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

std::vector<double> pack_accumulation(const SofiAccumulation& acc) {
  std::vector<double> out{static_cast<double>(acc.finished.blocks), static_cast<double>(acc.finished.frames)};
  for (const auto& plane : acc.finished.planes) out.insert(out.end(), plane.begin(), plane.end());
  out.insert(out.end(), acc.finished.frame_sum.begin(), acc.finished.frame_sum.end());
  out.push_back(static_cast<double>(acc.open.size()));
  for (const auto& b : acc.open) {
    out.push_back(static_cast<double>(b.block));
    out.push_back(static_cast<double>(b.frames));
    out.push_back(static_cast<double>(b.tuples));
    out.insert(out.end(), b.shift.begin(), b.shift.end());
    out.insert(out.end(), b.frame_sum.begin(), b.frame_sum.end());
    out.insert(out.end(), b.terms.begin(), b.terms.end());
  }
  return out;
}

SofiAccumulation unpack_accumulation(const SofiProblem& problem, std::span<const double> values) {
  std::size_t at = 0;
  auto take = [&](std::size_t n) {
    if (at + n > values.size()) throw std::logic_error("sofi: a packed accumulation is too short");
    auto part = values.subspan(at, n);
    at += n;
    return part;
  };
  auto count = [&] { return static_cast<std::int64_t>(take(1)[0]); };
  SofiAccumulation acc;
  acc.finished.reset(problem);
  acc.finished.blocks = count();
  acc.finished.frames = count();
  for (auto& plane : acc.finished.planes) {
    auto v = take(plane.size());
    plane.assign(v.begin(), v.end());
  }
  const auto pixels = static_cast<std::size_t>(problem.pixels());
  auto fs = take(pixels);
  acc.finished.frame_sum.assign(fs.begin(), fs.end());
  for (std::int64_t k = count(); k > 0; --k) {
    BlockSums b;
    b.block = count();
    b.frames = count();
    b.tuples = count();
    auto shift = take(pixels);
    for (double v : shift) b.shift.push_back(static_cast<float>(v));
    auto sums = take(pixels);
    b.frame_sum.assign(sums.begin(), sums.end());
    auto terms = take(pixels * problem.terms.size());
    b.terms.assign(terms.begin(), terms.end());
    acc.open.push_back(std::move(b));
  }
  return acc;
}

void finish_complete_blocks(const SofiProblem& problem, const SofiBlocks& blocks, SofiAccumulation& acc, int threads) {
  std::sort(acc.open.begin(), acc.open.end(), [](const BlockSums& a, const BlockSums& b) { return a.block < b.block; });
  std::vector<BlockSums> still_open;
  for (auto& block : acc.open) {
    const std::int64_t length = blocks.end(block.block) - blocks.begin(block.block);
    if (block.frames == length && block.tuples == length - problem.max_lag) {
      finish_block_cpu(problem, block, acc.finished, threads);
      acc.finished.blocks += 1;
      acc.finished.frames += block.frames;
    } else {
      still_open.push_back(std::move(block));
    }
  }
  acc.open = std::move(still_open);
}

void close_open_blocks(const SofiProblem& problem, const SofiBlocks& blocks, SofiAccumulation& acc, const std::string& source,
                       int threads) {
  finish_complete_blocks(problem, blocks, acc, threads);
  if (!acc.open.empty()) {
    const auto& b = acc.open.front();
    throw InputError(source, "block " + std::to_string(b.block) + " (frames " + std::to_string(blocks.begin(b.block)) +
                                 ":" + std::to_string(blocks.end(b.block)) + ") has only " + std::to_string(b.frames) +
                                 " of its frames: a frame range is missing");
  }
}

}  // namespace nanoscopy
