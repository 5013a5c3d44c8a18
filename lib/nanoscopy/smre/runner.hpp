// Restores frames with SMRE: validates the input, estimates or takes the noise
// level, applies the Anscombe transform if asked, pads by reflection, runs the
// engine's ADMM iterations in batches until every frame meets the tolerance
// (or the iteration cap), and crops and back-transforms the result. Memory is
// one batch of frames, whatever the stack length.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/smre/engine.hpp"
#include "nanoscopy/smre/psf.hpp"

namespace nanoscopy {

struct SmreRunOptions {
  SmreSettings settings;
  bool anscombe = false;           // Poisson data: 2 sqrt(x + 3/8) forward, Makitalo-Foi inverse back
  std::uint64_t weight_seed = 20140101;
  bool weight_cache = true;
  std::int64_t max_batch = 64;     // frames per GPU batch at most
  std::string source = "image";    // the input's name, for error messages
  bool quiet = false;
};

struct FrameOutcome {
  std::int64_t frame = 0;       // absolute index
  std::int64_t iterations = 0;
  bool converged = false;       // met the tolerance before the cap
  FrameStats last;
  double noise_sigma = 0;       // used (in the Anscombe domain with --anscombe)
  bool sigma_estimated = false;
};

struct ReportLine {
  std::int64_t frame = 0;
  std::int64_t iteration = 0;
  FrameStats stats;
  double max_ratio = 0;  // max_s c_s sum eps^2 / sigma^2 (<= 1: every constraint met)
};

// Builds the engine for the runner's padded problem. The caller picks the device
// (the tools go through the backend registry, smre_engine_factory in smre/cli.hpp),
// so the runner never reaches up into backend/; the problem is only known once the
// runner has padded the frame, hence a factory rather than an engine.
using SmreEngineFactory =
    std::function<std::unique_ptr<SmreEngine>(const SmreProblem& problem, std::int64_t max_batch)>;

class SmreRunner {
 public:
  // Validates the settings against a width x height frame (UsageError: sigma <= 0,
  // a PSF wider than the image, MRdepth larger than the image), computes the
  // weights (Monte Carlo ones cached on disk) and builds the engine with `make_engine`.
  SmreRunner(std::int64_t width, std::int64_t height, const SmreRunOptions& options,
             const SmreEngineFactory& make_engine);
  ~SmreRunner();

  const SmreProblem& problem() const { return problem_; }
  const Padding& padding() const { return padding_; }
  std::string engine_name() const { return engine_->name(); }
  std::int64_t batch_frames() const { return engine_->capacity(); }

  // Called every report interval for every frame still running, and at a frame's last iteration.
  std::function<void(const ReportLine&)> on_report;
  // Called every report interval with the current estimate of the batch's first frame (cropped, back-transformed).
  std::function<void(std::int64_t frame, std::int64_t iteration, std::span<const float> x)> on_control;

  // Restores count frames of width x height (T, Y, X) in place; `first_frame`
  // numbers them for reports and errors. InputError for NaN/Inf pixels,
  // negative values with Anscombe, or a frame whose noise cannot be estimated.
  std::vector<FrameOutcome> run(std::span<float> frames, std::int64_t first_frame);

 private:
  std::vector<FrameOutcome> run_batch(std::span<float> frames, std::int64_t count, std::int64_t first_frame);

  SmreRunOptions options_;
  Padding padding_;
  SmreProblem problem_;
  std::unique_ptr<SmreEngine> engine_;
};

// The problem for a padded frame (exposed for tests and bench).
SmreProblem make_smre_problem(std::int64_t padded_width, std::int64_t padded_height, const SmreSettings& settings,
                              const WeightOptions& weights);
// The padding SMRE uses: a margin of max(3 PSF radii, 16) px, then a multiple of
// 32. The zero boundary of A makes the estimate ring near the padded frame's
// edge; 3 radii keep that out of the image (1 radius cost 0.05 in |x-x*|/|I-x*|
// on camera.png), and the ICD passes leave up to 16 px of the border out.
Padding smre_padding(std::int64_t width, std::int64_t height, double psf_sigma);

}  // namespace nanoscopy
