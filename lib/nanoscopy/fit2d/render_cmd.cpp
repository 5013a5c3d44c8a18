#include "nanoscopy/fit2d/render_cmd.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <ostream>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/config.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/io/image_png.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/loc/render.hpp"

namespace nanoscopy {
namespace {

// Rows per chunk: 2^20 localizations are about 140 MB in memory.
constexpr std::size_t kChunkRows = std::size_t{1} << 20;

struct ZRange {
  double low = 0, high = 0;  // low < high, or both 0 (automatic)
};

ZRange parse_color_range(const std::string& text) {
  ZRange r;
  if (text.empty()) return r;
  const auto colon = text.find(':');
  const auto number = [&](std::string_view part, double& v) {
    const auto res = std::from_chars(part.data(), part.data() + part.size(), v);
    return res.ec == std::errc() && res.ptr == part.data() + part.size() && std::isfinite(v);
  };
  const std::string_view all(text);
  if (colon == std::string::npos || !number(all.substr(0, colon), r.low) || !number(all.substr(colon + 1), r.high) ||
      !(r.low < r.high))
    throw UsageError("--color-range", "'" + text + "': LOW:HIGH in nm with LOW < HIGH (e.g. -400:400)");
  return r;
}

}  // namespace

RenderSettings render_step_settings(const Params& p) {
  RenderSettings s;
  s.pixel_nm = p.get_real("Render/pixel");
  s.mode = p.get_string("Render/mode") == "histogram" ? RenderMode::histogram : RenderMode::gaussian;
  s.registration =
      p.get_string("Render/registration") == "picasso" ? RenderRegistration::picasso : RenderRegistration::camera;
  return s;
}

std::string render_png_path(const std::string& output, const std::string& png) {
  return png.empty() ? std::filesystem::path(output).replace_extension(".png").string() : png;
}

void run_fit2d_render(const Fit2dRenderOptions& o, ToolContext& ctx, std::ostream& out) {
  if (o.color != "none" && o.color != "z") throw UsageError("--color", "'" + o.color + "': none or z");
  plan_localization_input(o.input);
  plan_output(o.output, "the picture (-o)");
  plan_output(render_png_path(o.output, o.png), o.png.empty() ? "the preview (the picture's name with .png)"
                                                               : "the preview (--png)");
  check_run_plan();
  const bool color_z = o.color == "z";
  const ZRange range = parse_color_range(o.color_range);
  if (!o.color_range.empty() && !color_z) throw UsageError("--color-range", "only with --color z");
  LocReadOptions read;
  read.pixel_size_nm = o.pixel_size_nm;
  auto reader = open_localization_reader(o.input, read);
  const LocalizationFile info = reader->info();
  if (!(info.pixel_size_nm > 0)) throw UsageError(o.input, "the file does not say its pixel size: give --pixel-size");
  RenderSettings s = render_step_settings(ctx.params);
  s.camera_px_nm = info.pixel_size_nm;
  s.color_z = color_z;
  std::vector<Localization> chunk;
  // The field: the camera frame from the file's .yaml, else the localizations' extent (a first pass).
  s.field_width_px = info.width;
  s.field_height_px = info.height;
  if (s.field_width_px <= 0 || s.field_height_px <= 0) {
    double max_x = 0, max_y = 0;
    while (reader->read(chunk, kChunkRows))
      for (const Localization& l : chunk) {
        if (std::isfinite(l.x)) max_x = std::max(max_x, l.x);
        if (std::isfinite(l.y)) max_y = std::max(max_y, l.y);
      }
    if (s.field_width_px <= 0) s.field_width_px = static_cast<std::int64_t>(std::ceil(std::min(max_x, 1e9))) + 1;
    if (s.field_height_px <= 0) s.field_height_px = static_cast<std::int64_t>(std::ceil(std::min(max_y, 1e9))) + 1;
    reader = open_localization_reader(o.input, read);
  }
  Renderer renderer(s, make_render_engine(ctx.device, render_geometry(s)));
  std::int64_t total = 0;
  bool has_z = false;  // 2D files (no z column) read z = 0
  while (reader->read(chunk, kChunkRows)) {
    check_frames_within(o.input, info.frames, chunk, total);
    total += static_cast<std::int64_t>(chunk.size());
    if (color_z && !has_z)
      has_z = std::any_of(chunk.begin(), chunk.end(), [](const Localization& l) { return l.z != 0 && std::isfinite(l.z); });
    renderer.add(chunk);
  }
  if (total == 0) throw InputError(o.input, "no localizations to render");
  if (color_z && !has_z)
    throw UsageError("--color z", o.input + " holds 2D localizations (no z column, or z = 0 in every row): "
                                            "nothing to colour by z; render without --color z");
  const RenderedImage image = renderer.finish();

  const std::string png = render_png_path(o.output, o.png);
  const std::string software = std::string("nanoscopy fit2d render ") + NANOSCOPY_VERSION;
  // So that a reader overlays the picture right: its registration, and where its corner lies in camera pixels.
  const TextAttributes notes = {{"registration", render_registration_name(s.registration)},
                                {"origin_camera_px", s.registration == RenderRegistration::picasso ? "0" : "-0.5"}};
  OutputGroup outputs;  // the picture and its preview appear together
  double bar_nm = 0;
  RgbPlanes rgb;
  if (color_z) {
    rgb = color_by_z(image, range.low, range.high);
    const float* pages[] = {rgb.red.data(), rgb.green.data(), rgb.blue.data()};
    write_float_pages(o.output, image.width, image.height, pages, s.pixel_nm, software, {"red", "green", "blue"},
                      notes);
    burn_scale_bar(rgb, s.pixel_nm, bar_nm);
    write_rgb_png(png, image.width, image.height, rgb.red, rgb.green, rgb.blue);
  } else {
    ImageMeta meta;
    meta.width = image.width;
    meta.height = image.height;
    meta.frames = 1;
    meta.type = PixelType::f32;
    meta.pixel_size_nm = s.pixel_nm;
    meta.software = software;
    meta.notes = notes;
    auto writer = create_image_writer(o.output, meta);
    writer->write(image.pixels.data(), 1);
    writer->close();
    const auto preview = preview_with_scale_bar(image, s.pixel_nm, bar_nm);
    write_gray_png(png, image.width, image.height, preview, 0.0, 100.0);
  }
  outputs.commit();
  out << "fit2d render: " << o.input << ": " << image.rendered << " of " << total << " localizations, "
      << (s.mode == RenderMode::histogram ? "histogram" : "Gaussian (sigma = precision)") << ", " << image.width << " x "
      << image.height << " pixels of " << s.pixel_nm << " nm, " << render_registration_name(s.registration)
      << " registration, " << renderer.engine().name() << "\n";
  if (color_z)
    out << "  z colour: viridis from " << rgb.z_low << " nm (purple) to " << rgb.z_high << " nm (yellow); z of the "
        << "localizations " << image.z_min << " to " << image.z_max << " nm\n"
        << "  wrote " << o.output << " (float32 pages red, green, blue in [0, 1], pixel size in the metadata) and "
        << png << " (RGB preview, scale bar " << bar_nm << " nm)\n";
  else
    out << "  wrote " << o.output << " (float32, pixel size in the metadata) and " << png << " (preview, scale bar "
        << bar_nm << " nm)\n";
}

}  // namespace nanoscopy
