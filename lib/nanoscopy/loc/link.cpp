#include "nanoscopy/loc/link.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {
namespace {

// 1/lp² (equal weights where a precision is missing).
double weight(double lp) { return std::isfinite(lp) && lp > 0 ? 1.0 / (lp * lp) : 1.0; }

// One group being built: the last localization's place and the running sums.
struct Group {
  std::int64_t first_frame = 0, last_frame = 0;
  double last_lp = 0;
  double wx = 0, wy = 0, wz = 0, sx_w = 0, sy_w = 0, sz_w = 0;
  double photons = 0, bg = 0, sigma = 0, sigma_y = 0, net_gradient = 0, chi2 = 0, log_likelihood = 0, iterations = 0;
  // Σ unc² of the MLE bounds (NaN, absent, stays NaN).
  double photons_var = 0, bg_var = 0, sx_var = 0, sy_var = 0;
  std::int32_t n = 0;
  bool two_widths = false;
  std::int64_t cell = 0;

  void add(const Localization& l) {
    const double ax = weight(l.lpx), ay = weight(l.lpy), az = weight(l.lpz);
    wx += ax, sx_w += ax * l.x;
    wy += ay, sy_w += ay * l.y;
    wz += az, sz_w += az * l.z;
    photons += l.photons;
    bg += l.background;
    sigma += l.sigma;
    sigma_y += l.sy();
    two_widths = two_widths || l.sigma_y > 0;
    net_gradient += l.net_gradient;
    chi2 += l.chi2;
    log_likelihood += l.log_likelihood;  // NaN (no likelihood) stays NaN
    photons_var += l.photons_unc * l.photons_unc;
    bg_var += l.bg_unc * l.bg_unc;
    sx_var += l.sx_unc * l.sx_unc;
    sy_var += l.sy_unc * l.sy_unc;
    iterations += l.iterations;
    ++n;
    last_frame = l.frame;
    last_lp = std::isfinite(l.lpx) ? l.lpx : 0.0;
  }

  // The position so far: the precision-weighted mean (steadier than the last localization).
  double x() const { return sx_w / wx; }
  double y() const { return sy_w / wy; }

  Localization result() const {
    Localization l;
    l.frame = first_frame;
    l.x = x();
    l.y = y();
    l.z = sz_w / wz;
    l.lpx = 1 / std::sqrt(wx);
    l.lpy = 1 / std::sqrt(wy);
    l.lpz = 1 / std::sqrt(wz);
    l.photons = photons;
    l.background = bg / n;
    l.sigma = sigma / n;
    l.sigma_y = two_widths ? sigma_y / n : 0.0;
    l.net_gradient = net_gradient / n;
    l.chi2 = chi2 / n;
    // The rules of the column table in docs/fit2d.md: a sum's bound adds in quadrature (photons:
    // √Σunc²), a mean's divides that by n (bg, sx, sy: √Σunc²/n); the log-likelihood of
    // independent fits adds; iterations are averaged, as Picasso's link does.
    l.photon_rate = photons / n;
    l.photons_unc = std::sqrt(photons_var);
    l.bg_unc = std::sqrt(bg_var) / n;
    l.sx_unc = std::sqrt(sx_var) / n;
    l.sy_unc = std::sqrt(sy_var) / n;
    l.log_likelihood = log_likelihood;
    l.iterations = iterations / n;
    l.status = FitStatus::converged_min_delta;
    l.len = static_cast<std::int32_t>(last_frame - first_frame + 1);
    l.n = n;
    return l;
  }
};

}  // namespace

namespace {

// link_localizations on rows sorted by frame.
std::vector<Localization> link_sorted(const std::vector<Localization>& locs, const LinkSettings& settings,
                                      std::vector<std::int64_t>* group_of) {
  if (group_of) group_of->assign(locs.size(), -1);
  if (settings.max_dark < 0) throw UsageError("--max-dark", "must be 0 or more frames");
  if (!(settings.radius_px != 0) || !std::isfinite(settings.radius_px))
    throw UsageError("--radius", "must be a positive distance or multiple of the precision");
  // The grid's cell: the largest linking distance there can be, so that a
  // localization's partner is in its cell or the eight around it.
  double cell = settings.radius_px;
  if (cell < 0) {
    double max_lp = 0;
    for (const auto& l : locs)
      if (std::isfinite(l.lpx)) max_lp = std::max(max_lp, l.lpx);
    cell = std::clamp(-settings.radius_px * max_lp, 1e-3, 1e3);
  }
  const auto index = [cell](double v) { return static_cast<std::int64_t>(std::floor(v / cell)); };
  const auto key = [](std::int64_t cx, std::int64_t cy) { return (cx << 32) ^ (cy & 0xffffffff); };
  const auto cell_of = [&](double x, double y) { return key(index(x), index(y)); };
  std::vector<Group> groups;                                   // every group, open or closed
  std::unordered_map<std::int64_t, std::vector<std::size_t>> open;  // cell → open groups
  std::vector<std::size_t> open_list;
  const auto start_group = [&](std::size_t i) {
    const Localization& l = locs[i];
    if (group_of) (*group_of)[i] = static_cast<std::int64_t>(groups.size());
    Group g;
    g.first_frame = l.frame;
    g.add(l);
    g.cell = cell_of(l.x, l.y);
    open[g.cell].push_back(groups.size());
    open_list.push_back(groups.size());
    groups.push_back(g);
  };
  const auto extend_group = [&](std::size_t i, std::size_t best) {
    if (group_of) (*group_of)[i] = static_cast<std::int64_t>(best);
    Group& g = groups[best];
    g.add(locs[i]);
    const std::int64_t moved = cell_of(g.x(), g.y());
    if (moved != g.cell) {
      std::erase(open[g.cell], best);
      g.cell = moved;
      open[moved].push_back(best);
    }
  };
  struct Pair {
    double d;
    std::size_t loc, group;
  };
  std::vector<Pair> pairs;
  for (std::size_t begin = 0; begin < locs.size();) {
    const std::int64_t frame = locs[begin].frame;
    std::size_t end = begin;
    while (end < locs.size() && locs[end].frame == frame) ++end;
    // Close the groups that can no longer continue.
    std::erase_if(open_list, [&](std::size_t g) {
      if (groups[g].last_frame >= frame - settings.max_dark - 1) return false;
      std::erase(open[groups[g].cell], g);
      return true;
    });
    // Every (localization, open group) pair within the radius, then matched closest first: in a dense
    // frame two localizations may both lie near one group, and taking them in row order would hand the
    // group to whichever comes first (a split of one blink and a merge into another).
    pairs.clear();
    for (std::size_t i = begin; i < end; ++i) {
      const Localization& l = locs[i];
      const std::int64_t cx = index(l.x), cy = index(l.y);
      for (std::int64_t dy = -1; dy <= 1; ++dy)
        for (std::int64_t dx = -1; dx <= 1; ++dx) {
          const auto it = open.find(key(cx + dx, cy + dy));
          if (it == open.end()) continue;
          for (std::size_t g : it->second) {
            const Group& gr = groups[g];
            const double d = std::hypot(l.x - gr.x(), l.y - gr.y());
            const double r = settings.radius_px > 0
                                 ? settings.radius_px
                                 : -settings.radius_px * std::max(gr.last_lp, std::isfinite(l.lpx) ? l.lpx : 0.0);
            if (d <= r) pairs.push_back({d, i, g});
          }
        }
    }
    // Ties (equal distances) keep row order, so the result does not depend on the sort's implementation.
    std::stable_sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) { return a.d < b.d; });
    const std::size_t existing = groups.size();  // "no group": a localization that starts its own
    std::vector<std::size_t> chosen(end - begin, existing);
    for (const Pair& p : pairs) {
      if (chosen[p.loc - begin] != existing || groups[p.group].last_frame == frame) continue;
      chosen[p.loc - begin] = p.group;
      groups[p.group].last_frame = frame;  // taken in this frame; set again by add()
    }
    for (std::size_t i = begin; i < end; ++i)
      if (chosen[i - begin] != existing) extend_group(i, chosen[i - begin]);
    for (std::size_t i = begin; i < end; ++i)
      if (chosen[i - begin] == existing) start_group(i);
    begin = end;
  }
  // Groups are created in order of their first localization: already ordered by first frame.
  std::vector<Localization> out;
  out.reserve(groups.size());
  for (const Group& g : groups) out.push_back(g.result());
  return out;
}

}  // namespace

std::vector<Localization> link_localizations(const std::vector<Localization>& locs, const LinkSettings& settings,
                                             std::vector<std::int64_t>* group_of) {
  if (std::is_sorted(locs.begin(), locs.end(),
                     [](const Localization& a, const Localization& b) { return a.frame < b.frame; }))
    return link_sorted(locs, settings, group_of);
  // Rows out of frame order (a concatenated or hand-edited file): linked in the order of a stable sort by
  // frame, which keeps the order of one frame's rows; group_of still indexes `locs`.
  std::vector<std::size_t> order(locs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return locs[a].frame < locs[b].frame; });
  std::vector<Localization> sorted;
  sorted.reserve(locs.size());
  for (const std::size_t i : order) sorted.push_back(locs[i]);
  std::vector<std::int64_t> sorted_group;
  std::vector<Localization> out = link_sorted(sorted, settings, group_of ? &sorted_group : nullptr);
  if (group_of) {
    group_of->assign(locs.size(), -1);
    for (std::size_t k = 0; k < order.size(); ++k) (*group_of)[order[k]] = sorted_group[k];
  }
  return out;
}

}  // namespace nanoscopy
