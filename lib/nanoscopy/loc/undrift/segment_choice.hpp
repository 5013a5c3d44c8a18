// RCC's `auto` segment (fit2d undrift --segment auto, the default): the
// segment length chosen from the localizations per frame and the movie length.
//
// A segment's drift comes from correlating it with every other; its error
// falls as 1/√(its localizations) until the correlation peak is sharp, and
// below some count the peak drowns in the other emitters' background and the
// pair becomes an outlier. Once every segment has enough, more segments cost
// no precision (each segment's error is ~1/√(total) whatever their number,
// the pairs averaging it) but follow a curved drift better, and cost n(n−1)/2
// correlations. So: the shortest segment holding kAutoMinLocalizations, at
// least kAutoMinFrames frames, and at most kAutoMaxSegments segments (the
// time of the correlations); at least 2 segments even when the localizations
// are fewer (the choice then says so). The constants are calibrated by bench
// postprocess's segment table (docs/benchmarks.md).
#pragma once

#include <cstdint>
#include <string>

namespace nanoscopy {

inline constexpr std::int64_t kAutoMinLocalizations = 1500;  // per segment: a sharp correlation peak
inline constexpr std::int64_t kAutoMinFrames = 20;           // per segment
inline constexpr std::int64_t kAutoMaxSegments = 40;         // 780 correlations

struct RccSegmentChoice {
  std::int64_t segment_frames = 0;
  std::int64_t segments = 0;  // as rcc_segments cuts the frames
  std::string why;            // one line: the choice and its reason
};

// The auto segment for `localizations` in `frames` frames (frames ≥ 2; fewer: a segment of 1 frame, which
// rcc_segments refuses naming the file).
RccSegmentChoice choose_rcc_segment(std::int64_t frames, std::int64_t localizations);

}  // namespace nanoscopy
