// fit2d --roi FILE: fixed ROIs around fiducial markers, fitted in every frame
// for closed-loop stage control. One fit call per frame (all ROIs in one
// batch), each ROI warm-started from its own last converged fit; the frame's
// drift is the mean displacement of the converged markers from their
// references, streamed as one line per frame.
//
// ROI file (text; '#' starts a comment; blank lines are ignored; fields are
// separated by commas, tabs or spaces; a first line of labels such as
// "x,y" or "x0,y0,w,h" is skipped). Every line has one of two forms, the same
// form throughout the file:
//   x y          a centre in px (pixel centre at integer, as in fit2d's
//                localizations); the ROI is size × size pixels around it, its
//                top-left pixel round(x − (size − 1)/2), round(y − (size − 1)/2)
//   x0 y0 w h    the top-left pixel and the size in pixels (whole numbers);
//                every box has the size of the first (one fit batch)
// Every ROI must lie inside the frame and hold at most max_roi_pixels pixels.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/core/frame_range.hpp"
#include "nanoscopy/fit/engine.hpp"
#include "nanoscopy/io/stack_reader.hpp"

namespace nanoscopy {

struct Roi {
  std::int64_t x0 = 0, y0 = 0;  // top-left pixel in the frame
  int line = 0;                 // line of the ROI file it came from (0: not from a file)
};

// ROIs of one size, inside a frame of frame_width × frame_height pixels.
struct MarkerRois {
  std::vector<Roi> rois;
  int width = 0, height = 0;  // px, every ROI
};

// Parses an ROI file (format above); `size` is the edge of the ROIs given by a
// centre. InputError naming "file:line" for a malformed line, mixed forms,
// boxes of different sizes or a ROI outside the frame (the message gives the
// frame size); InputError naming the file when it cannot be read or holds no ROI.
MarkerRois parse_roi_file(const std::string& path, std::int64_t frame_width, std::int64_t frame_height, int size = 9);
// The same on text already read; `where` stands for the file name in messages.
MarkerRois parse_rois(const std::string& text, const std::string& where, std::int64_t frame_width,
                  std::int64_t frame_height, int size = 9);

enum class RoiFrameStatus {
  ok,       // every ROI converged
  partial,  // some ROIs converged: the drift comes from those
  lost,     // no ROI converged: no drift (NaN)
};
std::string to_string(RoiFrameStatus status);  // "ok", "partial", "lost"

struct RoiFrameResult {
  std::int64_t frame = 0;
  double dx_nm = 0, dy_nm = 0;  // drift of the frame (NaN when lost)
  int markers = 0;              // converged fits that entered the mean (in the first frame: those
                                // that took their reference; later, not those that take it now)
  RoiFrameStatus status = RoiFrameStatus::lost;
};

// "frame dx_nm dy_nm markers status", nm with 3 decimals, "nan" when lost; no newline.
std::string format_roi_line(const RoiFrameResult& result);

class RoiTracker {
 public:
  // `backend` is borrowed and must outlive the tracker. UsageError for an empty
  // set, a ROI outside the frame or a pixel size ≤ 0.
  RoiTracker(MarkerRois rois, FitEngine& backend, double pixel_size_nm, std::int64_t frame_width,
             std::int64_t frame_height);

  // Fits every ROI in one frame (frame_width × frame_height pixels, row-major)
  // and returns its drift. A marker's reference is its position in the first
  // frame where its fit converged, less the drift the other markers measured in
  // that frame, so a marker that joins late does not shift the mean.
  // UsageError when the pixel count does not match the frame.
  RoiFrameResult process(std::int64_t frame, std::span<const float> pixels);
  RoiFrameResult process(std::int64_t frame, std::span<const std::uint16_t> pixels);

  // The last frame's fits, one per ROI, in ROI coordinates.
  std::span<const FitResult> fits() const { return fits_; }
  const MarkerRois& rois() const { return set_; }
  std::int64_t frame_width() const { return frame_width_; }
  std::int64_t frame_height() const { return frame_height_; }

 private:
  template <typename Pixel>
  RoiFrameResult run(std::int64_t frame, std::span<const Pixel> pixels, std::vector<Pixel>& cut, PixelType type);

  MarkerRois set_;
  FitEngine& backend_;
  double pixel_size_nm_;
  std::int64_t frame_width_, frame_height_;
  std::vector<float> cut_f32_;
  std::vector<std::uint16_t> cut_u16_;
  std::vector<SpotGuess> guesses_;
  std::vector<char> warm_;  // guess from a converged fit
  std::vector<FitResult> fits_;
  std::vector<double> ref_x_, ref_y_;  // frame px
  std::vector<char> has_ref_;
};

// Runs `tracker` over frames [range) of a stack, one frame at a time (uint16
// stacks as they are, other types as float32), calling `on_frame` after each
// frame in order — e.g. to print format_roi_line and flush for a stage
// controller. The stack's frame size must be the tracker's (UsageError).
void track_rois(StackReader& reader, FrameRange::Resolved range, RoiTracker& tracker,
                const std::function<void(const RoiFrameResult&)>& on_frame);

// Simulated frames of fixed markers under a drift, for tests and bench: a
// pixel-integrated Gaussian PSF of `photons` per marker, uniform background,
// Poisson noise, then baseline + electrons/sensitivity as uint16 ADU.
struct MarkerFramesSettings {
  std::int64_t frames = 100;
  std::int64_t width = 64, height = 64;
  std::vector<std::array<double, 2>> markers;  // px at zero drift
  std::vector<double> drift_x, drift_y;        // px per frame (empty: none); marker at (x + drift_x[t], y + drift_y[t])
  double photons = 5000;
  double psf_sigma = 1.3;    // px
  double background = 10;    // photons per pixel
  double baseline = 100;     // ADU
  double sensitivity = 1.0;  // e- per ADU
  std::uint64_t seed = 1;
};
// frames × height × width values, (T, Y, X).
std::vector<std::uint16_t> simulate_marker_frames(const MarkerFramesSettings& settings);

struct LatencyStats {
  std::int64_t frames = 0;  // timed frames
  double p50_us = 0, p99_us = 0, mean_us = 0, max_us = 0;
  double markers_mean = 0;  // converged markers per frame
};

// Per-frame latency of RoiTracker::process (cut the ROIs from a uint16 frame,
// one fit call, the mean) over `frames` frames after 100 untimed ones: `markers`
// markers in ROIs of roi_size × roi_size on a grid in a frame just large
// enough for them, drifting on a circle of 1 px (a tenth of a pixel per frame),
// frames cycled from 64 simulated ones. Times in µs (steady_clock).
LatencyStats measure_roi_latency(FitEngine& backend, int markers = 10, int roi_size = 9, std::int64_t frames = 10000,
                                 std::uint64_t seed = 1);

}  // namespace nanoscopy
