// fit2d's engine: implicit-amplitude least-squares fits of 2D Gaussian spots
// (Leutenegger & Weber). The model h = α·f(x̄, ȳ, σ) + β takes α and β in closed
// form at every evaluation; Levenberg–Marquardt runs on (x̄, ȳ, σ) only.
// Engines (CPU, CUDA) share the math written once for host and device: the
// models (models/*.hpp, listed in model_list.hpp), the estimator
// (estimators/lsq.hpp), the LM driver (lm.hpp) and the initial estimate.
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

// A batch of equally sized ROIs, not owned. `pixels` holds count·width·height
// values of `type` (PixelType::u16 or PixelType::f32), ROI after ROI, each ROI
// row-major (x fastest). width·height ≤ max_roi_pixels; any shape, including
// one pixel wide. `initial` is null (the paper's estimate is computed per ROI)
// or points to `count` guesses.
struct RoiBatch {
  const void* pixels = nullptr;
  PixelType type = PixelType::u16;
  std::int64_t count = 0;
  int width = 0;
  int height = 0;
  const SpotGuess* initial = nullptr;

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
