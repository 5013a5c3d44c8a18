// The super-resolution picture of localizations (fit2d render): a histogram
// (counts per rendered pixel) or a Gaussian rendering (each localization a unit
// of mass spread as a Gaussian of σ = its precision, at least half a rendered
// pixel), on the camera frame's field at `pixel_nm` per rendered pixel.
// Coordinates as frc's rendering (frc/loc_render.hpp): camera px with pixel
// centres at integers; pixel i of R nm covers [i R, (i + 1) R) nm from the
// frame's corner.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nanoscopy/loc/localization.hpp"

namespace nanoscopy {

enum class RenderMode { histogram, gaussian };

struct RenderSettings {
  double camera_px_nm = 0;  // the localizations' pixel size (> 0)
  double pixel_nm = 10;     // rendered pixel (> 0)
  RenderMode mode = RenderMode::gaussian;
  std::int64_t field_width_px = 0, field_height_px = 0;  // the camera frame (> 0)
};

struct RenderedImage {
  std::int64_t width = 0, height = 0;  // rendered pixels
  std::vector<float> pixels;           // row-major
  std::int64_t rendered = 0;           // localizations inside the field
};

// UsageError for a pixel size ≤ 0 or an image of more than 2^31 pixels.
RenderedImage render_localizations(std::span<const Localization> locs, const RenderSettings& settings);

// A copy for a PNG preview: clipped to the 99.5th percentile of the non-zero
// pixels (a sparse picture's structure, not its brightest spot), with a scale
// bar burned in at the bottom right (1, 2 or 5 × 10ⁿ nm, about a fifth of the
// width); `bar_nm` gets its length.
std::vector<float> preview_with_scale_bar(const RenderedImage& image, double pixel_nm, double& bar_nm);

}  // namespace nanoscopy
