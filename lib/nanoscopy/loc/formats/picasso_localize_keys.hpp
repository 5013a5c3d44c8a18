// Picasso Localize's identification and fit keys, spelled and formatted as Picasso 0.10.3 writes
// them into a localization .yaml (picasso/localize.py: identify's "Box Size" and "Min. Net
// Gradient", fit2D's "Fit method"), so that Picasso and scripts written for its files read our
// settings under its names. Written next to our own keys (Detection/box, Fit/estimator, ...).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "nanoscopy/fit/fit_types.hpp"

namespace nanoscopy {

// "Box Size" (the ROI edge in camera pixels, an integer), "Min. Net Gradient" (camera counts, as
// Picasso's identification threshold; an integer when it is one, 0 when off) and "Fit method"
// (Picasso's fitting_method: "gaussmle" for mle, "gausslq" for lsq and wlsq, Picasso having no
// weighted least squares of its own).
std::vector<std::pair<std::string, std::string>> picasso_localize_keys(int box, double min_net_gradient,
                                                                       Estimator estimator);

}  // namespace nanoscopy
