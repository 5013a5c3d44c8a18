// P_G (eq. 12-14): projection of a residual onto the intersection of the sets
// {c_s sum_{i in s} eps_i^2 <= sigma^2} by Dykstra's algorithm, CPU reference.
// Per set: y = eps - q_s, eps_s = P_s(y), q_s = eps_s - y. One frame, row-major,
// sides multiples of 32.
//
// Warm start: Dykstra is cyclic block ascent on the dual, where q holds the dual
// variables and eps = w + sum_s q_s at every step. It converges from any q, so
// a projection may start from the q of the previous ADMM iteration (whose input
// w differs little) with eps = w + sum_s q_s; it then needs a few sweeps where a
// cold start (q = 0, eps = w) needs hundreds, and reaches the same projection.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nanoscopy/smre/set_family.hpp"
#include "nanoscopy/smre/weights.hpp"

namespace nanoscopy {

struct DykstraControl {
  double tolerance = 1e-3;  // stop when mean |eps change| over a sweep < tolerance * sigma
  int max_sweeps = 200;
  int fixed_sweeps = 0;     // > 0: exactly this many (ICD: --icd-sweeps)
  bool warm_start = false;  // reuse q (which must have the right size) instead of zeroing it
};

// Projection onto one square (eq. 14). Returns the factor applied.
float project_square(std::span<float> eps, std::int64_t w, std::int64_t x0, std::int64_t y0, int edge, double c,
                     double sigma);

// Exact Dykstra over every tiling of the family; `q` holds exact_tilings() * w * h
// values (resized and zeroed unless warm-starting). Returns sweeps done.
int project_exact_cpu(std::span<float> eps, const SetFamily& family, const Weights& w, double sigma,
                      const DykstraControl& control, std::vector<float>& q);

// Incomplete Dykstra: the 5 shifted passes, each tile swept until its mean
// |change| < tolerance * sigma (or fixed_sweeps times). `q` holds the dual
// variables of every pass and scale, icd_passes * icd_scales * w * h values.
// Returns the largest number of sweeps any tile needed.
int project_icd_cpu(std::span<float> eps, const SetFamily& family, const Weights& w, double sigma,
                    const DykstraControl& control, std::vector<float>& q);

}  // namespace nanoscopy
