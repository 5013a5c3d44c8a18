// Fiducial tracking for fit2d --track: localizations are linked frame by frame
// into tracks; tracks seen in enough frames are fiducial markers, and their
// common motion is the drift of the sample (drift.hpp).
//
// Linking. Frame t is linked when the first localization of a later frame (or
// finish()) arrives. A track is open while its last point is recent enough
// that a point of frame t may join it: t − last − 1 ≤ max_gap (max_gap = 0:
// consecutive frames only). Candidate pairs (open track, localization of t)
// closer than `radius` to the track's last point are taken greedily: tracks
// of min_length points or more first, then the younger ones, nearest first
// within each group; each track takes at most one point per frame, each
// localization joins at most one track, the rest start new tracks. Greedy, not
// Hungarian: with a radius below half the distance between markers no two
// markers compete. The established-first order is what keeps a marker's
// identity when a blinking molecule lands next to it: the marker's track may
// follow the molecule while it sits nearer, but takes the marker's
// points back before the young track its point started.
//
// Settling. A track is a marker once it holds points in
// need = max(min_length, ⌈min_presence · frames⌉) frames. Until then it
// buffers its points; on qualifying, the buffer goes into per-frame sums and
// to the marker callback, later points go there directly, and the track keeps
// only running sums and its presence runs. A track that closes before it
// qualifies is dropped (counted as short below min_length, else as kept but
// not a marker). Memory: the open tracks (a candidate buffers at most `need`
// points), a few numbers per marker and per presence run, and one row per
// frame — never the localizations.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/io/table_writer.hpp"
#include "nanoscopy/loc/localization.hpp"
#include "nanoscopy/loc/track/drift.hpp"

namespace nanoscopy {

struct TrackSettings {
  double radius = 1.0;           // px, largest step between a track's last point and the next
  std::int64_t max_gap = 2;      // frames without a point that a track may bridge
  std::int64_t min_length = 10;  // tracks with points in fewer frames are dropped
  double min_presence = 0.5;     // a track with points in ≥ this fraction of the frames is a marker
  // UsageError naming `where`: radius ≤ 0 or not finite, max_gap < 0, min_length < 1,
  // min_presence outside (0, 1].
  void validate(const std::string& where) const;
};

// One point of a marker track (Localization coordinates: px, pixel centre at integer).
struct TrackPoint {
  std::int64_t frame = 0;
  double x = 0, y = 0;
  double photons = 0;
};

struct TrackSummary {
  std::int64_t localizations = 0;  // linked (finite x, y)
  std::int64_t skipped = 0;        // non-finite x or y, ignored
  std::int64_t tracks = 0;         // tracks started
  std::int64_t dropped_short = 0;  // closed with fewer than min_length points
  std::int64_t not_markers = 0;    // closed with ≥ min_length points, too few to be a marker
  std::int64_t markers = 0;        // tracks that qualified as markers
  std::int64_t max_open = 0;       // most tracks open at once
  std::int64_t longest = 0;        // most points in one track
  std::int64_t need = 0;           // points a track needs to be a marker
};

// Called with a marker's points as they settle: its marker index (0, 1, …
// in the order the markers qualified) and points in frame order. Rows of
// different markers interleave.
using MarkerPointsCallback = std::function<void(std::int64_t marker, std::span<const TrackPoint> points)>;

class FiducialTracker {
 public:
  // `frames`: frames in the stack (frame indices 0 … frames−1; the drift has
  // one row per frame). `where` names the input in error messages.
  FiducialTracker(const TrackSettings& settings, std::int64_t frames, std::string where,
                  MarkerPointsCallback on_marker_points = {});
  ~FiducialTracker();
  FiducialTracker(const FiducialTracker&) = delete;
  FiducialTracker& operator=(const FiducialTracker&) = delete;

  // Adds localizations in frame order: within a call frames must not decrease,
  // and a call's first frame must not precede the last frame given before (a
  // frame split over two calls is fine). UsageError naming `where` otherwise,
  // or for a frame outside [0, frames).
  void add(std::span<const Localization> locs);

  // Links the last frame, closes every track and solves the drift. InputError
  // naming `where` when no track qualifies as a marker. Call once.
  DriftTrace finish();

  const TrackSummary& summary() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The table of marker points for the callback: columns
// `track,frame,x [px],y [px],photons` (track = marker index), unquoted labels.
// Use as: auto w = create_marker_track_writer(path); tracker(..., marker_track_sink(*w)); …; w->finish().
std::unique_ptr<TableWriter> create_marker_track_writer(const std::string& path);
MarkerPointsCallback marker_track_sink(TableWriter& writer);

}  // namespace nanoscopy
