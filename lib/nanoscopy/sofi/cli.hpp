// sofi's work behind its command line: cumulant images of a stack (optionally
// with SMRE on every frame first, or on the result), odd/even or half splits
// for FRC, partial sums of a frame range (--partial) and their merge.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/sofi/problem.hpp"

namespace nanoscopy {

struct SofiCliOptions {
  std::string input;
  std::string output;   // "" = <input stem>_sofi.tif
  std::string partial;  // --partial FILE: write partial sums of --frames instead of an image
};

struct SofiMergeOptions {
  std::vector<std::string> parts;
  std::string output;
};

// The problem options the parameters say (SOFI/orders, lags, cross, moments, psf sigma).
SofiProblemOptions sofi_problem_options_from(const Params& p);

void run_sofi_cli(const SofiCliOptions& options, ToolContext& ctx, std::ostream& out);
void run_sofi_merge(const SofiMergeOptions& options, ToolContext& ctx, std::ostream& out);

}  // namespace nanoscopy
