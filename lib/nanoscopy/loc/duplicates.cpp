#include "nanoscopy/loc/duplicates.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/parse_number.hpp"

namespace nanoscopy {

std::int64_t remove_duplicates(std::vector<Localization>& locs, double distance_px) {
  if (!(distance_px > 0) || locs.size() < 2) return 0;
  const double d2 = distance_px * distance_px;
  std::vector<char> keep(locs.size(), 1);
  std::vector<std::size_t> order;
  // A frame's localizations in cells of the distance's size: a pair closer than it lies in neighbouring cells, so
  // a frame of n costs O(n) whatever its density (a dense frame of 10^5 candidates must not take n^2 steps).
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> cells;
  const auto cell_of = [&](double v) { return static_cast<std::int64_t>(std::floor(v / distance_px)); };
  const auto key = [](std::int64_t cx, std::int64_t cy) {
    return (static_cast<std::uint64_t>(cx) << 32) ^ static_cast<std::uint64_t>(cy & 0xffffffff);
  };
  const auto usable = [&](std::size_t i) {
    return std::isfinite(locs[i].x) && std::isfinite(locs[i].y) && std::fabs(locs[i].x) < 1e9 &&
           std::fabs(locs[i].y) < 1e9;
  };
  std::int64_t dropped = 0;
  for (std::size_t first = 0; first < locs.size();) {
    std::size_t end = first + 1;
    while (end < locs.size() && locs[end].frame == locs[first].frame) ++end;
    cells.clear();
    order.clear();
    for (std::size_t i = first; i < end; ++i)
      if (usable(i)) {
        cells[key(cell_of(locs[i].x), cell_of(locs[i].y))].push_back(i);
        order.push_back(i);
      }
    // The most precise first: one still kept when its turn comes drops the kept ones within the distance (any
    // more precise one within it would have dropped it already).
    const auto precision2 = [&](std::size_t i) { return locs[i].lpx * locs[i].lpx + locs[i].lpy * locs[i].lpy; };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const double pa = precision2(a), pb = precision2(b);
      return pa < pb || (!std::isnan(pa) && std::isnan(pb));  // NaN precisions last
    });
    for (const std::size_t i : order) {
      if (!keep[i]) continue;
      const std::int64_t cx = cell_of(locs[i].x), cy = cell_of(locs[i].y);
      for (std::int64_t ny = cy - 1; ny <= cy + 1; ++ny)
        for (std::int64_t nx = cx - 1; nx <= cx + 1; ++nx) {
          const auto it = cells.find(key(nx, ny));
          if (it == cells.end()) continue;
          for (const std::size_t j : it->second) {
            const double dx = locs[j].x - locs[i].x, dy = locs[j].y - locs[i].y;
            if (j != i && keep[j] && dx * dx + dy * dy < d2) keep[j] = 0, ++dropped;
          }
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
  return distance_option_px(value, spline ? 1.0 : 0.0, where);
}

}  // namespace nanoscopy
