// Localizations against the simulator's truth, as the SMLM challenge scores
// them (Sage et al. 2015): within each frame, each localization takes the
// nearest unmatched true emitter within `radius`; matches are true positives,
// unmatched localizations false positives, unmatched emitters false negatives.
#pragma once

#include <cstdint>
#include <span>

#include "nanoscopy/loc/localization.hpp"

namespace nanoscopy {

struct TruthMatch {
  std::int64_t true_positives = 0;
  std::int64_t false_positives = 0;
  std::int64_t false_negatives = 0;
  double rms_px = 0;    // RMS lateral distance of the matches (two overlapping emitters fitted as one count fully)
  double median_px = 0; // median lateral distance: the typical error, robust to those
  double rms_x_px = 0;  // and per axis
  double rms_y_px = 0;
  double bias_x_px = 0;  // mean localization − truth of the matches
  double bias_y_px = 0;
  // With compare_z (3D localizations and truth): the matches' depth errors, nm.
  double rms_z_nm = 0, median_z_nm = 0, bias_z_nm = 0;

  double recall() const;     // TP / (TP + FN)
  double precision() const;  // TP / (TP + FP)
  double jaccard() const;    // TP / (TP + FP + FN)
};

// Both in px with the same origin and frames counted the same way; matched
// laterally (the SMLM challenge's rule), z (nm) only scored, with compare_z.
TruthMatch match_to_truth(std::span<const Localization> locs, std::span<const Localization> truth, double radius_px,
                          bool compare_z = false);

// Whether both hold depths (some z ≠ 0): 3D localizations against a 3D truth.
bool both_three_d(std::span<const Localization> locs, std::span<const Localization> truth);

}  // namespace nanoscopy
