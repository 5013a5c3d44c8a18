// fit2d beyond one process: part files (fit2d --frames A:B --partial part.h5),
// fit2d merge, and the rows ranks send to rank 0 under mpirun.
//
// A part is an HDF5 file with /locs, a table with Picasso's field names (frame,
// x, y, photons, sx, sy, bg, lpx, lpy, net_gradient, chi2, iterations, status, log_likelihood, z, lpz,
// photons_unc, bg_unc, sx_unc, sy_unc)
// all in float64, so nothing is rounded before the merged file is written, and root
// attributes (part_file.hpp) plus: width, height, data_type, input, the camera
// (baseline, sensitivity, gain, qe, pixel_size_nm), the provenance parameters
// (JSON) and the run's candidates and rejected counts.
#pragma once

#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/io/table_writer.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"

namespace nanoscopy {

inline constexpr const char* kFit2dPartFormat = "nanoscopy fit2d part 4";  // 3: z, lpz; 4: Picasso's log_likelihood, *_unc

std::vector<Column> fit2d_part_columns();

// One row of fit2d_part_columns() per localization, appended to `out`.
void pack_localizations(std::span<const Localization> locs, std::vector<double>& out);
std::vector<Localization> unpack_localizations(std::span<const double> rows);

// The writer context as part attributes, and back.
TextAttributes writer_context_attributes(const LocWriterContext& context);
struct PartFile;
LocWriterContext writer_context_from(const PartFile& part);

struct Fit2dMergeOptions {
  std::vector<std::string> parts;
  std::string output;
  bool series = false;  // parts of several files, in the order given: frames numbered on
  bool track = false;   // track fiducial markers in the merged localizations
};

// Checks the parts (same stack and parameters, no overlap, no gap) and writes
// their localizations in global frame order, as one run would have.
void run_fit2d_merge(const Fit2dMergeOptions& options, ToolContext& ctx, std::ostream& out);

}  // namespace nanoscopy
