// Whether NANOSCOPY_STAGE_PROFILE is set (and not "0"): the developer's
// diagnostic that times the localizer's GPU stages (kernels/common/stage_profile)
// and the pipeline's main thread (loc/pipeline.cpp). Read once per process.
#pragma once

#include <cstdlib>
#include <string>

namespace nanoscopy {

inline bool stage_profile_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("NANOSCOPY_STAGE_PROFILE");
    return v && *v && std::string(v) != "0";
  }();
  return on;
}

}  // namespace nanoscopy
