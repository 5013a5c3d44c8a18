// bench sofi's comparison with the simulator's truth (issue 19): what an ideal
// image of each kind would be, and how far an image is from it.
//
// The truth of an image of "order" n on a grid u times finer than the camera's
// is the emitter map (the simulator's emitters, each a point at its frame-0
// position) convolved with the PSF that image kind ideally has:
//   n = 1 (the mean image): weight ε ρ, the camera PSF σ;
//   n >= 2 (SOFI of order n and what is made from it): weight ε^n w_n(ρ), the
//     PSF σ / √n, where ε is the emitter's brightness, ρ its on-fraction over
//     the movie and w_n the blinking's cumulant factor (notes/reference.md 5:
//     w2 = ρ(1−ρ), w3 = ρ(1−ρ)(1−2ρ), w4 = ρ(1−ρ)(1−6ρ+6ρ²)). This is the
//     expected SOFI_n image with the PSF's n-th power taken as a Gaussian of
//     σ/√n; each Gaussian is integrated over the output pixel.
// The scores: the normalized error ‖a·x + b − t‖ / ‖t‖ with the best scale a
// and offset b (least squares: images differ in units and the mean image
// carries the background), and the FRC of the image against the truth with the
// threshold 0.5, which for a comparison with a noise-free reference corresponds
// to 1/7 between two noisy halves (Rosenthal & Henderson 2003).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/sim/blinking.hpp"

namespace nanoscopy {

// The weight of an emitter in the truth: `cumulant` as above; `linear` for balanced SOFI, whose image is
// brightness to the first power (bSOFI's linearization): weight ε, with the order-n PSF σ/√n.
enum class TruthWeight { cumulant, linear };

// width x height is the output grid; upsample u its size over the camera grid's.
// UsageError for an order outside 1..4 or a non-positive σ.
std::vector<float> sofi_truth_image(std::span<const BlinkingEmitter> emitters, std::int64_t width,
                                    std::int64_t height, int upsample, double psf_sigma_px, int order,
                                    TruthWeight weighting = TruthWeight::cumulant);

struct TruthScore {
  double scale = 0, offset = 0;  // a, b
  double normalized_error = 0;   // ‖a·x + b − t‖ / ‖t‖
  std::string frc_status;        // "crossed", "not reached", "never above"
  double frc_resolution_px = 0;  // of the image against the truth, threshold 0.5 (2: Nyquist; 0: never above)
};

TruthScore score_against_truth(std::span<const float> image, std::span<const float> truth, std::int64_t width,
                               std::int64_t height);

}  // namespace nanoscopy
