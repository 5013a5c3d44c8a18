// sofi esrrf: enhanced super-resolution radial fluctuations of a stack (one
// image or a time series), its SQUIRREL error map and the QnR parameter sweep.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/sofi/esrrf_engine.hpp"

namespace nanoscopy {

struct EsrrfCliOptions {
  std::string input;
  std::string output;  // "" = <input stem>_esrrf.tif
  std::string partial;  // --partial P.h5: the sums of --frames A:B for `sofi merge` (esrrf_partial.hpp)
};

// The settings the parameters say (eSRRF/...).
EsrrfSettings esrrf_settings_from(const Params& p);

// "radius=1:2:0.25,sensitivity=1:4" -> the radii and sensitivities to try
// (a:b[:step], step 1 when left out, or one value; a key left out: `current`).
struct EsrrfSweepSpec {
  std::vector<double> radii, sensitivities;
};
EsrrfSweepSpec parse_esrrf_sweep(const std::string& text, const EsrrfSettings& current,
                                 const std::string& where = "--sweep");

void run_sofi_esrrf(const EsrrfCliOptions& options, ToolContext& ctx, std::ostream& out);

// sofi merge of eSRRF parts (sofi esrrf --partial): the image of the whole stack, as one run writes it.
void run_esrrf_merge(const std::vector<std::string>& parts, const std::string& output, ToolContext& ctx,
                     std::ostream& out);

}  // namespace nanoscopy
