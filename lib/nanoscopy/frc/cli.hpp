// frc's work, behind its command line: pick the two images (two files, a
// stack split in two, or localizations split by time blocks and rendered),
// run the FRC on the selected device, print a summary and write the
// requested JSON, CSV and PNG atomically.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/frc/frc.hpp"

namespace nanoscopy {

struct FrcCliOptions {
  std::vector<std::string> inputs;
  std::string curve;  // CSV
  std::string plot;   // PNG
  std::string json;
};

// What was compared, for the summary and the JSON.
struct FrcReport {
  std::string mode;  // "images", "split odd-even", "split halves", "localizations"
  std::vector<std::string> inputs;
  std::string detail;        // "page 0", "frames 0:100 (50 + 50)", "12345 + 12210 localizations, 20 blocks"
  double pixel_size_nm = 0;  // of a pixel of the compared images; 0 = unknown
  std::string backend;
  FrcResult result;
};

// The resolution in nm, or 0 when the pixel size is unknown or there is no crossing.
double resolution_nm(const FrcReport& report);

void run_frc_cli(const FrcCliOptions& options, ToolContext& ctx, std::ostream& out);

// The outputs (exposed for tests).
std::string frc_json(const FrcReport& report);
std::string frc_curve_csv(const FrcReport& report);
void write_frc_plot(const std::string& path, const FrcReport& report);

}  // namespace nanoscopy
