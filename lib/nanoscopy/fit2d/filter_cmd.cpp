#include "nanoscopy/fit2d/filter_cmd.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "nanoscopy/config.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/loc/filter/where.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"

namespace nanoscopy {
namespace {

// What the output records: the input's movie size and pixel size (or the extent
// of its rows where its .yaml says nothing), and the fields its rows carry.
LocWriterContext context_for(const LocalizationFile& file, const Fit2dFilterOptions& o) {
  LocWriterContext c;
  c.camera.pixel_size_nm = file.pixel_size_nm > 0 ? file.pixel_size_nm : 100;
  double max_x = 0, max_y = 0;
  std::int64_t max_frame = 0;
  for (const auto& l : file.locs) {
    max_x = std::max(max_x, l.x);
    max_y = std::max(max_y, l.y);
    max_frame = std::max(max_frame, l.frame);
    c.three_d = c.three_d || l.z != 0;
    c.elliptical = c.elliptical || l.sigma_y > 0;
    c.likelihood = c.likelihood || std::isfinite(l.likelihood);
    c.fit_diagnostics = c.fit_diagnostics || l.iterations != 0;
  }
  c.elliptical = c.elliptical && !c.three_d;
  c.width = file.width > 0 ? file.width : static_cast<std::int64_t>(std::ceil(max_x)) + 1;
  c.height = file.height > 0 ? file.height : static_cast<std::int64_t>(std::ceil(max_y)) + 1;
  c.frames = file.frames > 0 ? file.frames : max_frame + 1;
  c.program = "nanoscopy fit2d filter";
  c.version = NANOSCOPY_VERSION;
  c.parameters = {{"Input file", o.input}, {"Filter", o.where}};
  return c;
}

}  // namespace

void run_fit2d_filter(const Fit2dFilterOptions& o, ToolContext&, std::ostream& out) {
  if (o.where.empty()) throw UsageError("--where", "no expression given (e.g. --where 'photons > 500 and lpx < 0.1')");
  const WhereFilter filter(o.where, "--where");  // a bad expression fails before any reading
  LocReadOptions read;
  read.pixel_size_nm = o.pixel_size_nm;
  LocalizationFile file = read_localization_file(o.input, read);
  if (file.format == LocFormat::thunderstorm_csv && !(file.pixel_size_nm > 0))
    throw UsageError(o.input, "the file does not say its pixel size: give --pixel-size");
  const std::size_t total = file.locs.size();
  std::erase_if(file.locs, [&](const Localization& l) { return !filter.keeps(l); });
  const LocWriteCounts counts = write_localizations(o.output, o.format, context_for(file, o), file.locs);
  out << "fit2d filter: " << o.input << ": kept " << file.locs.size() << " of " << total << " localizations where "
      << o.where << "; wrote " << counts.written << " to " << o.output;
  if (counts.dropped() > 0) out << " (" << counts.dropped() << " dropped by the format's rules)";
  out << "\n";
}

}  // namespace nanoscopy
