#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/fit2d/postprocess.hpp"

#include <filesystem>
#include <ostream>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/sibling_path.hpp"
#include "nanoscopy/fit2d/link_cmd.hpp"
#include "nanoscopy/fit2d/render_cmd.hpp"
#include "nanoscopy/fit2d/undrift_cmd.hpp"
#include "nanoscopy/loc/render.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"

namespace nanoscopy {

Fit2dPostprocess fit2d_postprocess(const Params& p) {
  return {p.get_bool("Postprocess/undrift"), p.get_bool("Postprocess/link"), p.get_bool("Postprocess/render")};
}

PostprocessNames postprocess_names(const Fit2dPostprocess& steps, const std::string& locs) {
  PostprocessNames names;
  const std::string ext = std::filesystem::path(locs).extension().string();
  std::string last = locs;
  if (steps.undrift) last = names.undrift = sibling_path(last, "_undrift" + ext);
  if (steps.link) last = names.link = sibling_path(last, "_link" + ext);
  if (steps.render) {
    names.render_tif = sibling_path(last, ".tif");
    names.render_png = sibling_path(last, ".png");
  }
  return names;
}

void check_fit2d_postprocess(const Fit2dPostprocess& steps, const Params& p, std::int64_t frames, std::int64_t width,
                             std::int64_t height, double pixel_size_nm, bool pixel_size_known) {
  const auto unknown_pixel = [&](const std::string& option, const std::string& what) {
    return UsageError(option, what + " needs the camera's pixel size, which the movie does not give (fit2d would "
                                     "assume " + std::to_string(static_cast<int>(pixel_size_nm)) +
                                     " nm): give --pixel-size (nm)");
  };
  if (steps.undrift) {
    const ParamSource& source = p.source("Undrift/segment");
    UndriftStepSettings undrift = undrift_step_settings(p);
    for (RccOption* o : {&undrift.rcc_options.pixel, &undrift.rcc_options.max_grid, &undrift.rcc_options.max_drift})
      if (!o->given) o->name = "--undrift-" + o->name.substr(2);  // this command line's spelling of a default
    check_undrift_frames(undrift, frames, source.file == "default" ? "--undrift-segment" : source.describe());
    // The grid of the drift and the grid pixel alone (the localizations' extent only adds to it), before the fit.
    if (undrift.rcc()) check_rcc_grid(rcc_step_settings(undrift, pixel_size_nm, true), 0.0, "--undrift");
  }
  if (steps.link) {
    static_cast<void>(link_step_settings(p, pixel_size_nm));
    const std::string radius = p.get_string("Link/radius");
    if (!pixel_size_known && radius.ends_with("nm"))
      throw unknown_pixel(p.source("Link/radius").describe(), "a link radius in nm");
  }
  if (steps.render) {
    RenderSettings render = render_step_settings(p);
    if (!pixel_size_known) throw unknown_pixel("--render", "a picture in nm");
    // The picture of the camera frame, before the fit rather than after it.
    render.camera_px_nm = pixel_size_nm;
    render.field_width_px = width;
    render.field_height_px = height;
    try {
      static_cast<void>(render_geometry(render));
    } catch (const UsageError& e) {
      throw UsageError(p.source("Render/pixel").named("--render-pixel"), e.what());
    }
  }
}

void plan_fit2d_postprocess(const Fit2dPostprocess& steps, const std::string& locs, const std::string& format) {
  const PostprocessNames names = postprocess_names(steps, locs);
  if (steps.undrift) plan_fit2d_undrift_outputs(names.undrift, format);
  if (steps.link) plan_localization_output(names.link, format, "the linked localizations (--link)");
  if (steps.render) {
    plan_output(names.render_tif, "the picture (--render)");
    plan_output(names.render_png, "the picture's preview (--render)");
  }
}

void run_fit2d_postprocess(const Fit2dPostprocess& steps, const std::string& locs, const std::string& format,
                           double pixel_size_nm, ToolContext& ctx, std::ostream& out) {
  const PostprocessNames names = postprocess_names(steps, locs);
  std::string last = locs;
  if (steps.undrift) {
    run_fit2d_undrift({last, names.undrift, format, pixel_size_nm}, ctx, out);
    last = names.undrift;
  }
  if (steps.link) {
    run_fit2d_link({last, names.link, format, pixel_size_nm}, ctx, out);
    last = names.link;
  }
  if (steps.render) run_fit2d_render({last, names.render_tif, names.render_png, pixel_size_nm}, ctx, out);
}

}  // namespace nanoscopy
