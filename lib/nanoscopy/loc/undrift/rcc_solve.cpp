#include "nanoscopy/loc/undrift/rcc_solve.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {
namespace {

// Segments reachable from `start` over the used pairs.
std::vector<bool> component(std::int64_t n, std::span<const PairShift> pairs, const std::vector<bool>& used,
                            std::int64_t start) {
  std::vector<std::vector<std::int64_t>> next(static_cast<std::size_t>(n));
  for (std::size_t k = 0; k < pairs.size(); ++k)
    if (used[k]) {
      next[static_cast<std::size_t>(pairs[k].i)].push_back(pairs[k].j);
      next[static_cast<std::size_t>(pairs[k].j)].push_back(pairs[k].i);
    }
  std::vector<bool> seen(static_cast<std::size_t>(n), false);
  std::vector<std::int64_t> stack{start};
  seen[static_cast<std::size_t>(start)] = true;
  while (!stack.empty()) {
    const std::int64_t s = stack.back();
    stack.pop_back();
    for (std::int64_t t : next[static_cast<std::size_t>(s)])
      if (!seen[static_cast<std::size_t>(t)]) {
        seen[static_cast<std::size_t>(t)] = true;
        stack.push_back(t);
      }
  }
  return seen;
}

// Least squares of r_ij = d_j − d_i over the used pairs among the segments in `unknown` (index into d, or −1 for
// the reference segment, fixed at 0). Normal equations, Cholesky; both axes share the matrix.
void least_squares(std::span<const PairShift> pairs, const std::vector<bool>& used,
                   const std::vector<std::int64_t>& unknown, std::int64_t m, std::vector<double>& dx,
                   std::vector<double>& dy) {
  const auto mm = static_cast<std::size_t>(m);
  std::vector<double> a(mm * mm, 0.0), bx(mm, 0.0), by(mm, 0.0);
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    if (!used[k]) continue;
    const std::int64_t p = unknown[static_cast<std::size_t>(pairs[k].i)], q = unknown[static_cast<std::size_t>(pairs[k].j)];
    // row: +1 at q, −1 at p
    if (q >= 0) {
      a[static_cast<std::size_t>(q) * mm + static_cast<std::size_t>(q)] += 1.0;
      bx[static_cast<std::size_t>(q)] += pairs[k].x;
      by[static_cast<std::size_t>(q)] += pairs[k].y;
    }
    if (p >= 0) {
      a[static_cast<std::size_t>(p) * mm + static_cast<std::size_t>(p)] += 1.0;
      bx[static_cast<std::size_t>(p)] -= pairs[k].x;
      by[static_cast<std::size_t>(p)] -= pairs[k].y;
    }
    if (p >= 0 && q >= 0) {
      a[static_cast<std::size_t>(p) * mm + static_cast<std::size_t>(q)] -= 1.0;
      a[static_cast<std::size_t>(q) * mm + static_cast<std::size_t>(p)] -= 1.0;
    }
  }
  // Cholesky A = L Lᵀ in place (lower triangle). Connected ⇒ positive definite.
  for (std::size_t c = 0; c < mm; ++c) {
    double d = a[c * mm + c];
    for (std::size_t k = 0; k < c; ++k) d -= a[c * mm + k] * a[c * mm + k];
    if (!(d > 1e-12)) throw InputError("undrift", "the segment pairs do not determine the drift");
    a[c * mm + c] = std::sqrt(d);
    for (std::size_t r = c + 1; r < mm; ++r) {
      double s = a[r * mm + c];
      for (std::size_t k = 0; k < c; ++k) s -= a[r * mm + k] * a[c * mm + k];
      a[r * mm + c] = s / a[c * mm + c];
    }
  }
  for (std::vector<double>* b : {&bx, &by}) {
    std::vector<double>& v = *b;
    for (std::size_t r = 0; r < mm; ++r) {
      for (std::size_t k = 0; k < r; ++k) v[r] -= a[r * mm + k] * v[k];
      v[r] /= a[r * mm + r];
    }
    for (std::size_t r = mm; r-- > 0;) {
      for (std::size_t k = r + 1; k < mm; ++k) v[r] -= a[k * mm + r] * v[k];
      v[r] /= a[r * mm + r];
    }
  }
  dx.assign(unknown.size(), 0.0);
  dy.assign(unknown.size(), 0.0);
  for (std::size_t s = 0; s < unknown.size(); ++s)
    if (unknown[s] >= 0) {
      dx[s] = bx[static_cast<std::size_t>(unknown[s])];
      dy[s] = by[static_cast<std::size_t>(unknown[s])];
    }
}

}  // namespace

RccSolution solve_rcc(std::int64_t n, std::span<const PairShift> pairs, double max_error) {
  RccSolution out;
  const auto nn = static_cast<std::size_t>(n);
  out.used.resize(pairs.size());
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const PairShift& p = pairs[k];
    if (p.i < 0 || p.j < 0 || p.i >= n || p.j >= n || p.i == p.j)
      throw UsageError("undrift", "a pair of segments outside 0.." + std::to_string(n - 1));
    out.used[k] = p.valid && std::isfinite(p.x) && std::isfinite(p.y);
  }
  // The largest group of segments connected by usable pairs.
  std::vector<bool> best;
  std::int64_t best_size = 0;
  std::vector<bool> visited(nn, false);
  for (std::int64_t s = 0; s < n; ++s) {
    if (visited[static_cast<std::size_t>(s)]) continue;
    const auto c = component(n, pairs, out.used, s);
    const auto size = std::count(c.begin(), c.end(), true);
    for (std::size_t t = 0; t < nn; ++t) visited[t] = visited[t] || c[t];
    if (size > best_size) {
      best_size = size;
      best = c;
    }
  }
  out.solved = best;
  out.dx.assign(nn, 0.0);
  out.dy.assign(nn, 0.0);
  if (best_size < 2) {
    std::fill(out.used.begin(), out.used.end(), false);
    return out;
  }
  for (std::size_t k = 0; k < pairs.size(); ++k)
    out.used[k] = out.used[k] && best[static_cast<std::size_t>(pairs[k].i)];
  // Unknowns: the solved segments after the group's first (the reference).
  std::vector<std::int64_t> unknown(nn, -1);
  std::int64_t m = 0;
  bool reference = false;
  for (std::size_t s = 0; s < nn; ++s) {
    if (!best[s]) continue;
    if (!reference) {
      reference = true;
      continue;
    }
    unknown[s] = m++;
  }
  std::vector<double> residual(pairs.size(), 0.0);
  for (int round = 0;; ++round) {
    least_squares(pairs, out.used, unknown, m, out.dx, out.dy);
    std::vector<double> lengths;
    double worst = 0.0, sum2 = 0.0;
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      if (!out.used[k]) continue;
      const double ex = pairs[k].x - (out.dx[static_cast<std::size_t>(pairs[k].j)] - out.dx[static_cast<std::size_t>(pairs[k].i)]);
      const double ey = pairs[k].y - (out.dy[static_cast<std::size_t>(pairs[k].j)] - out.dy[static_cast<std::size_t>(pairs[k].i)]);
      residual[k] = std::hypot(ex, ey);
      lengths.push_back(residual[k]);
      worst = std::max(worst, residual[k]);
      sum2 += residual[k] * residual[k];
    }
    out.rms_residual = lengths.empty() ? 0.0 : std::sqrt(sum2 / static_cast<double>(lengths.size()));
    if (round == 0) {
      if (max_error > 0) {
        out.threshold = max_error;
      } else {
        auto mid = lengths.begin() + static_cast<std::ptrdiff_t>(lengths.size() / 2);
        std::nth_element(lengths.begin(), mid, lengths.end());
        out.threshold = 4.0 * (*mid / 1.1774);
      }
    }
    if (!(worst > out.threshold)) break;
    // Drop the worst pairs first, keeping every solved segment connected.
    const double limit = std::max(out.threshold, 0.5 * worst);
    std::vector<std::size_t> order;
    for (std::size_t k = 0; k < pairs.size(); ++k)
      if (out.used[k] && residual[k] > limit) order.push_back(k);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return residual[a] > residual[b]; });
    std::int64_t dropped = 0;
    for (std::size_t k : order) {
      out.used[k] = false;
      const auto c = component(n, pairs, out.used, pairs[k].i);
      if (std::count(c.begin(), c.end(), true) < best_size) {
        out.used[k] = true;  // it holds a segment to the others: keep it
        continue;
      }
      ++dropped;
    }
    out.dropped += dropped;
    if (dropped == 0) break;
  }
  return out;
}

}  // namespace nanoscopy
