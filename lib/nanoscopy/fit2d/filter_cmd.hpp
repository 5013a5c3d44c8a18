// fit2d filter: keeps the localizations of a file (ours, Picasso's or
// ThunderSTORM's) for which an expression over its columns holds
// (loc/filter/where.hpp), and writes them in either format with the file's own
// metadata (image size, frames, pixel size) and the filter in the provenance.
#pragma once

#include <iosfwd>
#include <string>

#include "nanoscopy/cli/tool_app.hpp"

namespace nanoscopy {

struct Fit2dFilterOptions {
  std::string input;
  std::string output;
  std::string where;          // the expression
  std::string format;         // "" = by the output's extension
  double pixel_size_nm = 0;   // a ThunderSTORM CSV without its .yaml needs one
};

// Prints how many rows were kept. UsageError for a bad expression (its
// columns listed); InputError for an unreadable input; OutputError as the writers.
void run_fit2d_filter(const Fit2dFilterOptions& options, ToolContext& ctx, std::ostream& out);

}  // namespace nanoscopy
