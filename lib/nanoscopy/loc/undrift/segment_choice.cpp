#include "nanoscopy/loc/undrift/segment_choice.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace nanoscopy {

RccSegmentChoice choose_rcc_segment(std::int64_t frames, std::int64_t localizations) {
  frames = std::max<std::int64_t>(frames, 1);
  localizations = std::max<std::int64_t>(localizations, 0);
  const double per_frame = static_cast<double>(localizations) / static_cast<double>(frames);
  // The three bounds: frames for a sharp peak, the shortest segment, the most segments; then at least two.
  const double peak = per_frame > 0 ? std::ceil(static_cast<double>(kAutoMinLocalizations) / per_frame)
                                    : static_cast<double>(frames);
  const auto for_peak = static_cast<std::int64_t>(std::min(peak, static_cast<double>(frames)));
  const std::int64_t for_cap = (frames + kAutoMaxSegments - 1) / kAutoMaxSegments;
  const std::int64_t longest = std::max<std::int64_t>(frames / 2, 1);
  const std::int64_t wanted = std::max({for_peak, kAutoMinFrames, for_cap});
  RccSegmentChoice c;
  c.segment_frames = std::min(wanted, longest);
  // rcc_segments' count: round(frames / segment).
  c.segments = static_cast<std::int64_t>(
      std::floor(static_cast<double>(frames) / static_cast<double>(c.segment_frames) + 0.5));
  std::ostringstream why;
  why.precision(3);
  why << "segment auto: " << c.segment_frames << " frames, " << c.segments << " segments of ~"
      << std::llround(per_frame * static_cast<double>(frames) / static_cast<double>(std::max<std::int64_t>(c.segments, 1)))
      << " localizations (" << per_frame << " localizations per frame over " << frames << " frames): ";
  if (wanted > longest)
    why << "two halves, though a sharp correlation peak wants " << kAutoMinLocalizations
        << " localizations a segment; the drift may be poor";
  else if (wanted == for_peak)
    why << "the shortest holding " << kAutoMinLocalizations << " localizations, for a sharp correlation peak";
  else if (wanted == for_cap)
    why << "as many segments as auto takes (" << kAutoMaxSegments << ", for the correlations' time), each with "
        << "more than enough localizations";
  else
    why << "the shortest segment auto takes (" << kAutoMinFrames << " frames)";
  c.why = why.str();
  return c;
}

}  // namespace nanoscopy
