// eSRRF runs: time points of a stack streamed through an EsrrfEngine, the
// temporal analysis and macro-pixel correction of each time point, and the
// quality measures (SQUIRREL error map, QnR of a parameter sweep).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/core/frame_range.hpp"
#include "nanoscopy/sofi/esrrf_engine.hpp"

namespace nanoscopy {

class StackReader;

// Time points of N frames starting every S frames in [first, last): starts
// first + k S while first + k S + N <= last, then, where frames remain after the
// last full window, one shorter window from the next start to `last` (with
// S = N this is NanoPyx's rule: the remainder is the last time point). N = 0: one
// time point of every frame; S = 0: S = N.
std::vector<EsrrfSlot> esrrf_time_points(std::int64_t first, std::int64_t last, std::int64_t frames_per_timepoint,
                                         std::int64_t step);

// One finished time point, in the order of the list given to run_esrrf.
struct EsrrfTimePoint {
  std::size_t index = 0;
  std::int64_t frames = 0;
  std::vector<float> image;  // out_width x out_height (temporal analysis, macro-pixel corrected as set)
  std::vector<float> mean;   // width x height mean of its frames (only when asked: want_mean)
  EsrrfSlotSums sums;        // the engine's sums (only when asked: want_sums; esrrf_partial.hpp)
};

struct EsrrfRunInput {
  StackReader* reader = nullptr;
  int read_threads = 0;
  std::int64_t chunk_frames = 64;  // frames per chunk (also bounded by the engine's capacity)
  std::vector<EsrrfSlot> time_points;  // any order of begins; finished in the order of their ends
  bool want_mean = false;
  bool want_sums = false;
  bool macro_pixel_correction = true;  // applied to each image (the sweep's odd/even images skip it)
  bool quiet = false;
  std::string progress_label = "sofi esrrf";
};

// The slots an engine needs for these time points read in chunks of `chunk` frames.
int esrrf_slots_needed(const std::vector<EsrrfSlot>& time_points, std::int64_t chunk);

// Streams the frames [min begin, max end) once; `emit` gets each time point as
// soon as its frames are all added. The engine must have esrrf_slots_needed() slots.
void run_esrrf(EsrrfEngine& engine, const EsrrfSettings& settings, const EsrrfRunInput& input,
               const std::function<void(EsrrfTimePoint&)>& emit);

// The time point's image from its sums over n frames (temporal analysis only).
std::vector<float> esrrf_finish(const EsrrfSlotSums& sums, std::int64_t n, esrrf_math::Temporal kind);

// NanoJ/NanoPyx macro-pixel correction in place: every pixel divided by the mean
// of its phase (x mod M, y mod M) over the image, then (our addition, keeping the
// image's units) multiplied by the mean of those phase means, the image mean.
void macro_pixel_correct(std::vector<float>& image, std::int64_t out_width, std::int64_t out_height, int m);

// ---------------------------------------------------------------- SQUIRREL
// scipy.ndimage.gaussian_filter: separable, truncated at int(4 sigma + 0.5), edges
// mirrored (d c b a | a b c d); sigma <= 0 copies.
std::vector<float> gaussian_blur(std::span<const float> image, std::int64_t width, std::int64_t height, double sigma,
                                 int threads = 1);

struct ErrorMapResult {
  double sigma = 0;  // the RSF's Gaussian sigma, super-resolved pixels
  double alpha = 0, beta = 0;
  double rse = 0;  // root-squared error (the reference's units)
  double rsp = 0;  // resolution-scaled Pearson correlation
  bool sigma_at_bound = false;  // the fit ran to 4 / 2.35482 * M (no minimum found)
  std::vector<float> map;       // |alpha (sr * RSF) + beta - reference|, on the super-resolved grid
};

// The diffraction-limited reference (width x height) magnified by Catmull-Rom to
// the super-resolved grid (M x), the RSF sigma fitted by Brent's method on
// [0, 4 / 2.35482 M] minimizing the RSE, alpha and beta by linear regression.
ErrorMapResult squirrel_error_map(std::span<const float> reference, std::int64_t width, std::int64_t height,
                                  std::span<const float> super_resolved, int magnification, int threads = 1);

// ---------------------------------------------------------------- QnR
// NanoPyx's logistic mapping across a sweep: the smallest value to 0.925, the
// largest to 0.075 (NaN stays NaN; all equal: 0.5).
std::vector<double> logistic_resolution(std::span<const double> resolutions);
// QnR = 2 RSP nFRC / (RSP + nFRC) per pair.
std::vector<double> qnr_scores(std::span<const double> rsp, std::span<const double> resolutions);

// One (radius, sensitivity) pair of a sweep over frames [first, last): the
// reconstruction of all frames scored by SQUIRREL against their mean (RSP; no
// macro-pixel correction, as NanoPyx's sweep), the FIRE resolution (FRC at 1/7)
// of the even- against the odd-frame reconstruction, and QnR across the sweep.
struct EsrrfSweepRow {
  double radius = 0, sensitivity = 0;
  double rsp = 0, rse = 0, sigma = 0;
  double resolution_px = 0;  // super-resolved pixels; NaN where the FRC never rises above 1/7
  double qnr = 0;
};
using EsrrfEngineFactory =
    std::function<std::unique_ptr<EsrrfEngine>(const EsrrfGeometry& geometry, const EsrrfSettings& settings)>;
struct EsrrfSweepInput {
  StackReader* reader = nullptr;
  std::int64_t first = 0, last = 0;
  std::vector<double> radii, sensitivities;
  EsrrfEngineFactory make_engine;
  std::int64_t chunk_frames = 64;
  int read_threads = 0;
  int threads = 1;  // host threads of the error map's blurs
  // Each pair's row and whole-range image (before QnR is known), e.g. to judge it against a truth.
  std::function<void(const EsrrfSweepRow&, const std::vector<float>& image)> each;
};
// Rows sensitivity-major (for each sensitivity, every radius); `best` gets the index of the highest QnR.
std::vector<EsrrfSweepRow> esrrf_sweep(const EsrrfSettings& base, const EsrrfSweepInput& input, std::size_t* best);

}  // namespace nanoscopy
