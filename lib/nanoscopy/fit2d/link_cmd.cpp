#include "nanoscopy/fit2d/link_cmd.hpp"

#include <ostream>
#include <stdexcept>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"

namespace nanoscopy {
namespace {

// "30nm" → 30 / pixel size px; "0.3px" → 0.3; "3x" → −3 (times the precision, LinkSettings).
double radius_px(const std::string& text, double pixel_size_nm, const std::string& where) {
  const auto value = [&](std::size_t suffix) {
    try {
      std::size_t used = 0;
      const std::string number = text.substr(0, text.size() - suffix);
      const double v = std::stod(number, &used);
      if (used == number.size() && v > 0) return v;
    } catch (const std::exception&) {
    }
    throw UsageError(where, "'" + text + "' is not a positive distance: 30nm, 0.3px or 3x (times the precision)");
  };
  if (text.size() > 2 && text.ends_with("nm")) return value(2) / pixel_size_nm;
  if (text.size() > 2 && text.ends_with("px")) return value(2);
  if (text.size() > 1 && text.ends_with("x")) return -value(1);
  throw UsageError(where, "'" + text + "' is not a positive distance: 30nm, 0.3px or 3x (times the precision)");
}

}  // namespace

LinkSettings link_step_settings(const Params& p, double pixel_size_nm) {
  LinkSettings settings;
  settings.radius_px = radius_px(p.get_string("Link/radius"), pixel_size_nm, p.source("Link/radius").describe());
  settings.max_dark = static_cast<int>(p.get_int("Link/max dark"));
  return settings;
}

void run_fit2d_link(const Fit2dLinkOptions& o, ToolContext& ctx, std::ostream& out) {
  plan_localization_input(o.input);
  plan_localization_output(o.output, o.format, "the linked localizations");
  check_run_plan();
  LocReadOptions read;
  read.pixel_size_nm = o.pixel_size_nm;
  LocalizationFile file = read_localization_file(o.input, read);
  if (!(file.pixel_size_nm > 0)) throw UsageError(o.input, "the file does not say its pixel size: give --pixel-size");
  const LinkSettings settings = link_step_settings(ctx.params, file.pixel_size_nm);
  const std::string radius = ctx.params.get_string("Link/radius");
  const std::size_t before = file.locs.size();
  file.locs = link_localizations(file.locs, settings);
  LocWriterContext context = writer_context(file, "nanoscopy fit2d link");
  context.linked = true;
  context.parameters = {
      {"Input file", o.input}, {"Link radius", radius}, {"Link max dark", std::to_string(settings.max_dark)}};
  const LocWriteCounts counts = write_localizations(o.output, o.format, context, file.locs);
  out << "fit2d link: " << o.input << ": " << before << " localizations in " << file.locs.size()
      << " groups (radius " << radius << ", max dark " << settings.max_dark << " frames); wrote " << counts.written
      << " to " << o.output;
  if (counts.dropped() > 0) out << " (" << counts.dropped() << " dropped by the format's rules)";
  out << "\n";
}

}  // namespace nanoscopy
