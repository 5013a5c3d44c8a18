#include "nanoscopy/sim/truth_match.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

namespace nanoscopy {
namespace {

double ratio(std::int64_t a, std::int64_t b) {
  return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0;
}

}  // namespace

double TruthMatch::recall() const { return ratio(true_positives, true_positives + false_negatives); }
double TruthMatch::precision() const { return ratio(true_positives, true_positives + false_positives); }
double TruthMatch::jaccard() const {
  return ratio(true_positives, true_positives + false_positives + false_negatives);
}

bool both_three_d(std::span<const Localization> locs, std::span<const Localization> truth) {
  const auto has_z = [](std::span<const Localization> v) {
    return std::any_of(v.begin(), v.end(), [](const Localization& l) { return l.z != 0; });
  };
  return has_z(locs) && has_z(truth);
}

TruthMatch match_to_truth(std::span<const Localization> locs, std::span<const Localization> truth, double radius_px,
                          bool compare_z) {
  struct Emitter {
    const Localization* at;
    bool taken;
  };
  std::multimap<std::int64_t, Emitter> by_frame;
  for (const auto& t : truth) by_frame.insert({t.frame, {&t, false}});
  TruthMatch m;
  double sum_x2 = 0, sum_y2 = 0, sum_x = 0, sum_y = 0;
  std::vector<double> distances, depth_errors;
  double sum_z = 0, sum_z2 = 0;
  for (const auto& l : locs) {
    auto [lo, hi] = by_frame.equal_range(l.frame);
    auto best = hi;
    double best_d = radius_px;
    for (auto it = lo; it != hi; ++it) {
      if (it->second.taken) continue;
      const double d = std::hypot(l.x - it->second.at->x, l.y - it->second.at->y);
      if (d <= best_d) best_d = d, best = it;
    }
    if (best == hi) {
      ++m.false_positives;
      continue;
    }
    best->second.taken = true;
    ++m.true_positives;
    const double dx = l.x - best->second.at->x, dy = l.y - best->second.at->y;
    sum_x += dx, sum_y += dy, sum_x2 += dx * dx, sum_y2 += dy * dy;
    distances.push_back(best_d);
    if (compare_z) {
      const double dz = l.z - best->second.at->z;
      sum_z += dz, sum_z2 += dz * dz;
      depth_errors.push_back(std::abs(dz));
    }
  }
  m.false_negatives = static_cast<std::int64_t>(truth.size()) - m.true_positives;
  if (m.true_positives > 0) {
    const double n = static_cast<double>(m.true_positives);
    m.rms_x_px = std::sqrt(sum_x2 / n);
    m.rms_y_px = std::sqrt(sum_y2 / n);
    m.rms_px = std::sqrt((sum_x2 + sum_y2) / n);
    m.bias_x_px = sum_x / n;
    m.bias_y_px = sum_y / n;
    const auto mid = distances.begin() + static_cast<std::ptrdiff_t>(distances.size() / 2);
    std::nth_element(distances.begin(), mid, distances.end());
    m.median_px = *mid;
    if (compare_z) {
      m.rms_z_nm = std::sqrt(sum_z2 / n);
      m.bias_z_nm = sum_z / n;
      const auto zmid = depth_errors.begin() + static_cast<std::ptrdiff_t>(depth_errors.size() / 2);
      std::nth_element(depth_errors.begin(), zmid, depth_errors.end());
      m.median_z_nm = *zmid;
    }
  }
  return m;
}

}  // namespace nanoscopy
