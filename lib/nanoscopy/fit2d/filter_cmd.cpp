#include "nanoscopy/fit2d/filter_cmd.hpp"

#include <ostream>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/loc/filter/where.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"

namespace nanoscopy {

void run_fit2d_filter(const Fit2dFilterOptions& o, ToolContext&, std::ostream& out) {
  if (o.where.empty()) throw UsageError("--where", "no expression given (e.g. --where 'photons > 500 and lpx < 0.1')");
  const WhereFilter filter(o.where, "--where");  // a bad expression fails before any reading
  plan_localization_input(o.input);
  plan_localization_output(o.output, o.format, "the filtered localizations");
  check_run_plan();
  LocReadOptions read;
  read.pixel_size_nm = o.pixel_size_nm;
  LocalizationFile file = read_localization_file(o.input, read);
  if (file.format == LocFormat::thunderstorm_csv && !(file.pixel_size_nm > 0))
    throw UsageError(o.input, "the file does not say its pixel size: give --pixel-size");
  const std::size_t total = file.locs.size();
  // The rows kept, with their values of the columns the filter does not know (carried as they were).
  std::vector<bool> keep(total);
  for (std::size_t i = 0; i < total; ++i) keep[i] = filter.keeps(file.locs[i]);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < total; ++i)
    if (keep[i]) file.locs[kept++] = file.locs[i];
  file.locs.resize(kept);
  file.carried.keep_rows(keep);
  LocWriterContext context = writer_context(file, "nanoscopy fit2d filter");
  context.parameters = {{"Input file", o.input}, {"Filter", o.where}};
  const LocWriteCounts counts = write_localizations(o.output, o.format, context, file.locs);
  out << "fit2d filter: " << o.input << ": kept " << file.locs.size() << " of " << total << " localizations where "
      << o.where << "; wrote " << counts.written << " to " << o.output;
  if (counts.dropped() > 0) out << " (" << counts.dropped() << " dropped by the format's rules)";
  out << "\n";
}

}  // namespace nanoscopy
