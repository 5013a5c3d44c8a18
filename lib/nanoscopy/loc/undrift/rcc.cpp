#include "nanoscopy/loc/undrift/rcc.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <thread>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/progress.hpp"
#include "nanoscopy/loc/undrift/drift_model.hpp"
#include "nanoscopy/loc/undrift/peak_fit.hpp"
#include "nanoscopy/loc/undrift/rcc_solve.hpp"

namespace nanoscopy {
namespace {

struct Grid {
  double x0 = 0, y0 = 0;  // camera px at grid pixel (0, 0)'s centre
  double pixel = 0;       // camera px per grid pixel
  CorrelationGeometry geometry;
};

// A length in camera px as the user gave it: nm when the pixel size is known.
std::string length_text(double px, const RccSettings& s) {
  std::ostringstream t;
  t.precision(4);
  if (s.camera_px_nm > 0)
    t << px * s.camera_px_nm << " nm";
  else
    t << px << " camera px";
  return t.str();
}

// The grid side (before the FFT size) at grid pixel `pixel`, in double: no integer overflows on any input.
double grid_side(double extent, double pixel, const RccSettings& s) {
  const double pad = std::ceil(s.max_drift_px / pixel) + CorrelationPeak::radius + 1;
  return std::max(std::ceil(extent / pixel) + 2 + pad, 2 * pad + 2);
}

Grid choose_grid(double xmin, double xmax, double ymin, double ymax, const RccSettings& s, const std::string& where) {
  const double extent = std::max(xmax - xmin, ymax - ymin);
  check_rcc_grid(s, extent, where);
  Grid g;
  g.pixel = s.pixel_px;
  for (int attempt = 0;; ++attempt) {
    // Sizes are searched only once the grid is known to fit (≤ max_grid ≤ 32768 a side).
    if (grid_side(extent, g.pixel, s) > static_cast<double>(s.max_grid) && attempt < kMaxGridCoarsenings) {
      g.pixel *= 1.1;
      continue;
    }
    const auto pad = static_cast<std::int64_t>(std::ceil(s.max_drift_px / g.pixel)) + CorrelationPeak::radius + 1;
    // +2: the bilinear weights reach one pixel beyond a localization's own.
    const auto w = static_cast<std::int64_t>(std::ceil((xmax - xmin) / g.pixel)) + 2;
    const auto h = static_cast<std::int64_t>(std::ceil((ymax - ymin) / g.pixel)) + 2;
    g.geometry.width = correlation_fft_size(std::max(w + pad, 2 * pad + 2));
    g.geometry.height = correlation_fft_size(std::max(h + pad, 2 * pad + 2));
    g.geometry.max_shift_px = pad - CorrelationPeak::radius - 1;
    g.geometry.blur_px = s.blur_px;
    if (std::max(g.geometry.width, g.geometry.height) <= s.max_grid || attempt >= kMaxGridCoarsenings) break;
    g.pixel *= 1.1;  // coarser until the grid fits max_grid
  }
  g.x0 = xmin;
  g.y0 = ymin;
  return g;
}

// One segment's localizations on the grid (the engine renders their bilinear histogram).
void segment_points(std::span<const Localization> locs, std::span<const std::int64_t> indices, const Grid& g,
                    std::vector<rcc_math::GridPoint>& points) {
  points.resize(indices.size());
  for (std::size_t k = 0; k < indices.size(); ++k) {
    const Localization& l = locs[static_cast<std::size_t>(indices[k])];
    points[k] = {static_cast<float>((l.x - g.x0) / g.pixel), static_cast<float>((l.y - g.y0) / g.pixel)};
  }
}

}  // namespace

void check_rcc_grid(const RccSettings& s, double extent, const std::string& where) {
  const double coarsest = s.pixel_px * std::pow(1.1, kMaxGridCoarsenings);
  const double side = grid_side(extent, coarsest, s);
  const auto grid = static_cast<double>(s.max_grid);
  if (side <= grid) return;
  // The pixel that would fit: side(p) ≈ max(extent + D, 2 D) / p + the peak's margin.
  const double margin = 2.0 * (CorrelationPeak::radius + 4);
  const double needed = std::max(extent + s.max_drift_px, 2 * s.max_drift_px) / std::max(grid - margin, 1.0);
  const bool drift_bound = 2 * s.max_drift_px >= extent + s.max_drift_px;
  std::ostringstream what;
  what.precision(4);
  what << "a grid pixel of " << length_text(s.pixel_px, s) << " with a largest drift of "
       << length_text(s.max_drift_px, s);
  if (extent > 0) what << " over localizations spanning " << length_text(extent, s);
  what << " needs a correlation grid of " << side << " pixels a side even at " << length_text(coarsest, s)
       << " (the pixel grows at most " << std::pow(1.1, kMaxGridCoarsenings) << " times), more than the "
       << s.max_grid << " of " << s.options.max_grid.name << ": give a grid pixel of at least "
       << length_text(needed / std::pow(1.1, kMaxGridCoarsenings), s) << " (" << s.options.pixel.name << ")";
  if (drift_bound) what << " or a smaller largest drift (" << s.options.max_drift.name << ")";
  // Name the setting the user gave that is at fault: the drift's or the pixel's, first the one that
  // bounds the grid; then the grid's; with defaults only, the drift, or the file whose extent it is.
  const RccOption& first = drift_bound ? s.options.max_drift : s.options.pixel;
  const RccOption& second = drift_bound ? s.options.pixel : s.options.max_drift;
  for (const RccOption* o : {&first, &second, &s.options.max_grid})
    if (o->given) throw UsageError(o->name, what.str());
  if (drift_bound) throw UsageError(s.options.max_drift.name, what.str());
  throw InputError(where, what.str());
}

void RccSettings::validate() const {
  if (segment_frames < 1) throw UsageError("--segment", "a segment must hold at least one frame");
  if (!(pixel_px > 0.0) || !std::isfinite(pixel_px))
    throw UsageError(options.pixel.name, "the grid pixel must be > 0");
  if (max_grid < 64 || max_grid > 32768)
    throw UsageError(options.max_grid.name, "the grid must be 64 to 32768 pixels a side");
  if (!(max_drift_px > 0.0) || !std::isfinite(max_drift_px))
    throw UsageError(options.max_drift.name, "the largest drift must be > 0");
  if (!(blur_px >= 0.0) || !std::isfinite(blur_px)) throw UsageError("undrift", "the correlation blur must be ≥ 0");
}

std::vector<RccSegment> rcc_segments(std::int64_t frames, std::int64_t segment_frames, const std::string& where) {
  const auto n = static_cast<std::int64_t>(std::floor(static_cast<double>(frames) / static_cast<double>(segment_frames) + 0.5));
  if (n < 2)
    throw UsageError(where, std::to_string(frames) + " frames make " + (n < 1 ? "no" : "one") + " segment of " +
                                std::to_string(segment_frames) +
                                " frames; RCC needs at least 2: give a smaller --segment or --undrift-segment (at most " +
                                std::to_string(std::max<std::int64_t>(frames * 2 / 3, 1)) + ")");
  // Every pair of segments is one correlation: n(n-1)/2 of them. 256 segments are 32,640 (minutes on a
  // CPU); --segment 1 on 400 frames would be 79,800 and on 100,000 frames 5e9, which never ends.
  constexpr std::int64_t max_segments = 256;
  if (n > max_segments)
    throw UsageError(where, std::to_string(frames) + " frames in segments of " + std::to_string(segment_frames) +
                                " make " + std::to_string(n) + " segments and " + std::to_string(n * (n - 1) / 2) +
                                " correlations; RCC takes at most " + std::to_string(max_segments) +
                                " segments: give a segment of at least " +
                                std::to_string((frames + max_segments - 1) / max_segments) + " frames");
  std::vector<RccSegment> segments(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) {
    RccSegment& s = segments[static_cast<std::size_t>(k)];
    // first = ⌈F k / n⌉: then frame f lies in segment ⌊f n / F⌋ (undrift_rcc's segment_of).
    s.first = (frames * k + n - 1) / n;
    s.end = (frames * (k + 1) + n - 1) / n;
    s.time = 0.5 * static_cast<double>(s.first + s.end - 1);
  }
  return segments;
}

RccResult undrift_rcc(std::span<const Localization> locs, std::int64_t frames, const RccSettings& settings,
                      const std::string& where, const CorrelationEngineFactory& make_engine) {
  settings.validate();
  RccResult result;
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  std::int64_t usable = 0;
  for (const Localization& l : locs) {
    if (!std::isfinite(l.x) || !std::isfinite(l.y)) continue;
    if (l.frame < 0 || l.frame >= frames)
      throw UsageError(where, "frame " + std::to_string(l.frame) + " lies outside the " + std::to_string(frames) +
                                  " frames");
    xmin = std::min(xmin, l.x);
    xmax = std::max(xmax, l.x);
    ymin = std::min(ymin, l.y);
    ymax = std::max(ymax, l.y);
    ++usable;
  }
  if (usable < 2)
    throw InputError(where, std::to_string(usable) + " localization" + (usable == 1 ? "" : "s") +
                                " with a position: RCC needs many in every segment");
  result.segments = rcc_segments(frames, settings.segment_frames, where);
  const auto n = static_cast<std::int64_t>(result.segments.size());

  // Each localization's segment, then the indices grouped by segment (counting sort).
  std::vector<std::int64_t> start(static_cast<std::size_t>(n + 1), 0), order(static_cast<std::size_t>(usable));
  const auto segment_of = [&](std::int64_t frame) { return std::min(n - 1, frame * n / frames); };
  std::vector<double> frame_sum(static_cast<std::size_t>(n), 0.0);
  for (const Localization& l : locs)
    if (std::isfinite(l.x) && std::isfinite(l.y)) ++start[static_cast<std::size_t>(segment_of(l.frame) + 1)];
  for (std::int64_t k = 0; k < n; ++k) start[static_cast<std::size_t>(k + 1)] += start[static_cast<std::size_t>(k)];
  {
    std::vector<std::int64_t> fill(start.begin(), start.end() - 1);
    for (std::size_t i = 0; i < locs.size(); ++i) {
      const Localization& l = locs[i];
      if (!std::isfinite(l.x) || !std::isfinite(l.y)) continue;
      const auto s = static_cast<std::size_t>(segment_of(l.frame));
      order[static_cast<std::size_t>(fill[s]++)] = static_cast<std::int64_t>(i);
      frame_sum[s] += static_cast<double>(l.frame);
    }
  }
  for (std::int64_t k = 0; k < n; ++k) {
    RccSegment& s = result.segments[static_cast<std::size_t>(k)];
    s.localizations = start[static_cast<std::size_t>(k + 1)] - start[static_cast<std::size_t>(k)];
    if (s.localizations > 0) s.time = frame_sum[static_cast<std::size_t>(k)] / static_cast<double>(s.localizations);
  }

  const Grid grid = choose_grid(xmin, xmax, ymin, ymax, settings, where);
  result.geometry = grid.geometry;
  result.grid_pixel_px = grid.pixel;
  std::unique_ptr<CorrelationEngine> engine =
      make_engine ? make_engine(grid.geometry)
                  : make_cpu_correlation_engine(grid.geometry, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  result.engine = engine->name();

  // Pairs i < j; the work is n segment transforms and n(n−1)/2 inverse transforms.
  std::vector<SegmentPair> pairs;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i + 1; j < n; ++j) pairs.push_back({i, j});
  result.pairs = static_cast<std::int64_t>(pairs.size());
  Progress progress("undrift " + where, n + result.pairs, settings.quiet);
  {
    std::vector<rcc_math::GridPoint> points;
    for (std::int64_t k = 0; k < n; ++k) {
      const std::span<const std::int64_t> members(order.data() + start[static_cast<std::size_t>(k)],
                                                  static_cast<std::size_t>(result.segments[static_cast<std::size_t>(k)].localizations));
      segment_points(locs, members, grid, points);
      engine->add_segment_points(points);
      progress.update(k + 1);
    }
  }
  result.spectrum_bytes = engine->spectrum_bytes();
  std::vector<CorrelationPeak> peaks(pairs.size());
  const std::size_t batch = static_cast<std::size_t>(std::max<std::int64_t>(n - 1, 8));
  for (std::size_t b = 0; b < pairs.size(); b += batch) {
    const std::size_t count = std::min(batch, pairs.size() - b);
    engine->correlate(std::span(pairs).subspan(b, count), std::span(peaks).subspan(b, count));
    progress.update(n + static_cast<std::int64_t>(b + count));
  }
  progress.finish();

  std::vector<PairShift> shifts(pairs.size());
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const SubpixelShift s = fit_correlation_peak(peaks[k]);
    shifts[k] = {pairs[k].i, pairs[k].j, s.x * grid.pixel, s.y * grid.pixel, s.ok};
  }
  const RccSolution solution = solve_rcc(n, shifts, settings.max_error_px);
  result.pairs_used = std::count(solution.used.begin(), solution.used.end(), true);
  result.pairs_dropped = solution.dropped;
  result.threshold_px = solution.threshold;
  result.rms_residual_px = solution.rms_residual;

  std::vector<double> t, vx, vy;
  for (std::int64_t k = 0; k < n; ++k) {
    RccSegment& s = result.segments[static_cast<std::size_t>(k)];
    s.solved = solution.solved[static_cast<std::size_t>(k)];
    if (!s.solved) continue;
    t.push_back(s.time);
    vx.push_back(solution.dx[static_cast<std::size_t>(k)]);
    vy.push_back(solution.dy[static_cast<std::size_t>(k)]);
  }
  if (t.size() < 2)
    throw InputError(where, "no two segments correlate (too few localizations per segment? give a larger --segment or --undrift-segment)");
  result.trace.dx = interpolate_samples(t, vx, frames);
  result.trace.dy = interpolate_samples(t, vy, frames);
  result.trace.markers.assign(static_cast<std::size_t>(frames), 0);
  // The segments' drifts in the trace's zero-mean convention.
  const double before_x = result.trace.dx[0], before_y = result.trace.dy[0];
  zero_mean(result.trace);
  const double shift_x = before_x - result.trace.dx[0], shift_y = before_y - result.trace.dy[0];
  std::size_t solved = 0;
  for (RccSegment& s : result.segments) {
    if (!s.solved) continue;
    s.dx = vx[solved] - shift_x;
    s.dy = vy[solved] - shift_y;
    ++solved;
  }
  return result;
}

}  // namespace nanoscopy
