#include "nanoscopy/loc/duplicates.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

std::int64_t remove_duplicates(std::vector<Localization>& locs, double distance_px) {
  if (!(distance_px > 0) || locs.size() < 2) return 0;
  const double d2 = distance_px * distance_px;
  std::vector<char> keep(locs.size(), 1);
  std::vector<std::size_t> order;
  std::int64_t dropped = 0;
  for (std::size_t first = 0; first < locs.size();) {
    std::size_t end = first + 1;
    while (end < locs.size() && locs[end].frame == locs[first].frame) ++end;
    // One frame: the most precise first; each kept one drops the others within the distance.
    order.resize(end - first);
    std::iota(order.begin(), order.end(), first);
    const auto precision2 = [&](std::size_t i) { return locs[i].lpx * locs[i].lpx + locs[i].lpy * locs[i].lpy; };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const double pa = precision2(a), pb = precision2(b);
      return pa < pb || (!std::isnan(pa) && std::isnan(pb));  // NaN precisions last
    });
    for (std::size_t a = 0; a < order.size(); ++a) {
      const std::size_t i = order[a];
      if (!keep[i]) continue;
      for (std::size_t b = a + 1; b < order.size(); ++b) {
        const std::size_t j = order[b];
        const double dx = locs[j].x - locs[i].x, dy = locs[j].y - locs[i].y;
        if (keep[j] && dx * dx + dy * dy < d2) keep[j] = 0, ++dropped;
      }
    }
    first = end;
  }
  if (dropped == 0) return 0;
  std::size_t out = 0;
  for (std::size_t i = 0; i < locs.size(); ++i)
    if (keep[i]) locs[out++] = locs[i];
  locs.resize(out);
  return dropped;
}

double duplicate_distance_px(const std::string& value, bool spline, const std::string& where) {
  if (value == "auto") return spline ? 1.0 : 0.0;
  if (value == "off") return 0.0;
  std::size_t used = 0;
  double d = 0;
  try {
    d = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || !(d > 0) || !std::isfinite(d))
    throw UsageError(where, "'" + value + "' is not auto, off or a distance in px > 0");
  return d;
}

}  // namespace nanoscopy
