#include "nanoscopy/loc/track/drift.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/table_writer.hpp"

namespace nanoscopy {
namespace {

constexpr int kMaxIterations = 1000;
constexpr double kTolerance = 1e-10;  // px, largest change of d between iterations

// One axis of the alternating least squares: d(t) = mean over the markers in t
// of x_m(t) − c_m; c_m = mean over the marker's frames of x_m(t) − d(t).
std::vector<double> solve_axis(const std::vector<double>& frame_sum, const std::vector<std::int32_t>& count,
                               std::span<const MarkerSums> markers, bool use_x) {
  const std::size_t n = frame_sum.size();
  std::vector<double> c(markers.size());
  for (std::size_t m = 0; m < markers.size(); ++m)
    if (markers[m].points > 0)
      c[m] = (use_x ? markers[m].sum_x : markers[m].sum_y) / static_cast<double>(markers[m].points);
  std::vector<double> d(n, 0.0), next(n), ref_sum(n + 1), prefix(n + 1);
  std::int64_t with_markers = 0;
  for (std::size_t t = 0; t < n; ++t) with_markers += count[t] > 0 ? 1 : 0;
  if (with_markers == 0) return d;
  for (int iteration = 0; iteration < kMaxIterations; ++iteration) {
    // Σ of the references of the markers present in each frame, by a difference array over the runs.
    std::fill(ref_sum.begin(), ref_sum.end(), 0.0);
    for (std::size_t m = 0; m < markers.size(); ++m)
      for (const FrameRun& r : markers[m].runs) {
        ref_sum[static_cast<std::size_t>(r.first)] += c[m];
        ref_sum[static_cast<std::size_t>(r.last) + 1] -= c[m];
      }
    double running = 0.0, mean = 0.0;
    for (std::size_t t = 0; t < n; ++t) {
      running += ref_sum[t];
      next[t] = count[t] > 0 ? (frame_sum[t] - running) / count[t] : 0.0;
      mean += next[t];
    }
    mean /= static_cast<double>(with_markers);
    double change = 0.0;
    for (std::size_t t = 0; t < n; ++t) {
      if (count[t] > 0) next[t] -= mean;
      change = std::max(change, std::abs(next[t] - d[t]));
    }
    d.swap(next);
    if (change < kTolerance && iteration > 0) break;
    prefix[0] = 0.0;
    for (std::size_t t = 0; t < n; ++t) prefix[t + 1] = prefix[t] + d[t];
    for (std::size_t m = 0; m < markers.size(); ++m) {
      if (markers[m].points == 0) continue;
      double drift_sum = 0.0;
      for (const FrameRun& r : markers[m].runs)
        drift_sum += prefix[static_cast<std::size_t>(r.last) + 1] - prefix[static_cast<std::size_t>(r.first)];
      c[m] = ((use_x ? markers[m].sum_x : markers[m].sum_y) - drift_sum) / static_cast<double>(markers[m].points);
    }
  }
  return d;
}

void append_number(std::string& out, double v, int decimals) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v, std::chars_format::fixed, decimals);
  out.append(buffer, result.ptr);
}

}  // namespace

DriftTrace solve_drift(const FrameSums& frames, std::span<const MarkerSums> markers) {
  const std::int64_t n = static_cast<std::int64_t>(frames.count.size());
  if (frames.sum_x.size() != frames.count.size() || frames.sum_y.size() != frames.count.size())
    throw UsageError("drift", "the per-frame sums have different lengths");
  for (const MarkerSums& m : markers) {
    std::int64_t covered = 0, previous = -2;
    for (const FrameRun& r : m.runs) {
      if (r.first <= previous || r.last < r.first || r.last >= n)
        throw UsageError("drift", "a marker's frame runs are not disjoint, ascending runs inside the " +
                                      std::to_string(n) + " frames");
      covered += r.last - r.first + 1;
      previous = r.last;
    }
    if (covered != m.points)
      throw UsageError("drift", "a marker has " + std::to_string(m.points) + " points but its runs cover " +
                                    std::to_string(covered) + " frames");
  }
  DriftTrace trace;
  trace.dx = solve_axis(frames.sum_x, frames.count, markers, true);
  trace.dy = solve_axis(frames.sum_y, frames.count, markers, false);
  trace.markers = frames.count;
  interpolate_missing(trace);
  return trace;
}

void interpolate_missing(DriftTrace& trace) {
  const std::int64_t n = trace.frames();
  std::int64_t previous = -1;  // last frame with markers
  for (std::int64_t t = 0; t <= n; ++t) {
    if (t < n && trace.markers[static_cast<std::size_t>(t)] == 0) continue;
    // Frames previous+1 … t−1 have no marker.
    for (std::int64_t k = previous + 1; k < t; ++k) {
      const auto i = static_cast<std::size_t>(k);
      if (previous < 0 && t >= n) {
        trace.dx[i] = trace.dy[i] = 0.0;
      } else if (previous < 0) {
        trace.dx[i] = trace.dx[static_cast<std::size_t>(t)];
        trace.dy[i] = trace.dy[static_cast<std::size_t>(t)];
      } else if (t >= n) {
        trace.dx[i] = trace.dx[static_cast<std::size_t>(previous)];
        trace.dy[i] = trace.dy[static_cast<std::size_t>(previous)];
      } else {
        const double w = static_cast<double>(k - previous) / static_cast<double>(t - previous);
        const auto a = static_cast<std::size_t>(previous), b = static_cast<std::size_t>(t);
        trace.dx[i] = (1.0 - w) * trace.dx[a] + w * trace.dx[b];
        trace.dy[i] = (1.0 - w) * trace.dy[a] + w * trace.dy[b];
      }
    }
    previous = t;
  }
}

void apply_drift(std::span<Localization> locs, const DriftTrace& trace) {
  for (Localization& l : locs) {
    if (l.frame < 0 || l.frame >= trace.frames())
      throw UsageError("drift", "frame " + std::to_string(l.frame) + " lies outside the drift trace of " +
                                    std::to_string(trace.frames()) + " frames");
    l.x -= trace.dx[static_cast<std::size_t>(l.frame)];
    l.y -= trace.dy[static_cast<std::size_t>(l.frame)];
  }
}

void write_picasso_drift(const std::filesystem::path& path, const DriftTrace& trace) {
  std::string text;
  text.reserve(static_cast<std::size_t>(trace.frames()) * 24);
  for (std::int64_t t = 0; t < trace.frames(); ++t) {
    append_number(text, trace.dx[static_cast<std::size_t>(t)], 6);
    text += ' ';
    append_number(text, trace.dy[static_cast<std::size_t>(t)], 6);
    text += '\n';
  }
  write_file_atomically(path, text);
}

void write_drift_csv(const std::filesystem::path& path, const DriftTrace& trace, double pixel_size_nm) {
  if (!(pixel_size_nm > 0.0) || !std::isfinite(pixel_size_nm))
    throw UsageError(path.string(), "the pixel size must be a positive number of nm");
  CsvOptions options;
  options.quote_header = false;
  auto writer = create_csv_writer(path.string(),
                                  {{"frame", ColumnType::i32},
                                   {"dx [nm]", ColumnType::f64},
                                   {"dy [nm]", ColumnType::f64},
                                   {"markers", ColumnType::i32}},
                                  options);
  std::vector<double> rows;
  constexpr std::int64_t rows_per_append = 4096;
  for (std::int64_t t = 0; t < trace.frames(); ++t) {
    const auto i = static_cast<std::size_t>(t);
    rows.insert(rows.end(), {static_cast<double>(t), trace.dx[i] * pixel_size_nm, trace.dy[i] * pixel_size_nm,
                             static_cast<double>(trace.markers[i])});
    if ((t + 1) % rows_per_append == 0) {
      writer->append(rows);
      rows.clear();
    }
  }
  writer->append(rows);
  writer->finish();
}

}  // namespace nanoscopy
