#include "nanoscopy/loc/track/roi_tracker.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/fit/initial_estimate.hpp"

namespace nanoscopy {
namespace {

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  for (char ch : line) {
    if (ch == ',' || ch == ' ' || ch == '\t' || ch == '\r') {
      if (!field.empty()) fields.push_back(field);
      field.clear();
    } else {
      field += ch;
    }
  }
  if (!field.empty()) fields.push_back(field);
  return fields;
}

// Locale-independent, whole field only.
bool parse_number(const std::string& text, double& value) {
  const char* first = text.data();
  if (!text.empty() && text[0] == '+') ++first;
  const char* last = text.data() + text.size();
  const auto result = std::from_chars(first, last, value);
  return result.ec == std::errc() && result.ptr == last;
}

std::string format_number(double v) {
  std::ostringstream s;
  s.imbue(std::locale::classic());
  s << v;
  return s.str();
}

// The paper's initial estimate, as the fitter computes it when given no guess:
// maximum of the 3×3 moving average, σ from the pixels above α·e^(−½) + β.
template <typename Pixel>
SpotGuess paper_guess(const Pixel* g, int w, int h) {
  using namespace fit_detail;
  InitScan<double> scan = init_scan_identity<double>();
  for (int r = 0; r < h; ++r)
    for (int c = 0; c < w; ++c) init_scan_pixel(scan, g, w, h, c, r);
  SpotGuess guess;
  if (scan.nonfinite > 0 || !(scan.max > scan.min)) {  // the fitter rejects the ROI anyway
    guess.x = static_cast<float>((w - 1) / 2.0);
    guess.y = static_cast<float>((h - 1) / 2.0);
    guess.sigma = 1.0f;
    return guess;
  }
  const double threshold = init_threshold(scan);
  int above = 0;
  for (int i = 0; i < w * h; ++i) above += static_cast<double>(g[i]) > threshold ? 1 : 0;
  guess.x = static_cast<float>(scan.best_index % w);
  guess.y = static_cast<float>(scan.best_index / w);
  guess.sigma = static_cast<float>(init_sigma<double>(above));
  return guess;
}

double pixel_integral(std::int64_t i, double mu, double sigma) {
  const double s = std::sqrt(2.0) * sigma;
  return 0.5 * (std::erf((static_cast<double>(i) - mu + 0.5) / s) - std::erf((static_cast<double>(i) - mu - 0.5) / s));
}

}  // namespace

MarkerRois parse_rois(const std::string& text, const std::string& where, std::int64_t frame_width,
                  std::int64_t frame_height, int size) {
  if (size < 1 || static_cast<std::int64_t>(size) * size > kMaxRoiPixels)
    throw UsageError(where, "a ROI of " + std::to_string(size) + "×" + std::to_string(size) +
                                " pixels is not supported (at most " + std::to_string(kMaxRoiPixels) + " pixels)");
  MarkerRois set;
  std::size_t form = 0;
  bool first_content = true;
  std::istringstream in(text);
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    const std::string here = where + ":" + std::to_string(line_no);
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const std::vector<std::string> fields = split_fields(line);
    if (fields.empty()) continue;
    std::vector<double> v(fields.size());
    std::size_t numeric = 0;
    for (std::size_t i = 0; i < fields.size(); ++i) numeric += parse_number(fields[i], v[i]) ? 1 : 0;
    if (first_content && numeric == 0) {  // a line of labels
      first_content = false;
      continue;
    }
    first_content = false;
    if (fields.size() != 2 && fields.size() != 4)
      throw InputError(here, "expected 'x y' (a centre in px) or 'x0 y0 w h' (a box in px), found " +
                                 std::to_string(fields.size()) + " values");
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (!parse_number(fields[i], v[i])) throw InputError(here, "'" + fields[i] + "' is not a number");
      if (!std::isfinite(v[i])) throw InputError(here, "'" + fields[i] + "' is not a finite number");
    }
    if (form == 0) form = fields.size();
    if (fields.size() != form)
      throw InputError(here, "mixes centres ('x y') and boxes ('x0 y0 w h'): use one form per file");
    Roi roi;
    roi.line = line_no;
    int w = size, h = size;
    std::string described;
    if (form == 2) {
      roi.x0 = std::llround(v[0] - (size - 1) / 2.0);
      roi.y0 = std::llround(v[1] - (size - 1) / 2.0);
      described = "the ROI around (" + format_number(v[0]) + ", " + format_number(v[1]) + ")";
    } else {
      for (double value : v)
        if (value != std::floor(value) || std::abs(value) > 1e15)
          throw InputError(here, "a box's corner and size must be whole pixels");
      roi.x0 = static_cast<std::int64_t>(v[0]);
      roi.y0 = static_cast<std::int64_t>(v[1]);
      if (v[2] < 1 || v[3] < 1 || v[2] * v[3] > kMaxRoiPixels)
        throw InputError(here, "a box of " + format_number(v[2]) + "×" + format_number(v[3]) +
                                   " pixels is not supported (1 to " + std::to_string(kMaxRoiPixels) + " pixels)");
      w = static_cast<int>(v[2]);
      h = static_cast<int>(v[3]);
      if (!set.rois.empty() && (w != set.width || h != set.height))
        throw InputError(here, "every box must have the size of the first (" + std::to_string(set.width) + "×" +
                                   std::to_string(set.height) + " on line " + std::to_string(set.rois[0].line) +
                                   "), not " + std::to_string(w) + "×" + std::to_string(h));
      described = "the box";
    }
    if (roi.x0 < 0 || roi.y0 < 0 || roi.x0 + w > frame_width || roi.y0 + h > frame_height)
      throw InputError(here, described + " covering pixels x " + std::to_string(roi.x0) + "…" +
                                 std::to_string(roi.x0 + w - 1) + ", y " + std::to_string(roi.y0) + "…" +
                                 std::to_string(roi.y0 + h - 1) + " reaches outside the " +
                                 std::to_string(frame_width) + "×" + std::to_string(frame_height) + " frame");
    set.width = w;
    set.height = h;
    set.rois.push_back(roi);
  }
  if (set.rois.empty()) throw InputError(where, "holds no ROI (expected lines 'x y' or 'x0 y0 w h')");
  return set;
}

MarkerRois parse_roi_file(const std::string& path, std::int64_t frame_width, std::int64_t frame_height, int size) {
  plan_input(path, "the marker ROIs (--roi)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open the ROI file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path, "cannot read the ROI file");
  return parse_rois(text.str(), path, frame_width, frame_height, size);
}

std::string to_string(RoiFrameStatus status) {
  switch (status) {
    case RoiFrameStatus::ok:
      return "ok";
    case RoiFrameStatus::partial:
      return "partial";
    case RoiFrameStatus::lost:
      return "lost";
  }
  return "unknown";
}

std::string format_roi_line(const RoiFrameResult& r) {
  std::string line = std::to_string(r.frame);
  for (double v : {r.dx_nm, r.dy_nm}) {
    line += ' ';
    if (!std::isfinite(v)) {
      line += "nan";
      continue;
    }
    char buffer[64];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, v, std::chars_format::fixed, 3).ptr;
    line.append(buffer, end);
  }
  line += ' ' + std::to_string(r.markers) + ' ' + to_string(r.status);
  return line;
}

RoiTracker::RoiTracker(MarkerRois rois, FitEngine& backend, double pixel_size_nm, std::int64_t frame_width,
                       std::int64_t frame_height)
    : set_(std::move(rois)),
      backend_(backend),
      pixel_size_nm_(pixel_size_nm),
      frame_width_(frame_width),
      frame_height_(frame_height) {
  if (set_.rois.empty()) throw UsageError("roi", "no ROI to track");
  if (!(pixel_size_nm > 0.0) || !std::isfinite(pixel_size_nm))
    throw UsageError("roi", "the pixel size must be a positive number of nm");
  for (const Roi& r : set_.rois)
    if (r.x0 < 0 || r.y0 < 0 || r.x0 + set_.width > frame_width || r.y0 + set_.height > frame_height)
      throw UsageError("roi", "a ROI at pixel (" + std::to_string(r.x0) + ", " + std::to_string(r.y0) +
                                  ") reaches outside the " + std::to_string(frame_width) + "×" +
                                  std::to_string(frame_height) + " frame");
  const std::size_t n = set_.rois.size();
  guesses_.resize(n);
  warm_.assign(n, 0);
  fits_.resize(n);
  ref_x_.assign(n, 0.0);
  ref_y_.assign(n, 0.0);
  has_ref_.assign(n, 0);
}

RoiFrameResult RoiTracker::process(std::int64_t frame, std::span<const float> pixels) {
  return run(frame, pixels, cut_f32_, PixelType::f32);
}

RoiFrameResult RoiTracker::process(std::int64_t frame, std::span<const std::uint16_t> pixels) {
  return run(frame, pixels, cut_u16_, PixelType::u16);
}

template <typename Pixel>
RoiFrameResult RoiTracker::run(std::int64_t frame, std::span<const Pixel> pixels, std::vector<Pixel>& cut,
                               PixelType type) {
  if (static_cast<std::int64_t>(pixels.size()) != frame_width_ * frame_height_)
    throw UsageError("frame " + std::to_string(frame), "the frame holds " + std::to_string(pixels.size()) +
                                                           " pixels, not " + std::to_string(frame_width_) + "×" +
                                                           std::to_string(frame_height_));
  const int w = set_.width, h = set_.height;
  const std::size_t n = set_.rois.size(), roi_pixels = static_cast<std::size_t>(w) * h;
  cut.resize(n * roi_pixels);
  for (std::size_t i = 0; i < n; ++i) {
    Pixel* dst = cut.data() + i * roi_pixels;
    const Roi& r = set_.rois[i];
    for (int row = 0; row < h; ++row)
      std::copy_n(pixels.data() + (r.y0 + row) * frame_width_ + r.x0, w, dst + static_cast<std::size_t>(row) * w);
    if (!warm_[i]) guesses_[i] = paper_guess(dst, w, h);
  }
  const RoiBatch batch{cut.data(), type, static_cast<std::int64_t>(n), w, h, guesses_.data()};
  backend_.fit(batch, fits_);

  RoiFrameResult result;
  result.frame = frame;
  double sum_x = 0, sum_y = 0;
  int used = 0;
  bool any_ref = false;
  for (std::size_t i = 0; i < n; ++i) {
    any_ref = any_ref || has_ref_[i];
    const FitResult& f = fits_[i];
    if (!converged(f.status) || !has_ref_[i]) continue;
    sum_x += static_cast<double>(set_.rois[i].x0) + static_cast<double>(f.x) - ref_x_[i];
    sum_y += static_cast<double>(set_.rois[i].y0) + static_cast<double>(f.y) - ref_y_[i];
    ++used;
  }
  // Markers without a reference take one now: in the first frame any fit does
  // (drift 0 by definition), later only where the referenced markers measured the drift.
  const double drift_x = used > 0 ? sum_x / used : 0.0, drift_y = used > 0 ? sum_y / used : 0.0;
  int referenced_now = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const FitResult& f = fits_[i];
    if (converged(f.status)) {
      guesses_[i] = SpotGuess{f.x, f.y, f.sigma};
      warm_[i] = 1;
    } else {
      warm_[i] = 0;  // the paper's estimate copes with a jump a stale guess would miss
    }
    if (has_ref_[i] || !converged(f.status) || (any_ref && used == 0)) continue;
    ref_x_[i] = static_cast<double>(set_.rois[i].x0) + static_cast<double>(f.x) - drift_x;
    ref_y_[i] = static_cast<double>(set_.rois[i].y0) + static_cast<double>(f.y) - drift_y;
    has_ref_[i] = 1;
    ++referenced_now;
  }
  if (!any_ref) used = referenced_now;  // the first frame with converged fits defines the origin
  result.markers = used;
  if (used == 0) {
    result.dx_nm = result.dy_nm = std::numeric_limits<double>::quiet_NaN();
    result.status = RoiFrameStatus::lost;
  } else {
    result.dx_nm = drift_x * pixel_size_nm_;
    result.dy_nm = drift_y * pixel_size_nm_;
    result.status = used == static_cast<int>(n) ? RoiFrameStatus::ok : RoiFrameStatus::partial;
  }
  return result;
}

void track_rois(StackReader& reader, FrameRange::Resolved range, RoiTracker& tracker,
                const std::function<void(const RoiFrameResult&)>& on_frame) {
  const StackInfo& info = reader.info();
  if (info.width != tracker.frame_width() || info.height != tracker.frame_height())
    throw UsageError(info.path, "the stack's " + std::to_string(info.width) + "×" + std::to_string(info.height) +
                                    " frames differ from the tracker's " + std::to_string(tracker.frame_width()) + "×" +
                                    std::to_string(tracker.frame_height()));
  const auto pixels = static_cast<std::size_t>(info.pixels_per_frame());
  if (info.type == PixelType::u16) {
    std::vector<std::uint16_t> frame(pixels);
    for (std::int64_t t = range.first; t < range.last; ++t) {
      reader.read_raw(t, 1, frame.data());
      on_frame(tracker.process(t, std::span<const std::uint16_t>(frame)));
    }
    return;
  }
  std::vector<float> frame(pixels);
  for (std::int64_t t = range.first; t < range.last; ++t) {
    reader.read_float(t, 1, frame.data());
    on_frame(tracker.process(t, std::span<const float>(frame)));
  }
}

std::vector<std::uint16_t> simulate_marker_frames(const MarkerFramesSettings& m) {
  if (m.frames < 0 || m.width < 1 || m.height < 1)
    throw UsageError("simulate", "marker frames need a positive size and a frame count ≥ 0");
  if (!m.drift_x.empty() && static_cast<std::int64_t>(m.drift_x.size()) != m.frames)
    throw UsageError("simulate", "drift_x needs one value per frame");
  if (!m.drift_y.empty() && static_cast<std::int64_t>(m.drift_y.size()) != m.frames)
    throw UsageError("simulate", "drift_y needs one value per frame");
  std::mt19937_64 rng(m.seed);
  const std::size_t frame_pixels = static_cast<std::size_t>(m.width * m.height);
  std::vector<std::uint16_t> out(static_cast<std::size_t>(m.frames) * frame_pixels);
  std::vector<double> expected(frame_pixels), px, py;
  const std::int64_t reach = static_cast<std::int64_t>(std::ceil(6.0 * m.psf_sigma)) + 1;
  for (std::int64_t t = 0; t < m.frames; ++t) {
    std::fill(expected.begin(), expected.end(), m.background);
    const double sx = m.drift_x.empty() ? 0.0 : m.drift_x[static_cast<std::size_t>(t)];
    const double sy = m.drift_y.empty() ? 0.0 : m.drift_y[static_cast<std::size_t>(t)];
    for (const auto& marker : m.markers) {
      const double x = marker[0] + sx, y = marker[1] + sy;
      const std::int64_t i0 = std::max<std::int64_t>(0, std::llround(x) - reach);
      const std::int64_t i1 = std::min<std::int64_t>(m.width - 1, std::llround(x) + reach);
      const std::int64_t j0 = std::max<std::int64_t>(0, std::llround(y) - reach);
      const std::int64_t j1 = std::min<std::int64_t>(m.height - 1, std::llround(y) + reach);
      if (i0 > i1 || j0 > j1) continue;
      px.resize(static_cast<std::size_t>(i1 - i0 + 1));
      py.resize(static_cast<std::size_t>(j1 - j0 + 1));
      for (std::int64_t i = i0; i <= i1; ++i) px[static_cast<std::size_t>(i - i0)] = pixel_integral(i, x, m.psf_sigma);
      for (std::int64_t j = j0; j <= j1; ++j) py[static_cast<std::size_t>(j - j0)] = pixel_integral(j, y, m.psf_sigma);
      for (std::int64_t j = j0; j <= j1; ++j)
        for (std::int64_t i = i0; i <= i1; ++i)
          expected[static_cast<std::size_t>(j * m.width + i)] +=
              m.photons * px[static_cast<std::size_t>(i - i0)] * py[static_cast<std::size_t>(j - j0)];
    }
    std::uint16_t* frame = out.data() + static_cast<std::size_t>(t) * frame_pixels;
    for (std::size_t k = 0; k < frame_pixels; ++k) {
      const double electrons = static_cast<double>(std::poisson_distribution<std::int64_t>(expected[k])(rng));
      frame[k] =
          static_cast<std::uint16_t>(std::clamp(std::round(m.baseline + electrons / m.sensitivity), 0.0, 65535.0));
    }
  }
  return out;
}

LatencyStats measure_roi_latency(FitEngine& backend, int markers, int roi_size, std::int64_t frames,
                                 std::uint64_t seed) {
  if (markers < 1 || frames < 1) throw UsageError("bench", "latency needs at least one marker and one frame");
  constexpr std::int64_t pool_frames = 64, warmup_frames = 100;
  const int columns = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(markers))));
  const int spacing = std::max(2 * roi_size, 16);
  MarkerFramesSettings sim;
  sim.frames = pool_frames;
  sim.width = sim.height = static_cast<std::int64_t>(columns) * spacing;
  sim.seed = seed;
  std::string centres;
  for (int k = 0; k < markers; ++k) {
    const double x = (k % columns + 0.5) * spacing - 0.5, y = (k / columns + 0.5) * spacing - 0.5;
    sim.markers.push_back({x + 0.3, y - 0.2});
    centres += format_number(x) + " " + format_number(y) + "\n";
  }
  // A circle of 1 px radius over the pool: continuous when the pool repeats.
  for (std::int64_t t = 0; t < pool_frames; ++t) {
    const double phase = 2.0 * 3.14159265358979323846 * static_cast<double>(t) / pool_frames;
    sim.drift_x.push_back(std::cos(phase) - 1.0);
    sim.drift_y.push_back(std::sin(phase));
  }
  const std::vector<std::uint16_t> pool = simulate_marker_frames(sim);
  const std::size_t frame_pixels = static_cast<std::size_t>(sim.width * sim.height);
  RoiTracker tracker(parse_rois(centres, "bench", sim.width, sim.height, roi_size), backend, 100.0, sim.width,
                     sim.height);
  auto frame_at = [&](std::int64_t t) {
    return std::span<const std::uint16_t>(pool.data() + static_cast<std::size_t>(t % pool_frames) * frame_pixels,
                                          frame_pixels);
  };
  for (std::int64_t t = 0; t < warmup_frames; ++t) tracker.process(t, frame_at(t));
  std::vector<double> us(static_cast<std::size_t>(frames));
  double marker_sum = 0;
  for (std::int64_t t = 0; t < frames; ++t) {
    const auto start = std::chrono::steady_clock::now();
    const RoiFrameResult r = tracker.process(warmup_frames + t, frame_at(warmup_frames + t));
    const auto stop = std::chrono::steady_clock::now();
    us[static_cast<std::size_t>(t)] = std::chrono::duration<double, std::micro>(stop - start).count();
    marker_sum += r.markers;
  }
  LatencyStats stats;
  stats.frames = frames;
  stats.markers_mean = marker_sum / static_cast<double>(frames);
  for (double v : us) stats.mean_us += v;
  stats.mean_us /= static_cast<double>(frames);
  std::sort(us.begin(), us.end());
  // Nearest rank: the smallest value with at least p·N values at or below it.
  auto rank = [&](double p) {
    const auto k = static_cast<std::size_t>(std::ceil(p * static_cast<double>(frames)));
    return us[std::min(us.size() - 1, k == 0 ? 0 : k - 1)];
  };
  stats.p50_us = rank(0.50);
  stats.p99_us = rank(0.99);
  stats.max_us = us.back();
  return stats;
}

}  // namespace nanoscopy
