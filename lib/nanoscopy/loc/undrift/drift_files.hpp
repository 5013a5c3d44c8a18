// fit2d undrift's drift files beside the corrected localizations:
//   OUT_drift.txt  Picasso's drift file, written by track/drift.hpp's
//                  write_picasso_drift exactly as fit2d --track writes it (one
//                  line "dx dy" in camera px per frame from frame 0, no header).
//                  Picasso's own undrift adds a "# dx<TAB>dy" comment line and
//                  CRLF line ends; numpy.loadtxt (which Picasso reads it with)
//                  reads both alike.
//   OUT_drift.csv  frame,dx [nm],dy [nm] (+ markers with fiducials), the
//                  columns of fit2d --track's drift CSV.
//   OUT_drift.png  dx and dy in nm over the frames (and the markers' raw trace,
//                  lighter, when there is one).
#pragma once

#include <filesystem>
#include <string>

#include "nanoscopy/loc/track/drift.hpp"

namespace nanoscopy {

// CSV as above, atomically; `markers` adds the markers column.
void write_undrift_csv(const std::filesystem::path& path, const DriftTrace& trace, double pixel_size_nm, bool markers);

// The plot (PNG, atomically); `raw` (may be null) drawn lighter under the trace.
void write_drift_plot(const std::filesystem::path& path, const std::string& title, const DriftTrace& trace,
                      double pixel_size_nm, const DriftTrace* raw);

}  // namespace nanoscopy
