// frc decorr: decorrelation analysis of one image or of every frame of a stack
// (frc/decorr.hpp) on the selected device; one result line per frame on stdout,
// and on request the curves as JSON, a per-frame table as CSV and the first
// frame's curves as a PNG, written together (atomically).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/frc/decorr.hpp"

namespace nanoscopy {

struct DecorrCliOptions {
  std::string input;
  std::string json, plot, table;
};

// What one run found, for the outputs.
struct DecorrReport {
  std::string input, backend;
  double pixel_size_nm = 0;                     // 0: unknown (results in px)
  std::string units = "nm";                     // nm or um: the unit of `resolution` in the outputs
  double apodization_x = 0, apodization_y = 0;  // the band used per axis (px)
  DecorrSettings settings;
  std::vector<std::int64_t> frames;
  std::vector<DecorrResult> results;
};

void run_decorr_cli(const DecorrCliOptions& options, ToolContext& ctx, std::ostream& out);

// The outputs (exposed for tests).
std::string decorr_json(const DecorrReport& report);
std::string decorr_table_csv(const DecorrReport& report);
void write_decorr_plot(const std::string& path, const DecorrReport& report, std::size_t index = 0);
// "img.tif frame 3: resolution 212.4 nm (kcMax 0.9412, A0 0.412; 2.12 px of 100 nm/px)"
std::string decorr_result_line(const DecorrReport& report, std::size_t index);

}  // namespace nanoscopy
