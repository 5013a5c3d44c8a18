// Drift traces from fiducial markers, and the files that carry them.
//
// Model: marker m seen in frame t at x_m(t) = c_m + d(t) + noise, with c_m the
// marker's own reference and d the drift common to all markers. For markers
// present in every frame the least-squares solution is Picasso's: c_m = the
// marker's mean position, d(t) = mean over markers of x_m(t) − c_m. Markers
// that come and go get references consistent with the others where they
// overlap (alternating least squares from c_m = own mean; the equations only
// need per-frame sums and each marker's runs of consecutive frames). The free
// constant is fixed by a zero mean of d over the frames with markers. Frames
// without a marker are interpolated linearly between the nearest frames with
// one (held constant before the first and after the last) and carry
// markers = 0. Groups of markers that never share a frame keep their own
// means: nothing ties them together.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "nanoscopy/loc/localization.hpp"

namespace nanoscopy {

struct DriftTrace {
  std::vector<double> dx, dy;         // px per frame, frame 0 … frames−1; apply as x −= dx[frame]
  std::vector<std::int32_t> markers;  // markers seen in the frame; 0: interpolated
  std::int64_t frames() const { return static_cast<std::int64_t>(dx.size()); }
};

// Per-frame sums over the markers seen in each frame (one row per frame).
struct FrameSums {
  std::vector<double> sum_x, sum_y;
  std::vector<std::int32_t> count;
  explicit FrameSums(std::int64_t frames = 0)
      : sum_x(static_cast<std::size_t>(frames)), sum_y(sum_x.size()), count(sum_x.size()) {}
};

// Frames first … last (inclusive) in which a marker has a point each.
struct FrameRun {
  std::int64_t first = 0, last = 0;
};

// What the solver needs of one marker: sums of its positions, its number of
// points and its runs (disjoint, ascending, matching the points added to FrameSums).
struct MarkerSums {
  double sum_x = 0, sum_y = 0;
  std::int64_t points = 0;
  std::vector<FrameRun> runs;
};

// Solves the model above. Markers with no points are ignored; with no marker
// at all the trace is zero everywhere with markers = 0.
DriftTrace solve_drift(const FrameSums& frames, std::span<const MarkerSums> markers);

// Fills frames with markers = 0 by linear interpolation (see above). All frames
// empty: zero drift.
void interpolate_missing(DriftTrace& trace);

// x −= dx[frame], y −= dy[frame]. UsageError("drift", …) for a frame outside the trace.
void apply_drift(std::span<Localization> locs, const DriftTrace& trace);

// Picasso's X_drift.txt: one line per frame from frame 0, "dx dy" in pixels
// separated by one space, no header; written atomically.
void write_picasso_drift(const std::filesystem::path& path, const DriftTrace& trace);

// CSV `frame,dx [nm],dy [nm],markers` (frame from 0, unquoted labels), atomically.
void write_drift_csv(const std::filesystem::path& path, const DriftTrace& trace, double pixel_size_nm);

}  // namespace nanoscopy
