#include "nanoscopy/fit2d/render_cmd.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <ostream>

#include "nanoscopy/config.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/image_png.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"

namespace nanoscopy {

RenderSettings render_step_settings(const Params& p) {
  RenderSettings s;
  s.pixel_nm = p.get_real("Render/pixel");
  s.mode = p.get_string("Render/mode") == "histogram" ? RenderMode::histogram : RenderMode::gaussian;
  return s;
}

void run_fit2d_render(const Fit2dRenderOptions& o, ToolContext& ctx, std::ostream& out) {
  LocReadOptions read;
  read.pixel_size_nm = o.pixel_size_nm;
  const LocalizationFile file = read_localization_file(o.input, read);
  if (!(file.pixel_size_nm > 0)) throw UsageError(o.input, "the file does not say its pixel size: give --pixel-size");
  if (file.locs.empty()) throw InputError(o.input, "no localizations to render");
  RenderSettings s = render_step_settings(ctx.params);
  s.camera_px_nm = file.pixel_size_nm;
  // The field: the camera frame from the file's .yaml, else the localizations' extent.
  const LocWriterContext field = writer_context(file, "");
  s.field_width_px = field.width;
  s.field_height_px = field.height;
  const RenderedImage image = render_localizations(file.locs, s);

  const std::string png = o.png.empty() ? (std::filesystem::path(o.output).replace_extension(".png")).string() : o.png;
  ImageMeta meta;
  meta.width = image.width;
  meta.height = image.height;
  meta.frames = 1;
  meta.type = PixelType::f32;
  meta.pixel_size_nm = s.pixel_nm;
  meta.software = std::string("nanoscopy fit2d render ") + NANOSCOPY_VERSION;
  OutputGroup outputs;  // the picture and its preview appear together
  auto writer = create_image_writer(o.output, meta);
  writer->write(image.pixels.data(), 1);
  writer->close();
  double bar_nm = 0;
  const auto preview = preview_with_scale_bar(image, s.pixel_nm, bar_nm);
  write_gray_png(png, image.width, image.height, preview, 0.0, 100.0);
  outputs.commit();
  out << "fit2d render: " << o.input << ": " << image.rendered << " of " << file.locs.size() << " localizations, "
      << (s.mode == RenderMode::histogram ? "histogram" : "Gaussian (sigma = precision)") << ", " << image.width << " x "
      << image.height << " pixels of " << s.pixel_nm << " nm\n"
      << "  wrote " << o.output << " (float32, pixel size in the metadata) and " << png << " (preview, scale bar "
      << bar_nm << " nm)\n";
}

}  // namespace nanoscopy
