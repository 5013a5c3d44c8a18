#include "nanoscopy/smre/runner.hpp"

#include <algorithm>
#include <cmath>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/finite_pixels.hpp"
#include "nanoscopy/smre/noise.hpp"

namespace nanoscopy {

Padding smre_padding(std::int64_t width, std::int64_t height, double psf_sigma) {
  return plan_padding(width, height, std::max(3 * make_psf_kernel(psf_sigma).radius, 16), kIcdTile);
}

SmreProblem make_smre_problem(std::int64_t padded_width, std::int64_t padded_height, const SmreSettings& settings,
                              const WeightOptions& weights) {
  SmreProblem p;
  p.width = padded_width;
  p.height = padded_height;
  p.psf = make_psf_kernel(settings.psf_sigma);
  p.family.kind = settings.projection;
  p.family.mr_depth = settings.mr_depth;
  p.family.width = padded_width;
  p.family.height = padded_height;
  p.weights = compute_weights(p.family, weights);
  p.settings = settings;
  return p;
}

namespace {

void validate(std::int64_t width, std::int64_t height, const SmreSettings& s) {
  if (!(s.psf_sigma > 0) || !std::isfinite(s.psf_sigma))
    throw UsageError("--psf", "the PSF sigma must be positive (got " + std::to_string(s.psf_sigma) + " px)");
  if (s.noise_sigma < 0 || !std::isfinite(s.noise_sigma))
    throw UsageError("--noise", "the noise sigma must be positive, or 0 to estimate it (got " +
                                    std::to_string(s.noise_sigma) + ")");
  const int taps = 2 * make_psf_kernel(s.psf_sigma).radius + 1;
  if (taps > std::min(width, height))
    throw UsageError("--psf", "a PSF of sigma " + std::to_string(s.psf_sigma) + " px (" + std::to_string(taps) +
                                  " px wide at 4 sigma) is wider than the " + std::to_string(width) + "x" +
                                  std::to_string(height) + " image");
  if (s.projection == Projection::exact && s.mr_depth > std::min(width, height))
    throw UsageError("MRdepth", "squares of edge " + std::to_string(s.mr_depth) + " px do not fit the " +
                                    std::to_string(width) + "x" + std::to_string(height) + " image");
  if (s.mr_depth < 1) throw UsageError("MRdepth", "must be at least 1");
  if (!(s.coverage > 0 && s.coverage < 1)) throw UsageError("--alpha", "the coverage must lie in (0, 1)");
  if (s.rho1 <= 0 || s.rho2 <= 0 || s.alpha1 <= 0 || s.alpha2 <= 0 || s.gamma <= 0)
    throw UsageError("smre", "rho1, rho2, alpha1, alpha2 and gamma must be positive");
  if (s.lambda < 0) throw UsageError("regularization", "must not be negative");
}

// Pixels SMRE cannot restore: NaN/Inf anywhere, negative counts under the Anscombe transform.
void check_frame_values(std::span<const float> frame, const std::string& where, bool anscombe) {
  require_finite_pixels(frame, where);
  if (!anscombe) return;
  if (const auto negative = std::find_if(frame.begin(), frame.end(), [](float v) { return v < 0; });
      negative != frame.end())
    throw InputError(where, "has negative values (" + std::to_string(*negative) +
                                "), which Poisson counts cannot have: subtract less offset or drop --anscombe");
}

}  // namespace

SmreRunner::SmreRunner(std::int64_t width, std::int64_t height, const SmreRunOptions& options,
                       const SmreEngineFactory& make_engine)
    : options_(options) {
  validate(width, height, options.settings);
  padding_ = smre_padding(width, height, options.settings.psf_sigma);
  WeightOptions w;
  w.method = options.settings.weights;
  w.coverage = options.settings.coverage;
  w.samples = options.settings.weight_samples;
  w.seed = options.weight_seed;
  w.use_cache = options.weight_cache;
  w.quiet = options.quiet;
  problem_ = make_smre_problem(padding_.padded_width, padding_.padded_height, options.settings, w);
  engine_ = make_engine(problem_, options.max_batch);
}

SmreRunner::~SmreRunner() = default;

std::vector<FrameOutcome> SmreRunner::run(std::span<float> frames, std::int64_t first_frame) {
  const std::int64_t n = padding_.width * padding_.height;
  const std::int64_t count = static_cast<std::int64_t>(frames.size()) / n;
  // Every frame of the chunk is checked before any is restored: a bad frame is
  // reported at once, not after minutes of work on the frames before it.
  for (std::int64_t f = 0; f < count; ++f)
    check_frame_values(frames.subspan(static_cast<std::size_t>(f * n), static_cast<std::size_t>(n)),
                       options_.source + " frame " + std::to_string(first_frame + f), options_.anscombe);
  std::vector<FrameOutcome> out;
  for (std::int64_t b = 0; b < count; b += engine_->capacity()) {
    const std::int64_t k = std::min(engine_->capacity(), count - b);
    auto part = run_batch(frames.subspan(static_cast<std::size_t>(b * n), static_cast<std::size_t>(k * n)), k,
                          first_frame + b);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

std::vector<FrameOutcome> SmreRunner::run_batch(std::span<float> frames, std::int64_t count,
                                                std::int64_t first_frame) {
  const SmreSettings& s = options_.settings;
  const std::int64_t n = padding_.width * padding_.height, pn = problem_.pixels();
  std::vector<FrameOutcome> outcome(static_cast<std::size_t>(count));
  std::vector<double> sigma(static_cast<std::size_t>(count));
  std::vector<float> padded(static_cast<std::size_t>(count * pn));
  for (std::int64_t f = 0; f < count; ++f) {
    auto frame = frames.subspan(static_cast<std::size_t>(f * n), static_cast<std::size_t>(n));
    const std::string where = options_.source + " frame " + std::to_string(first_frame + f);
    FrameOutcome& o = outcome[static_cast<std::size_t>(f)];
    o.frame = first_frame + f;
    if (options_.anscombe) {
      anscombe_forward(frame);
      o.noise_sigma = s.noise_sigma > 0 ? s.noise_sigma : 1.0;  // the transform makes the noise N(0, 1)
    } else if (s.noise_sigma > 0) {
      o.noise_sigma = s.noise_sigma;
    } else {
      o.noise_sigma = estimate_noise_sigma(frame, padding_.width, padding_.height);
      o.sigma_estimated = true;
      const auto [lo, hi] = std::minmax_element(frame.begin(), frame.end());
      if (!(o.noise_sigma > 1e-6 * std::max(1.0, static_cast<double>(*hi - *lo))))
        throw InputError(where, "looks noise-free (the noise estimate is " + std::to_string(o.noise_sigma) +
                                    "): give the noise sigma with --noise");
    }
    sigma[static_cast<std::size_t>(f)] = o.noise_sigma;
    pad_reflect(frame, padding_, std::span<float>(padded).subspan(static_cast<std::size_t>(f * pn),
                                                                 static_cast<std::size_t>(pn)));
  }

  engine_->start(padded, sigma);
  std::vector<std::uint8_t> active(static_cast<std::size_t>(count), 1);
  std::vector<FrameStats> stats(static_cast<std::size_t>(count));
  std::vector<float> eps, x_pad, x_crop;
  std::int64_t running = count;
  for (std::int64_t it = 1; it <= s.max_iterations && running > 0; ++it) {
    engine_->iterate(active, stats);
    const bool report_now = it % s.report_interval == 0;
    std::vector<std::int64_t> to_report;
    for (std::int64_t f = 0; f < count; ++f) {
      if (!active[static_cast<std::size_t>(f)]) continue;
      FrameOutcome& o = outcome[static_cast<std::size_t>(f)];
      o.iterations = it;
      o.last = stats[static_cast<std::size_t>(f)];
      // Relative to the frame's noise, as the Dykstra stop: scale-free (ADU or photons alike).
      const bool met = s.tolerance > 0 && o.last.step < s.tolerance * o.noise_sigma;
      const bool done = met || it == s.max_iterations;
      if (done) {
        o.converged = met;
        active[static_cast<std::size_t>(f)] = 0;
        --running;
      }
      if (report_now || done) to_report.push_back(f);
    }
    if (on_report && !to_report.empty()) {
      eps.resize(static_cast<std::size_t>(count * pn));
      engine_->read_eps(eps);
      for (std::int64_t f : to_report) {
        ReportLine line;
        line.frame = first_frame + f;
        line.iteration = it;
        line.stats = stats[static_cast<std::size_t>(f)];
        line.max_ratio = max_constraint_ratio(
            std::span<const float>(eps).subspan(static_cast<std::size_t>(f * pn), static_cast<std::size_t>(pn)),
            problem_.family, problem_.weights, sigma[static_cast<std::size_t>(f)]);
        on_report(line);
      }
    }
    if (on_control && report_now && outcome[0].iterations == it) {
      x_pad.resize(static_cast<std::size_t>(count * pn));
      x_crop.resize(static_cast<std::size_t>(n));
      engine_->read_x(x_pad);
      crop(std::span<const float>(x_pad).first(static_cast<std::size_t>(pn)), padding_, x_crop);
      if (options_.anscombe) anscombe_inverse(x_crop);
      on_control(first_frame, it, x_crop);
    }
  }

  engine_->read_x(padded);
  for (std::int64_t f = 0; f < count; ++f) {
    auto frame = frames.subspan(static_cast<std::size_t>(f * n), static_cast<std::size_t>(n));
    crop(std::span<const float>(padded).subspan(static_cast<std::size_t>(f * pn), static_cast<std::size_t>(pn)),
         padding_, frame);
    if (options_.anscombe) anscombe_inverse(frame);
  }
  return outcome;
}

}  // namespace nanoscopy
