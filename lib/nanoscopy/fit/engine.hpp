// fit2d's engine: fits of 2D Gaussian spots h = α·f(x̄, ȳ, σ) + β. The default
// estimator is implicit-amplitude least squares (Leutenegger & Weber): α and β
// in closed form at every evaluation, Levenberg–Marquardt on (x̄, ȳ, σ) only;
// wlsq and mle (Poisson) fit (x̄, ȳ, σ, α, β) on photons (estimators/mle.hpp).
// Engines (CPU, CUDA) share the math written once for host and device: the
// models (models/*.hpp, listed in model_list.hpp), the estimators
// (estimators/lsq.hpp, estimators/mle.hpp), the LM driver (lm.hpp) and the initial estimate.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "nanoscopy/fit/fit_types.hpp"
#include "nanoscopy/io/pixel_type.hpp"

namespace nanoscopy {

std::string to_string(FitStatus status);  // "converged_min_delta", ...
std::string to_string(ShapeModel model);  // "sampled", "integrated"
std::string to_string(Estimator estimator);  // "lsq", "wlsq", "mle"

// A batch of equally sized ROIs, not owned. `pixels` holds count·width·height
// values of `type` (PixelType::u16 or PixelType::f32), ROI after ROI, each ROI
// row-major (x fastest). width·height ≤ max_roi_pixels; any shape, including
// one pixel wide. `initial` is null (the paper's estimate is computed per ROI)
// or points to `count` guesses. `variance_shift` is null or holds, in the
// layout of `pixels`, each pixel's sCMOS variance shift var/gain² in photons²
// (core/camera_maps.hpp: CameraMaps::to_photons); wlsq and mle add it to data
// and model, lsq ignores it.
struct RoiBatch {
  const void* pixels = nullptr;
  PixelType type = PixelType::u16;
  std::int64_t count = 0;
  int width = 0;
  int height = 0;
  const SpotGuess* initial = nullptr;
  const float* variance_shift = nullptr;

  std::int64_t roi_pixels() const { return static_cast<std::int64_t>(width) * height; }
  // UsageError("fit", ...) for a bad shape, type or a null pointer with count > 0.
  void validate() const;
};

class FitEngine {
 public:
  virtual ~FitEngine() = default;
  // Fits every ROI of the batch; out.size() must equal batch.count (UsageError
  // otherwise). Results are independent of batch size, order and thread count.
  virtual void fit(const RoiBatch& batch, std::span<FitResult> out) = 0;
  virtual std::string name() const = 0;  // "cpu (2 threads)", "cuda:0"
};

// The CPU reference engine on `threads` threads (≤ 0: all hardware threads).
std::unique_ptr<FitEngine> make_cpu_fit_engine(const FitSettings& settings, int threads);

}  // namespace nanoscopy
