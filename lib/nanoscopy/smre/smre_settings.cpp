#include "nanoscopy/smre/smre_settings.hpp"

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

const char* to_string(Regularizer r) {
  switch (r) {
    case Regularizer::l2: return "l2";
    case Regularizer::tv: return "tv";
    case Regularizer::l1: return "l1";
  }
  return "?";
}

const char* to_string(Projection p) { return p == Projection::exact ? "exact" : "icd"; }

const char* to_string(WeightMethod m) { return m == WeightMethod::monte_carlo ? "monte-carlo" : "closed-form"; }

Regularizer parse_regularizer(const std::string& text) {
  if (text == "l2" || text == "quadratic") return Regularizer::l2;
  if (text == "tv") return Regularizer::tv;
  if (text == "l1") return Regularizer::l1;
  throw UsageError("regularizer", "'" + text + "' is not one of l2, tv, l1");
}

WeightMethod parse_weight_method(const std::string& text) {
  if (text == "monte-carlo" || text == "mc") return WeightMethod::monte_carlo;
  if (text == "closed-form") return WeightMethod::closed_form;
  throw UsageError("weights", "'" + text + "' is not one of monte-carlo, closed-form");
}

}  // namespace nanoscopy
