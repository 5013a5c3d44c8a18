// The weights c_s(alpha) of the multi-resolution constraint c_s sum_{i in s} eps_i^2 <= sigma^2
// (SMRE paper section 2.1; notes/reference.md 4). With T_s = sum (eps_i/sigma)^2 and the
// fourth-root approximation T_s^(1/4) ~ N(mu_s, sigma_s^2), mu_s = (|s| - 1/2)^(1/4),
// sigma_s^2 = 1/(8 sqrt|s|): c_s = (mu_s + q sigma_s)^(-4), where q is
//  - monte_carlo: the alpha-quantile (exact order statistic) of
//    max_s (T_s^(1/4) - mu_s)/sigma_s over the whole family under pure N(0,1)
//    noise, from a seeded set of noise images; cached on disk per (family, size,
//    alpha, samples, seed);
//  - closed_form: per scale, with n = pixels/|s| disjoint squares taken as
//    independent (Sidak): q = Phi^-1((1 + alpha^(1/n))/2).
// alpha is the coverage: the probability that pure noise satisfies every constraint.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/smre/set_family.hpp"

namespace nanoscopy {

struct Weights {
  std::vector<int> edges;  // square edges, largest first (as SetFamily::edges())
  std::vector<double> c;   // c_s for a square of that edge
  std::vector<double> q;   // the quantile used for that edge
  WeightMethod method = WeightMethod::closed_form;
  double coverage = 0.9;
  int samples = 0;         // Monte Carlo only
  bool from_cache = false;
  double c_for_edge(int edge) const;  // InputError-free: edge must be in `edges`
};

double normal_quantile(double p);  // Phi^-1(p), |relative error| < 1e-9 in (0, 1)
// c_s for a set of `set_pixels` pixels and quantile q.
double weight_from_quantile(double set_pixels, double q);
// Closed form for one set size on an image of `image_pixels` pixels.
double closed_form_weight(double set_pixels, double image_pixels, double coverage);

struct WeightOptions {
  WeightMethod method = WeightMethod::monte_carlo;
  double coverage = 0.9;
  int samples = 500;
  std::uint64_t seed = 20140101;
  bool use_cache = true;     // $XDG_CACHE_HOME/nanoscopy (or ~/.cache/nanoscopy)
  bool quiet = true;         // progress of a long Monte Carlo on stderr
};
Weights compute_weights(const SetFamily& family, const WeightOptions& options);

// max over the family of c_s sum_{i in s} eps_i^2 / sigma^2 for one frame: <= 1
// when eps satisfies every constraint (the report's "largest constraint ratio").
double max_constraint_ratio(std::span<const float> eps, const SetFamily& family, const Weights& w, double sigma);

}  // namespace nanoscopy
