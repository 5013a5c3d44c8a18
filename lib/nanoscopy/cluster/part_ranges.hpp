// Putting part files back together (fit2d/smre/sofi merge): which stack and
// parameters each part came from, which frames it holds, and where those frames
// go in the merged output. Parts may be given in any order.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nanoscopy {

struct PartOrigin {
  std::string path;                   // the part file (named in errors)
  std::string stack_name;             // the stack's file name, for messages
  std::string stack_fingerprint;      // the whole movie's (stack_fingerprint() of fingerprint.hpp)
  std::string parameter_fingerprint;
  std::int64_t stack_frames = 0;      // frames of the whole stack
  std::int64_t begin = 0, end = 0;    // this part holds frames [begin, end) of its stack
};

// A part in merge order: parts[index]'s frame f becomes frame offset + f of the output.
struct PartPlacement {
  std::size_t index = 0;
  std::int64_t offset = 0;
};

// One stack (series = false): every part must come from the same stack, and
// together cover frames [0, stack_frames) without overlap or gap. Series (many
// files, one output): stacks follow in the order their first part is given, each
// covered completely, numbered on from the frames of the stacks before it.
// Always: the same parameters. Returns the parts sorted into output order.
// InputError naming the offending part file otherwise.
std::vector<PartPlacement> arrange_parts(std::span<const PartOrigin> parts, bool series);

// Total frames of the merged output.
std::int64_t merged_frames(std::span<const PartOrigin> parts, std::span<const PartPlacement> order);

}  // namespace nanoscopy
