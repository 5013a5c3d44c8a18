#include "nanoscopy/sofi/split_run.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <thread>

#include "nanoscopy/sofi/merge.hpp"

namespace nanoscopy {

std::vector<std::int64_t> sofi_split_points(const SofiBlocks& blocks, std::int64_t begin, std::int64_t end, int parts) {
  std::vector<std::int64_t> points{begin};
  if (end <= begin) return {begin, end};
  parts = static_cast<int>(std::clamp<std::int64_t>(parts, 1, end - begin));
  std::vector<std::int64_t> edges;  // block edges strictly inside the range
  for (std::int64_t k = 1; k < blocks.count(); ++k)
    if (blocks.begin(k) > begin && blocks.begin(k) < end) edges.push_back(blocks.begin(k));
  const bool on_edges = static_cast<int>(edges.size()) >= parts - 1;
  for (int g = 1; g < parts; ++g) {
    std::int64_t cut = begin + (end - begin) * g / parts;
    if (on_edges) {  // the edge nearest the even cut
      cut = *std::min_element(edges.begin(), edges.end(), [&](std::int64_t a, std::int64_t b) {
        return std::llabs(a - cut) < std::llabs(b - cut);
      });
    }
    if (cut > points.back() && cut < end) points.push_back(cut);
  }
  points.push_back(end);
  return points;
}

SofiAccumulation run_sofi_split(const SofiProblem& problem, std::span<SofiEngine* const> engines,
                                std::span<const SofiRunInput> inputs) {
  if (engines.empty() || engines.size() != inputs.size())
    throw std::logic_error("run_sofi_split: one input per engine");
  const SofiRunInput& whole = inputs.front();
  if (engines.size() == 1) return run_sofi(problem, *engines.front(), whole);
  const SofiBlocks blocks{whole.sequence.count, whole.block};
  const auto points = sofi_split_points(blocks, whole.begin, whole.end, static_cast<int>(engines.size()));
  const std::size_t parts = points.size() - 1;

  std::vector<SofiAccumulation> sums(parts);
  std::vector<std::exception_ptr> errors(parts);
  std::vector<std::thread> threads;
  for (std::size_t g = 0; g < parts; ++g)
    threads.emplace_back([&, g] {
      try {
        SofiRunInput in = inputs[g];
        in.begin = points[g];
        in.end = points[g + 1];
        in.quiet = whole.quiet || g > 0;
        sums[g] = run_sofi(problem, *engines[g], in);
      } catch (...) {
        errors[g] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);

  SofiAccumulation total;
  total.finished.reset(problem);
  for (std::size_t g = 0; g < parts; ++g) merge_accumulation(total, std::move(sums[g]), whole.progress_label);
  // The blocks cut between parts are complete now; those cut by the range's edges stay open.
  finish_complete_blocks(problem, blocks, total, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  return total;
}

}  // namespace nanoscopy
