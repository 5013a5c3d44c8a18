// Plain value types of spot detection, shared by the CPU library and the CUDA
// kernels (no std library containers, no CUDA headers: nvcc and g++ both read it).
#pragma once

#include <cstdint>

namespace nanoscopy {

// How fit2d finds spots in a frame (detect.hpp describes the algorithm).
struct DetectSettings {
  int box = 7;              // odd ROI edge in px, 3..31: the fitted ROI and the local-maximum window
  double threshold = 5.0;   // a candidate's filtered peak must exceed threshold × the frame's robust noise sd
  double dog_sigma1 = 1.0;  // px: the difference of Gaussians G(σ1) − G(σ2), 0 < σ1 < σ2 ≤ 10
  double dog_sigma2 = 2.5;
  // px: skip maxima closer than this to the frame edge; 0 keeps every maximum (the
  // ROI of a maximum near the edge is shifted inside the frame: roi_origin).
  int border = 0;
  // Picasso Localize's identification threshold, in its units (camera counts = the input's pixel
  // values): a candidate whose net gradient (Candidate::net_gradient) does not exceed it is no
  // candidate (Picasso keeps ng > Min. Net Gradient).
  // 0: off (our detection threshold alone decides).
  double min_net_gradient = 0;
};

// A detected spot: the pixel of a local maximum of the filtered frame.
struct Candidate {
  std::int64_t frame = 0;  // absolute 0-based frame index
  std::int32_t x = 0;      // column of the maximum
  std::int32_t y = 0;      // row of the maximum
  float score = 0;         // filtered peak / the frame's noise sd (+inf when that sd is 0: noise-free data)
  float net_gradient = 0;  // Picasso's net gradient over the box around (x, y), in input pixel units
};

// Top-left pixel of a box × box ROI inside the frame: frame (x, y) = origin + ROI (x, y).
struct RoiOrigin {
  std::int32_t x0 = 0;
  std::int32_t y0 = 0;
};

// Limits of DetectSettings (validate_detect_settings in detect.hpp checks them).
inline constexpr int kMinDetectBox = 3;
inline constexpr int kMaxDetectBox = 31;
inline constexpr double kMaxDogSigma = 10.0;
inline constexpr int kMaxDogRadius = 30;  // ceil(3·max_dog_sigma)

}  // namespace nanoscopy
