#include "nanoscopy/loc/recenter.hpp"

#include "nanoscopy/core/parse_number.hpp"

namespace nanoscopy {

double recenter_distance_px(const std::string& value, bool spline, const std::string& where) {
  return distance_option_px(value, spline ? 1.0 : 0.0, where);
}

}  // namespace nanoscopy
