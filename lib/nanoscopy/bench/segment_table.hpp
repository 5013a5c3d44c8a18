// bench postprocess's segment table: RCC's auto segment (loc/undrift/
// segment_choice.hpp) against fixed segments, over short and long movies,
// sparse and dense localizations, linear and curved drift, each scored by its
// drift error against the simulated truth (RMS per axis after removing the
// mean difference, nm). A scenario passes when auto's error is at most
// max(1.2 × the best fixed segment's, the best fixed + 0.3 nm) (issue 25).
//
// Scenarios: random emitters in a 128 px field of 130 nm, precision 10 nm;
// short 3,000 and long 20,000 frames; sparse 5 and dense 50 localizations per
// frame; linear drift 100 nm per 1000 frames at 30°, or curved: x settles as
// 250 nm (1 − exp(−t / 1500)) and y swings 40 nm sin(2π t / 4000) on top of
// 20 nm per 1000 frames (a thermal settling and a slow oscillation; its
// curvature is in frames, not in fractions of the movie).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>

namespace nanoscopy {

struct SegmentTableResult {
  nlohmann::json rows = nlohmann::json::array();
  bool passed = true;
};

// Prints the Markdown table to `out`; `quick`: the short movies only.
SegmentTableResult run_segment_table(bool quick, std::uint64_t seed, bool quiet, std::ostream& out);

}  // namespace nanoscopy
