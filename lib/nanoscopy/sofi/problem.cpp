#include "nanoscopy/sofi/problem.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {
namespace {

bool before(const SofiVariable& a, const SofiVariable& b) {
  return std::tie(a.dy, a.dx, a.lag) < std::tie(b.dy, b.dx, b.lag);
}

using VarKey = std::tuple<int, int, int>;  // (dy, dx, lag)

// Builds terms and the subset tables of each combination.
class TermTable {
 public:
  explicit TermTable(SofiProblem& problem) : problem_(problem) {}

  // The subsets' terms of `c`, summed over c.window's tuples.
  void fill(SofiCombo& c) {
    for (int u = 1; u < (1 << c.order); ++u) {
      std::vector<SofiVariable> vars;
      for (int i = 0; i < c.order; ++i)
        if (u & (1 << i)) vars.push_back(c.vars[i]);
      std::sort(vars.begin(), vars.end(), before);
      const int sx = vars.front().dx, sy = vars.front().dy;
      std::vector<VarKey> canonical;
      for (auto& v : vars) canonical.push_back({v.dy - sy, v.dx - sx, v.lag});
      c.subset_term[u] = term_index(canonical, c.window);
      c.subset_dx[u] = sx;
      c.subset_dy[u] = sy;
    }
  }

 private:
  int term_index(const std::vector<VarKey>& canonical, int window) {
    const auto key = std::make_pair(canonical, window);
    if (auto it = terms_.find(key); it != terms_.end()) return it->second;
    SofiTerm term;
    term.size = static_cast<int>(canonical.size());
    term.window = window;
    for (int i = 0; i < term.size; ++i) term.var[i] = variable_index(canonical[static_cast<std::size_t>(i)]);
    problem_.terms.push_back(term);
    return terms_[key] = static_cast<int>(problem_.terms.size()) - 1;
  }
  int variable_index(const VarKey& k) {
    if (auto it = variables_.find(k); it != variables_.end()) return it->second;
    problem_.variables.push_back({std::get<1>(k), std::get<0>(k), std::get<2>(k)});
    return variables_[k] = static_cast<int>(problem_.variables.size()) - 1;
  }

  SofiProblem& problem_;
  std::map<std::pair<std::vector<VarKey>, int>, int> terms_;  // (variables, window) -> term
  std::map<VarKey, int> variables_;
};

// The combinations of `order` distinct pixels whose offsets sum to (a, b), i.e.
// whose centroid is the virtual pixel (a/order, b/order), with the smallest
// spread sum_{i<j} |r_i - r_j|^2 (the largest signal; several when symmetric).
std::vector<std::vector<SofiVariable>> cross_combinations(int order, int a, int b) {
  constexpr int r = 2;
  std::vector<SofiVariable> window;
  for (int dy = -r; dy <= r + 1; ++dy)
    for (int dx = -r; dx <= r + 1; ++dx) window.push_back({dx, dy, 0});
  const int n = static_cast<int>(window.size());
  std::vector<std::vector<SofiVariable>> best;
  long best_spread = -1;
  std::vector<int> idx(static_cast<std::size_t>(order));
  // every strictly increasing index tuple
  for (int i = 0; i < order; ++i) idx[static_cast<std::size_t>(i)] = i;
  while (true) {
    int sx = 0, sy = 0;
    for (int i : idx) sx += window[static_cast<std::size_t>(i)].dx, sy += window[static_cast<std::size_t>(i)].dy;
    if (sx == a && sy == b) {
      long spread = 0;
      for (std::size_t i = 0; i < idx.size(); ++i)
        for (std::size_t j = i + 1; j < idx.size(); ++j) {
          const auto& p = window[static_cast<std::size_t>(idx[i])];
          const auto& q = window[static_cast<std::size_t>(idx[j])];
          spread += (p.dx - q.dx) * (p.dx - q.dx) + (p.dy - q.dy) * (p.dy - q.dy);
        }
      if (best_spread < 0 || spread < best_spread) best.clear(), best_spread = spread;
      if (spread == best_spread) {
        std::vector<SofiVariable> combo;
        for (int i : idx) combo.push_back(window[static_cast<std::size_t>(i)]);
        best.push_back(combo);
      }
    }
    int k = order - 1;
    while (k >= 0 && idx[static_cast<std::size_t>(k)] == n - order + k) --k;
    if (k < 0) break;
    ++idx[static_cast<std::size_t>(k)];
    for (int j = k + 1; j < order; ++j) idx[static_cast<std::size_t>(j)] = idx[static_cast<std::size_t>(j - 1)] + 1;
  }
  if (best.size() > 8) best.resize(8);  // symmetric copies beyond 8 add little
  return best;
}

double spread_of(const std::vector<SofiVariable>& vars) {
  double s = 0;
  for (std::size_t i = 0; i < vars.size(); ++i)
    for (std::size_t j = i + 1; j < vars.size(); ++j)
      s += std::pow(vars[i].dx - vars[j].dx, 2) + std::pow(vars[i].dy - vars[j].dy, 2);
  return s;
}

void check_options(const SofiProblemOptions& o, std::vector<int>& lags) {
  if (o.orders.empty()) throw UsageError("--orders", "no cumulant order given");
  const int max_allowed = o.cross ? kSofiMaxCrossOrder : kSofiMaxOrder;
  std::set<int> seen;
  for (int n : o.orders) {
    if (n < 2 || n > max_allowed)
      throw UsageError("--orders", "order " + std::to_string(n) + " is outside 2.." + std::to_string(max_allowed) +
                                       (o.cross ? " (cross-cumulants)" : ""));
    if (!seen.insert(n).second) throw UsageError("--orders", "order " + std::to_string(n) + " is given twice");
  }
  const int max_order = *std::max_element(o.orders.begin(), o.orders.end());
  if (lags.empty())
    for (int i = 0; i < max_order; ++i) lags.push_back(i);
  if (static_cast<int>(lags.size()) < max_order)
    throw UsageError("--lags", "order " + std::to_string(max_order) + " needs " + std::to_string(max_order) +
                                   " lags, " + std::to_string(lags.size()) + " given");
  std::set<int> distinct;
  for (int l : lags) {
    if (l < 0 || l > 1000) throw UsageError("--lags", "lag " + std::to_string(l) + " is outside 0..1000 frames");
    if (!distinct.insert(l).second && !o.allow_repeated_lags)
      throw UsageError("--lags", "lags must be distinct (lag " + std::to_string(l) +
                                     " repeats; equal lags let shot noise into the cumulant)");
  }
  if (o.cross && !(o.psf_sigma > 0)) throw UsageError("--psf-sigma", "the PSF sigma must be positive");
}

}  // namespace

SofiProblem make_sofi_problem(std::int64_t width, std::int64_t height, const SofiProblemOptions& options) {
  std::vector<int> lags = options.lags;
  check_options(options, lags);
  if (width < 1 || height < 1) throw UsageError("sofi", "empty frame");
  SofiProblem problem;
  problem.width = width;
  problem.height = height;
  problem.moments = options.moments;
  TermTable table(problem);
  const char* what = options.moments ? "central moment" : "cumulant";
  for (int n : options.orders) {
    SofiPlane plane;
    plane.order = n;
    plane.cross = options.cross;
    if (!options.cross) {
      SofiCombo c;
      c.order = n;
      for (int i = 0; i < n; ++i) c.vars[i] = {0, 0, lags[static_cast<std::size_t>(i)]};
      for (int i = 0; i < n; ++i) c.window = std::max(c.window, lags[static_cast<std::size_t>(i)]);
      table.fill(c);
      plane.combo_begin[0] = static_cast<int>(problem.combos.size());
      problem.combos.push_back(c);
      plane.combo_begin[1] = static_cast<int>(problem.combos.size());
      problem.labels.push_back("order " + std::to_string(n) + " auto-" + what + ", lags " + join_ints(std::span<const int>(lags).first(static_cast<std::size_t>(n))));
    } else {
      plane.upsample = n;
      for (int s = 0; s < n * n; ++s) {
        plane.combo_begin[s] = static_cast<int>(problem.combos.size());
        for (const auto& vars : cross_combinations(n, s % n, s / n)) {
          SofiCombo c;
          c.order = n;
          for (int i = 0; i < n; ++i) c.vars[i] = vars[static_cast<std::size_t>(i)];
          c.factor = std::exp(spread_of(vars) / (2.0 * n * options.psf_sigma * options.psf_sigma));
          table.fill(c);
          problem.combos.push_back(c);
        }
      }
      plane.combo_begin[n * n] = static_cast<int>(problem.combos.size());
      std::ostringstream label;
      label << "order " << n << " cross-" << what << ", " << n << "x grid, zero lag, PSF sigma " << options.psf_sigma
            << " px";
      problem.labels.push_back(label.str());
    }
    problem.planes.push_back(plane);
  }
  problem.min_window = problem.combos.front().window;
  for (const auto& c : problem.combos) {
    problem.max_lag = std::max(problem.max_lag, c.window);
    problem.min_window = std::min(problem.min_window, c.window);
  }
  return problem;
}

std::string join_ints(std::span<const int> values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(values[i]);
  }
  return out;
}

std::string SofiProblem::describe() const {
  std::ostringstream out;
  // "block-mean centred, own windows": the estimator of issue 19 (partial files of
  // the earlier estimator, centred on each window's mean over a shared window, are refused).
  out << width << "x" << height << (moments ? " moments" : " cumulants") << " (block-mean centred, own windows)";
  for (const auto& label : labels) out << "; " << label;
  return out.str();
}

}  // namespace nanoscopy
