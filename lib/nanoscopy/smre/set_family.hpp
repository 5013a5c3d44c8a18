// The family Omega of sets s on which SMRE tests the residual: squares, named
// by their edge. Both variants work on a padded frame whose sides are
// multiples of 32.
//
// exact: every square of edge 1..MRdepth at every position (x and y shifts
//   independent, decision 7). Projection order: edges from large to small; per
//   edge e the e*e "tilings" (shift sx, sy in [0, e)), each a set of disjoint
//   squares (origin sx + a e, sy + b e, fully inside the frame) projected in
//   parallel. Dykstra keeps one q value per pixel per tiling.
// icd: 5 passes i = 0..4 (the paper's Listing 2): the 32x32 tile grid shifted by
//   (2^i, 2^i); in each tile the dyadic squares of edge 32, 16, ..., 2^i aligned
//   to the tile, swept until converged. Tiles that would cross the frame edge
//   are left out of a pass.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "nanoscopy/smre/smre_settings.hpp"

namespace nanoscopy {

inline constexpr int kIcdTile = 32;
inline constexpr int kIcdPasses = 5;
inline constexpr int kIcdScales = 6;  // edges 32, 16, 8, 4, 2, 1

struct SetFamily {
  Projection kind = Projection::exact;
  int mr_depth = 15;  // exact only
  std::int64_t width = 0, height = 0;

  // The square edges the family uses, largest first.
  std::vector<int> edges() const;
  // Calls f(x0, y0) for the top-left corner of every square of edge `edge` in
  // the family (a square that occurs in several ICD passes is visited once per pass).
  void for_each_square(int edge, const std::function<void(std::int64_t, std::int64_t)>& f) const;
  // Number of exact tilings (sum of e^2) = number of q arrays.
  std::int64_t exact_tilings() const;
  std::string describe() const;  // "exact, squares 1..15 px at every shift" / "icd, ..."
};

// ICD pass i: tile-grid offset 2^i, smallest square edge 2^i.
inline constexpr int icd_pass_offset(int pass) { return 1 << pass; }

}  // namespace nanoscopy
