// sofi --undrift's drift files beside the image, written with it (OutputGroup):
//   OUT_drift.csv  frame,dx_px,dy_px,dx_nm,dy_nm: one row per stack frame of the
//                  range, the drift the frame was corrected by (the sample
//                  appears moved by (dx, dy); 0 at the range's first frame);
//                  without a pixel size (stack or --pixel-size) only the px columns.
//   OUT_drift.png  dx and dy over the frames (nm with a pixel size, else px),
//                  with the per-block estimates the curve interpolates.
#pragma once

#include <string>
#include <vector>

#include "nanoscopy/sofi/corrections.hpp"

namespace nanoscopy {

// The two paths for image path `output` (OUT.tif -> OUT_drift.csv, OUT_drift.png).
std::vector<std::string> sofi_drift_paths(const std::string& output);

// Writes both (corrections.drift must be set); returns the paths.
std::vector<std::string> write_sofi_drift_files(const std::string& output, const SofiCorrections& corrections,
                                                double pixel_size_nm);

}  // namespace nanoscopy
