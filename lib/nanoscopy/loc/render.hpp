// The super-resolution picture of localizations (fit2d render): a histogram
// (counts per rendered pixel) or a Gaussian rendering (each localization a unit
// of mass spread as a Gaussian of σ = its precision, at least half a rendered
// pixel, integrated over each pixel), on the camera frame's field at `pixel_nm`
// per rendered pixel. Coordinates as frc's rendering (frc/loc_render.hpp):
// camera px with pixel centres at integers; pixel i of R nm covers
// [i R, (i + 1) R) nm from the frame's corner (RenderRegistration::camera, the default),
// or from camera coordinate 0 as Picasso's render places it (RenderRegistration::picasso:
// half a camera pixel to the right and down of the camera frame).
//
// A Renderer accumulates localizations chunk by chunk on a render engine (CPU
// or CUDA, loc/render/engine.hpp), so a file larger than memory renders.
//
// The z colour (3D localizations): the engine also sums mass · z per pixel; the
// picture is then RGB: the hue of a pixel is its mean z on a perceptual colour
// map (viridis: purple low, yellow high) over a z range, its brightness the
// density, clipped as the preview at the 99.5th percentile of the non-zero pixels.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "nanoscopy/loc/localization.hpp"
#include "nanoscopy/loc/render/engine.hpp"

namespace nanoscopy {

// Where the picture's corner lies on the localizations' coordinates (camera pixels, pixel i's
// centre at x = i): `camera` at −0.5, the camera frame's own corner, so that the picture overlays
// the movie; `picasso` at 0, as Picasso's render (render.py: rendered pixel k covers
// [k/o, (k+1)/o)), so that ours overlays Picasso's. A localization at x lands o/2 rendered
// pixels further right (and down) in `camera` than in `picasso` (o = camera pixel / rendered pixel).
enum class RenderRegistration { camera, picasso };

// The picture's corner in camera pixels (−0.5 or 0) and the name of a registration.
double render_origin_px(RenderRegistration registration);
const char* render_registration_name(RenderRegistration registration);

struct RenderSettings {
  double camera_px_nm = 0;  // the localizations' pixel size (> 0)
  double pixel_nm = 10;     // rendered pixel (> 0)
  RenderMode mode = RenderMode::gaussian;
  std::int64_t field_width_px = 0, field_height_px = 0;  // the camera frame (> 0)
  bool color_z = false;  // also sum mass · z (the z colour)
  RenderRegistration registration = RenderRegistration::camera;
};

struct RenderedImage {
  std::int64_t width = 0, height = 0;  // rendered pixels
  std::vector<float> pixels;           // row-major: the density
  std::vector<float> z_sum;            // color_z: Σ mass · z (nm) per pixel, else empty
  std::int64_t rendered = 0;           // localizations inside the field
  double z_min = 0, z_max = 0;         // of the rendered localizations (color_z)
};

// The engine's geometry for `settings`; UsageError for a pixel size ≤ 0 or an
// image of more than 2^31 pixels.
RenderGeometry render_geometry(const RenderSettings& settings);

class Renderer {
 public:
  // `engine` made for render_geometry(settings).
  Renderer(const RenderSettings& settings, std::unique_ptr<RenderEngine> engine);
  // Adds the localizations inside the field (in chunks; any number of calls).
  void add(std::span<const Localization> locs);
  // The picture of everything added.
  RenderedImage finish();
  const RenderEngine& engine() const { return *engine_; }

 private:
  RenderSettings settings_;
  std::unique_ptr<RenderEngine> engine_;
  std::int64_t rendered_ = 0;
  double z_min_, z_max_;
};

// One-shot on the CPU engine.
RenderedImage render_localizations(std::span<const Localization> locs, const RenderSettings& settings);

// A copy for a PNG preview: clipped to the 99.5th percentile of the non-zero
// pixels (a sparse picture's structure, not its brightest spot), with a scale
// bar burned in at the bottom right (1, 2 or 5 × 10ⁿ nm, about a fifth of the
// width); `bar_nm` gets its length.
std::vector<float> preview_with_scale_bar(const RenderedImage& image, double pixel_nm, double& bar_nm);

// The z colour: red, green, blue planes (each width * height, values in [0, 1]). Not io/plot_png.hpp's
// RgbImage (8-bit, interleaved): one name for two types in one program breaks the one-definition rule.
struct RgbPlanes {
  std::int64_t width = 0, height = 0;
  std::vector<float> red, green, blue;
  double z_low = 0, z_high = 0;  // nm: the colour map's ends
};

// Viridis at t in [0, 1] (clamped): linear between its nine anchor colours.
void viridis(double t, float& r, float& g, float& b);

// The RGB picture of `image` (rendered with color_z). The z range: z_low < z_high
// as given, else the 1st to 99th percentile of the pixels' mean z (non-empty pixels).
RgbPlanes color_by_z(const RenderedImage& image, double z_low = 0, double z_high = 0);

// The scale bar of preview_with_scale_bar burned into `rgb` in white; `bar_nm` gets its length.
void burn_scale_bar(RgbPlanes& rgb, double pixel_nm, double& bar_nm);

}  // namespace nanoscopy
