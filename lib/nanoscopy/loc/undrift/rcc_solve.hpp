// The redundant part of RCC (Wang et al. 2014): every pair i < j of segments
// measured the shift r_ij = d_j − d_i of their drifts; the drifts solve this
// over-determined system in least squares, and pairs that disagree with the
// solution are dropped and the system solved again (Wang's r_max rule).
//
// Outliers: a pair whose correlation locked onto the wrong peak (too few
// localizations, a repeating structure) has a residual far above the others.
// Every round drops the pairs whose residual |r_ij − (d_j − d_i)| exceeds the
// threshold and half the round's largest residual (the worst first, so that a
// bad pair does not take good ones with it), never one that would cut a
// segment off from the others, then solves again, until no residual exceeds
// the threshold. The threshold: max_error when given, else 4 robust standard
// deviations of the first solution's residuals (per axis, from their median
// length: a 2D Gaussian's length has median 1.1774 σ), which a good pair
// exceeds with probability exp(−8) = 3e−4.
//
// Segments: only those connected by usable pairs (both segments had
// localizations) to the largest group are solved; their drift is relative to
// the group's first segment (d = 0). The others are left unsolved.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace nanoscopy {

struct PairShift {
  std::int64_t i = 0, j = 0;  // segments, i < j
  double x = 0, y = 0;        // measured d_j − d_i (any unit)
  bool valid = true;          // false: no peak (an empty segment)
};

struct RccSolution {
  std::vector<double> dx, dy;   // per segment; 0 where unsolved
  std::vector<bool> solved;     // per segment
  std::vector<bool> used;       // per pair: kept in the final solve
  std::int64_t dropped = 0;     // valid pairs dropped as outliers
  double threshold = 0;         // the residual limit used
  double rms_residual = 0;      // of the used pairs, 2D length
};

// max_error ≤ 0: automatic (above).
RccSolution solve_rcc(std::int64_t segments, std::span<const PairShift> pairs, double max_error);

}  // namespace nanoscopy
