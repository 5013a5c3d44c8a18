#include "nanoscopy/loc/track/track.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

void TrackSettings::validate(const std::string& where) const {
  if (!(radius > 0.0) || !std::isfinite(radius))
    throw UsageError(where, "the linking radius must be a positive number of pixels, not " + std::to_string(radius));
  if (max_gap < 0) throw UsageError(where, "the largest gap must be 0 or more frames, not " + std::to_string(max_gap));
  if (min_length < 1)
    throw UsageError(where, "the shortest track must be 1 or more frames, not " + std::to_string(min_length));
  if (!(min_presence > 0.0 && min_presence <= 1.0))
    throw UsageError(where, "the marker presence must be a fraction in (0, 1], not " + std::to_string(min_presence));
}

struct FiducialTracker::State {
  struct OpenTrack {
    std::int64_t id = 0;
    std::int64_t last_frame = 0;
    double last_x = 0, last_y = 0;
    std::int64_t points = 0;
    std::int64_t marker = -1;         // index into `markers` once qualified
    std::vector<TrackPoint> pending;  // points before qualifying
  };
  struct Pair {
    bool young;  // the track has fewer than min_length points
    double d2;
    std::int64_t track_id;
    std::size_t track, point;
  };

  TrackSettings settings;
  std::int64_t frames = 0;
  std::string where;
  MarkerPointsCallback on_points;
  TrackSummary summary;
  std::vector<OpenTrack> open;
  std::vector<MarkerSums> markers;
  FrameSums sums;
  std::int64_t current_frame = -1;  // frame whose points are being collected
  std::vector<TrackPoint> current;
  bool finished = false;
  // Scratch reused from frame to frame.
  std::vector<std::pair<double, std::size_t>> by_x;
  std::vector<Pair> pairs;
  std::vector<char> track_taken, point_taken;

  void settle(std::int64_t m, const TrackPoint& p) {
    const auto f = static_cast<std::size_t>(p.frame);
    sums.sum_x[f] += p.x;
    sums.sum_y[f] += p.y;
    sums.count[f] += 1;
    MarkerSums& s = markers[static_cast<std::size_t>(m)];
    s.sum_x += p.x;
    s.sum_y += p.y;
    s.points += 1;
    if (!s.runs.empty() && s.runs.back().last == p.frame - 1)
      s.runs.back().last = p.frame;
    else
      s.runs.push_back({p.frame, p.frame});
  }

  void extend(OpenTrack& track, const TrackPoint& p) {
    track.last_frame = p.frame;
    track.last_x = p.x;
    track.last_y = p.y;
    track.points += 1;
    summary.longest = std::max(summary.longest, track.points);
    if (track.marker >= 0) {
      settle(track.marker, p);
      if (on_points) on_points(track.marker, std::span<const TrackPoint>(&p, 1));
      return;
    }
    track.pending.push_back(p);
    if (track.points < summary.need) return;
    track.marker = static_cast<std::int64_t>(markers.size());
    markers.emplace_back();
    summary.markers += 1;
    for (const TrackPoint& q : track.pending) settle(track.marker, q);
    if (on_points) on_points(track.marker, track.pending);
    std::vector<TrackPoint>().swap(track.pending);
  }

  void close(const OpenTrack& track) {
    if (track.marker >= 0) return;  // already settled point by point
    if (track.points < settings.min_length)
      summary.dropped_short += 1;
    else
      summary.not_markers += 1;
  }

  void link(std::int64_t t) {
    // Tracks that can no longer take a point close first.
    for (std::size_t i = 0; i < open.size();) {
      if (t - open[i].last_frame - 1 > settings.max_gap) {
        close(open[i]);
        open[i] = std::move(open.back());
        open.pop_back();
      } else {
        ++i;
      }
    }
    // Candidate pairs within the radius, from the tracks sorted by their last x.
    by_x.clear();
    for (std::size_t i = 0; i < open.size(); ++i) by_x.emplace_back(open[i].last_x, i);
    std::sort(by_x.begin(), by_x.end());
    const double r = settings.radius, r2 = r * r;
    pairs.clear();
    for (std::size_t p = 0; p < current.size(); ++p) {
      const TrackPoint& q = current[p];
      auto it = std::lower_bound(by_x.begin(), by_x.end(), std::make_pair(q.x - r, std::size_t{0}));
      for (; it != by_x.end() && it->first <= q.x + r; ++it) {
        const OpenTrack& tr = open[it->second];
        const double dx = q.x - tr.last_x, dy = q.y - tr.last_y;
        const double d2 = dx * dx + dy * dy;
        if (d2 <= r2) pairs.push_back({tr.points < settings.min_length, d2, tr.id, it->second, p});
      }
    }
    std::sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) {
      return std::tie(a.young, a.d2, a.track_id, a.point) < std::tie(b.young, b.d2, b.track_id, b.point);
    });
    track_taken.assign(open.size(), 0);
    point_taken.assign(current.size(), 0);
    for (const Pair& pr : pairs) {
      if (track_taken[pr.track] || point_taken[pr.point]) continue;
      track_taken[pr.track] = point_taken[pr.point] = 1;
      extend(open[pr.track], current[pr.point]);
    }
    for (std::size_t p = 0; p < current.size(); ++p) {
      if (point_taken[p]) continue;
      OpenTrack track;
      track.id = summary.tracks++;
      extend(track, current[p]);
      open.push_back(std::move(track));
    }
    summary.max_open = std::max(summary.max_open, static_cast<std::int64_t>(open.size()));
    current.clear();
  }
};

FiducialTracker::FiducialTracker(const TrackSettings& settings, std::int64_t frames, std::string where,
                                 MarkerPointsCallback on_marker_points)
    : state_(std::make_unique<State>()) {
  settings.validate(where);
  if (frames < 1) throw UsageError(where, "fiducial tracking needs at least one frame");
  State& s = *state_;
  s.settings = settings;
  s.frames = frames;
  s.where = std::move(where);
  s.on_points = std::move(on_marker_points);
  s.sums = FrameSums(frames);
  s.summary.need =
      std::max(settings.min_length,
               static_cast<std::int64_t>(std::ceil(settings.min_presence * static_cast<double>(frames) - 1e-9)));
}

FiducialTracker::~FiducialTracker() = default;

void FiducialTracker::add(std::span<const Localization> locs) {
  State& s = *state_;
  if (s.finished) throw UsageError(s.where, "localizations were added after the tracking finished");
  for (const Localization& l : locs) {
    if (l.frame < 0 || l.frame >= s.frames)
      throw UsageError(s.where, "localization in frame " + std::to_string(l.frame) + " outside the " +
                                    std::to_string(s.frames) + " frames of the stack");
    if (l.frame < s.current_frame)
      throw UsageError(s.where, "localizations must arrive in frame order: frame " + std::to_string(l.frame) +
                                    " came after frame " + std::to_string(s.current_frame));
    if (l.frame > s.current_frame) {
      if (s.current_frame >= 0) s.link(s.current_frame);
      s.current_frame = l.frame;
    }
    if (!std::isfinite(l.x) || !std::isfinite(l.y)) {
      s.summary.skipped += 1;
      continue;
    }
    s.summary.localizations += 1;
    s.current.push_back({l.frame, l.x, l.y, l.photons});
  }
}

DriftTrace FiducialTracker::finish() {
  State& s = *state_;
  if (s.finished) throw UsageError(s.where, "the tracking was already finished");
  s.finished = true;
  if (s.current_frame >= 0) s.link(s.current_frame);
  for (const auto& track : s.open) s.close(track);
  s.open.clear();
  if (s.markers.empty())
    throw InputError(s.where, "no track is a fiducial marker: a marker needs points in " +
                                  std::to_string(s.summary.need) + " of the " + std::to_string(s.frames) +
                                  " frames, the longest track has " + std::to_string(s.summary.longest) +
                                  " (raise the radius or the largest gap, or lower the presence)");
  return solve_drift(s.sums, s.markers);
}

const TrackSummary& FiducialTracker::summary() const {
  return state_->summary;
}

std::unique_ptr<TableWriter> create_marker_track_writer(const std::string& path) {
  CsvOptions options;
  options.quote_header = false;
  return create_csv_writer(path,
                           {{"track", ColumnType::i32},
                            {"frame", ColumnType::i32},
                            {"x [px]", ColumnType::f64},
                            {"y [px]", ColumnType::f64},
                            {"photons", ColumnType::f32}},
                           options);
}

MarkerPointsCallback marker_track_sink(TableWriter& writer) {
  return [&writer, rows = std::vector<double>()](std::int64_t marker, std::span<const TrackPoint> points) mutable {
    rows.clear();
    for (const TrackPoint& p : points)
      rows.insert(rows.end(), {static_cast<double>(marker), static_cast<double>(p.frame), p.x, p.y, p.photons});
    writer.append(rows);
  };
}

}  // namespace nanoscopy
