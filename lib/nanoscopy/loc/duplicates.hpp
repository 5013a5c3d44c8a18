// One emitter fitted twice in a frame: an elongated 3D spot (far from focus,
// where astigmatism stretches it) can hold two local maxima of the detection
// filter more than box/2 px apart, and both ROIs converge on the same emitter.
// remove_duplicates keeps, of the localizations of one frame closer than
// `distance_px` to each other, the one with the best precision (the smallest
// lpx² + lpy²: the ROI that holds most of the spot), as ThunderSTORM's
// "remove duplicates" post-processing does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nanoscopy/loc/localization.hpp"

namespace nanoscopy {

// Drops the duplicates from `locs` (sorted by frame; the kept ones stay in their
// order) and returns how many it dropped. distance_px <= 0: none.
std::int64_t remove_duplicates(std::vector<Localization>& locs, double distance_px);

// "Filter/duplicates": "auto" (1 px for the spline model, off for the others),
// "off", or a distance in px > 0. `spline`: the fit's model is the spline.
// Throws UsageError naming `where` for anything else.
double duplicate_distance_px(const std::string& value, bool spline, const std::string& where);

}  // namespace nanoscopy
