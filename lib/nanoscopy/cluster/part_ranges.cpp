#include "nanoscopy/cluster/part_ranges.hpp"

#include <algorithm>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {
namespace {

std::string frames_text(std::int64_t a, std::int64_t b) { return "frames " + std::to_string(a) + ":" + std::to_string(b); }

// The parts of one stack, sorted by their first frame, must tile [0, frames).
void check_coverage(std::span<const PartOrigin> parts, std::vector<std::size_t>& indices) {
  std::sort(indices.begin(), indices.end(), [&](std::size_t a, std::size_t b) { return parts[a].begin < parts[b].begin; });
  std::int64_t covered = 0;
  std::string previous = "the start of the stack";
  for (std::size_t i : indices) {
    const auto& p = parts[i];
    if (p.begin < covered)
      throw InputError(p.path, frames_text(p.begin, p.end) + " overlap " + previous + " (which ends at frame " +
                                   std::to_string(covered) + ")");
    if (p.begin > covered)
      throw InputError(p.path, frames_text(covered, p.begin) + " are missing between " + previous + " and this part");
    covered = p.end;
    previous = p.path;
  }
  const auto& last = parts[indices.back()];
  if (covered != last.stack_frames)
    throw InputError(last.path, frames_text(covered, last.stack_frames) + " at the end of the stack are missing (" +
                                    last.stack_name + ")");
}

}  // namespace

std::vector<PartPlacement> arrange_parts(std::span<const PartOrigin> parts, bool series) {
  if (parts.empty()) throw UsageError("merge", "no part files given");
  const PartOrigin& first = parts.front();
  // stacks in the order of their first part
  std::vector<std::vector<std::size_t>> stacks;
  std::vector<std::string> fingerprints;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto& p = parts[i];
    if (p.parameter_fingerprint != first.parameter_fingerprint)
      throw InputError(p.path, "made with different parameters than " + first.path);
    const auto at = std::find(fingerprints.begin(), fingerprints.end(), p.stack_fingerprint);
    if (at != fingerprints.end()) {
      stacks[static_cast<std::size_t>(at - fingerprints.begin())].push_back(i);
      continue;
    }
    if (!series && !stacks.empty())
      throw InputError(p.path, "made from a different stack (" + p.stack_name + ") than " + first.path + " (" +
                                   first.stack_name + "); parts of several files merge with --series");
    fingerprints.push_back(p.stack_fingerprint);
    stacks.push_back({i});
  }
  std::vector<PartPlacement> order;
  std::int64_t offset = 0;
  for (auto& indices : stacks) {
    check_coverage(parts, indices);
    for (std::size_t i : indices) order.push_back({i, offset});
    offset += parts[indices.front()].stack_frames;
  }
  return order;
}

std::int64_t merged_frames(std::span<const PartOrigin> parts, std::span<const PartPlacement> order) {
  if (order.empty()) return 0;
  const auto& last = order.back();
  return last.offset + parts[last.index].stack_frames;
}

}  // namespace nanoscopy
