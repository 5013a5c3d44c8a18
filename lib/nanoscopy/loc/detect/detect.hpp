// fit2d's spot detection: candidates (local maxima of a band-passed frame) and
// the box × box ROIs around them that go to the fitter.
//
// Algorithm, per frame (the CPU reference here; the CUDA backend in
// kernels/loc/ does the same operations in the same order, detect_math.hpp):
//  1. Subtract the frame's smallest finite pixel (a constant frame then filters
//     to exactly 0 and yields nothing).
//  2. Difference of Gaussians D = G(σ1)∗I − G(σ2)∗I, each Gaussian separable,
//     truncated at ⌈3σ⌉ px and normalized to sum 1, rows then columns,
//     half-sample symmetric reflection at the edges, float32.
//     (Chosen over ThunderSTORM's B-spline wavelet: two parameters with a plain
//     meaning — σ1 ≈ the PSF's σ smooths the noise, σ2 removes the background.)
//     D is then multiplied per pixel by dog_noise_normalization: near the edges
//     the reflected kernel averages fewer independent pixels (white noise comes
//     out ~1.4× stronger in a corner), which would breed false candidates there.
//     After it, white noise has the same sd everywhere; away from the edges the
//     factor is 1 and D is unchanged.
//  3. Noise sd = 1.4826 · MAD of the finite values of D (lower medians, exact).
//  4. Candidates: pixels with D > threshold · sd that are the maximum of the box ×
//     box window around them (ties to the first in raster order: candidates are
//     more than box/2 apart), with every value of D in that window and every raw
//     pixel of the ROI finite (NaN pixels silence their neighbourhood, never
//     crash), at least `border` px from the edge.
// Candidates are sorted by (frame, y, x). A maximum near the edge keeps its ROI,
// shifted inside the frame (roi_origin).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/loc/detect/detect_types.hpp"

namespace nanoscopy {

// The one rule for the detection box (fit2d's parameters, the engines and
// cut_rois all come here): UsageError naming `where` unless box is odd in 3..31.
void validate_detect_box(int box, const std::string& where = "box");

// UsageError naming the setting for box not odd in 3..31 (named `box_where`:
// the caller may name the parameter's source), threshold not finite and > 0,
// σ not 0 < σ1 < σ2 ≤ 10, border < 0.
void validate_detect_settings(const DetectSettings& settings, const std::string& box_where = "box");

// Normalized Gaussian weights, 2·⌈3σ⌉ + 1 taps, centre in the middle.
std::vector<float> gaussian_weights(double sigma);

// InputError (no `where`: the caller names the file) when a width × height
// frame cannot hold a box × box ROI; UsageError for non-positive sizes.
void check_frame_size(std::int64_t width, std::int64_t height, int box);

// Per pixel (width·height values, row-major): sd of the DoG of unit white noise
// far from the edges / its sd at that pixel (reflection folds the kernels).
// Computed in double, rounded to float once: the CUDA detector uploads this map.
std::vector<float> dog_noise_normalization(int width, int height, const DetectSettings& settings);

// Steps 1–2 on one frame (row-major, width·height values): writes D to `out`
// (width·height values). For tests and cross-checks; detect_cpu is the fast path.
void dog_filter_frame(const float* frame, int width, int height, const DetectSettings& settings, float* out);

// Step 3: 1.4826 · MAD of the finite values; NaN when none is finite.
float robust_noise_sd(const float* values, std::int64_t count);

// Detects spots in `count` frames (T, Y, X), float32, frame `first_frame` first.
// `out` is cleared and filled in (frame, y, x) order. Threads over frames
// (threads ≤ 0: all hardware threads).
void detect_cpu(const float* frames, std::int64_t first_frame, std::int64_t count, int width, int height,
                const DetectSettings& settings, int threads, std::vector<Candidate>& out);

// The number of threads detect_cpu runs on for `threads` (≤ 0: all hardware threads).
int detect_thread_count(int threads);

// box × box ROIs, ROI after ROI, each row-major (x fastest), of the candidates
// (whose frames lie in [first_frame, first_frame + count)); frame coordinates =
// origins[k] + ROI coordinates. The pixel type is kept (uint16 halves the
// fitter's transfers). Instantiated for float and std::uint16_t.
template <typename Pixel>
struct RoiCut {
  int box = 0;
  std::vector<Pixel> pixels;       // candidates.size() · box · box
  std::vector<RoiOrigin> origins;  // one per candidate
};
template <typename Pixel>
RoiCut<Pixel> cut_rois(const Pixel* frames, std::int64_t first_frame, std::int64_t count, int width, int height,
                       std::span<const Candidate> candidates, int box);

}  // namespace nanoscopy
