#include "nanoscopy/loc/formats/picasso_localize_keys.hpp"

#include "nanoscopy/loc/formats/loc_yaml.hpp"

namespace nanoscopy {

std::vector<std::pair<std::string, std::string>> picasso_localize_keys(int box, double min_net_gradient,
                                                                       Estimator estimator) {
  // number_text is the shortest round-trip text: 5000.0 reads "5000", as Picasso's integer spin box writes it.
  return {{"Box Size", std::to_string(box)},
          {"Min. Net Gradient", detail::number_text(min_net_gradient)},
          {"Fit method", estimator == Estimator::mle ? "gaussmle" : "gausslq"}};
}

}  // namespace nanoscopy
