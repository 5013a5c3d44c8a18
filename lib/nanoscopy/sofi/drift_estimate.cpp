#include "nanoscopy/sofi/drift_estimate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>
#include <string>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/loc/undrift/drift_model.hpp"
#include "nanoscopy/loc/undrift/peak_fit.hpp"
#include "nanoscopy/loc/undrift/rcc_solve.hpp"

namespace nanoscopy {
namespace {

constexpr std::int64_t kAllPairsUpTo = 48;  // blocks; beyond, pairs at most kBand blocks apart
constexpr std::int64_t kBand = 24;
// The block means are already smooth (the PSF); a little blur only steadies the
// peak fit of a very narrow PSF.
constexpr double kBlurPx = 0.5;
constexpr std::int64_t kTaperPx = 4;  // the cosine edge of each block mean

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::int64_t search_radius(std::int64_t width, std::int64_t height, const SofiDriftSettings& s) {
  const double r = s.max_drift_px > 0 ? s.max_drift_px : 0.25 * static_cast<double>(std::min(width, height));
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(r)));
}

// 1 inside, a cosine down to 0 over `edge` pixels at both ends.
std::vector<float> taper(std::int64_t n, std::int64_t edge) {
  std::vector<float> w(static_cast<std::size_t>(n), 1.0f);
  for (std::int64_t i = 0; i < edge && i < n; ++i) {
    const float v = static_cast<float>(0.5 - 0.5 * std::cos(std::numbers::pi * (static_cast<double>(i) + 0.5) /
                                                            static_cast<double>(edge)));
    w[static_cast<std::size_t>(i)] = std::min(w[static_cast<std::size_t>(i)], v);
    w[static_cast<std::size_t>(n - 1 - i)] = std::min(w[static_cast<std::size_t>(n - 1 - i)], v);
  }
  return w;
}

}  // namespace

CorrelationGeometry sofi_drift_geometry(std::int64_t width, std::int64_t height, const SofiDriftSettings& s) {
  CorrelationGeometry g;
  g.max_shift_px = search_radius(width, height, s);
  if (2 * g.max_shift_px >= std::min(width, height))
    throw UsageError("--max-drift", "a search radius of " + std::to_string(g.max_shift_px) + " px needs frames of more than " +
                                        std::to_string(2 * g.max_shift_px) + " px a side");
  const std::int64_t pad = g.max_shift_px + CorrelationPeak::radius + 1;
  g.width = correlation_fft_size(width + pad);
  g.height = correlation_fft_size(height + pad);
  g.blur_px = kBlurPx;
  validate_correlation_geometry(g, "--max-drift");
  return g;
}

SofiDriftEstimator::SofiDriftEstimator(std::int64_t width, std::int64_t height,
                                       std::unique_ptr<CorrelationEngine> engine, const SofiDriftSettings& settings)
    : width_(width), height_(height), engine_(std::move(engine)), settings_(settings) {
  const auto& g = engine_->geometry();
  // A narrow edge: it only has to remove the frame's hard border; a wide one
  // (the search radius) throws away data and measured worse (0.30 px rms instead
  // of 0.12 on tests/test_sofi_drift.cpp's quantum-dot stack).
  window_x_ = taper(width_, std::min<std::int64_t>(kTaperPx, width_ / 4));
  window_y_ = taper(height_, std::min<std::int64_t>(kTaperPx, height_ / 4));
  grid_.assign(static_cast<std::size_t>(g.width * g.height), 0.0f);
}

void SofiDriftEstimator::add_block(std::span<const float> mean, double centre_frame) {
  const auto t0 = std::chrono::steady_clock::now();
  double total = 0;
  for (float v : mean) total += v;
  const float level = static_cast<float>(total / static_cast<double>(mean.size()));
  const std::int64_t gw = engine_->geometry().width;
  // The frame at the grid's corner; the rest stays zero (the padding).
  for (std::int64_t y = 0; y < height_; ++y)
    for (std::int64_t x = 0; x < width_; ++x)
      grid_[static_cast<std::size_t>(y * gw + x)] =
          (mean[static_cast<std::size_t>(y * width_ + x)] - level) * window_x_[static_cast<std::size_t>(x)] *
          window_y_[static_cast<std::size_t>(y)];
  engine_->add_segment(grid_);
  times_.push_back(centre_frame);
  seconds_ += since(t0);
}

SofiDriftEstimator::Result SofiDriftEstimator::solve(std::int64_t frames, const std::string& source) {
  const auto n = static_cast<std::int64_t>(times_.size());
  if (n < 2)
    throw InputError(source, "--undrift needs at least 2 drift blocks, the range has " + std::to_string(n) +
                                 " (use a smaller --drift-block)");
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<SegmentPair> pairs;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i + 1; j < n && (n <= kAllPairsUpTo || j - i <= kBand); ++j) pairs.push_back({i, j});
  std::vector<CorrelationPeak> peaks(pairs.size());
  engine_->correlate(pairs, peaks);
  std::vector<PairShift> shifts(pairs.size());
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const SubpixelShift s = fit_correlation_peak(peaks[k]);
    shifts[k] = {pairs[k].i, pairs[k].j, s.x, s.y, s.ok};
  }
  const RccSolution sol = solve_rcc(n, shifts, settings_.max_error_px);
  Result r;
  r.correlation_seconds = seconds_ + since(t0);
  r.engine = engine_->name();
  r.pairs = static_cast<std::int64_t>(pairs.size());
  r.dropped = sol.dropped;
  r.rms_residual_px = sol.rms_residual;
  r.block_time = times_;
  r.block_solved = sol.solved;
  // Only solved blocks carry a sample; the spline runs through them.
  std::vector<double> t, vx, vy;
  for (std::int64_t k = 0; k < n; ++k)
    if (sol.solved[static_cast<std::size_t>(k)]) {
      t.push_back(times_[static_cast<std::size_t>(k)]);
      vx.push_back(sol.dx[static_cast<std::size_t>(k)]);
      vy.push_back(sol.dy[static_cast<std::size_t>(k)]);
    }
  if (t.size() < 2) throw InputError(source, "--undrift: no two drift blocks correlate (a frame without structure?)");
  r.dx = interpolate_samples(t, vx, frames);
  r.dy = interpolate_samples(t, vy, frames);
  const double x0 = r.dx.front(), y0 = r.dy.front();
  for (auto& v : r.dx) v -= x0;
  for (auto& v : r.dy) v -= y0;
  r.block_dx.resize(static_cast<std::size_t>(n));
  r.block_dy.resize(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) {
    r.block_dx[static_cast<std::size_t>(k)] = sol.dx[static_cast<std::size_t>(k)] - x0;
    r.block_dy[static_cast<std::size_t>(k)] = sol.dy[static_cast<std::size_t>(k)] - y0;
  }
  return r;
}

}  // namespace nanoscopy
