// Linking (fit2d link): the localizations of one emitter in consecutive frames
// (one blink) merged into one, as Picasso's link and ThunderSTORM's merging do.
//
// Frame by frame, each localization joins an open group (its precision-weighted
// mean position so far) within `radius` whose last localization is at most
// max_dark frames before; a group takes one localization per frame, and one
// frame's pairs are matched closest first (not in row order, which in dense
// frames hands a group to the wrong neighbour). The rest start groups. A group is
// written as one localization: x, y (and z) the precision-weighted means
// (weights 1/lp²), lpx, lpy (lpz) = 1/√Σ(1/lp²), photons summed, bg, σx, σy,
// net_gradient, χ² and the iterations averaged, the log-likelihood summed
// (independent fits), photon_rate = photons / n (Picasso's), the MLE bounds by the
// rule of their value: photons_unc = √Σunc², bg_unc, sx_unc, sy_unc = √Σunc² / n;
// frame = its first frame, len = last − first + 1, n = its size (Picasso's len and n;
// ThunderSTORM's detections).
#pragma once

#include <cstdint>
#include <vector>

#include "nanoscopy/loc/localization.hpp"

namespace nanoscopy {

struct LinkSettings {
  // The distance within which two localizations are one emitter: in px when
  // > 0, else −radius times the larger of the two precisions (lpx, px). Two
  // localizations of one emitter with precision lp lie d apart with
  // P(d > k·lp) = exp(−k²/4) (a localization from its group's mean: less):
  // k = 3 splits up to 11 % of the pairs, k = 5 up to 0.2 % -- of Gaussian errors only: a fit's overlap
  // outliers lie further out than their stated precision, so fit2d's default is a distance, 0.8 px,
  // chosen by split and merge rates against the true blinks (bench postprocess's link table, docs/fit2d.md).
  double radius_px = 0.8;
  int max_dark = 1;  // frames an emitter may be missed and still continue its group
};

// `locs` in any order: rows out of frame order are linked as after a stable sort by frame (our files and
// Picasso's are sorted already). UsageError for a bad radius or max dark.
// The groups come out ordered by their first frame, then by their first
// localization's position in `locs`.
// `group_of` (optional) gets, for each localization of `locs`, the index of its group in the result
// (bench postprocess scores the groups against the true blinks with it).
std::vector<Localization> link_localizations(const std::vector<Localization>& locs, const LinkSettings& settings,
                                             std::vector<std::int64_t>* group_of = nullptr);

}  // namespace nanoscopy
