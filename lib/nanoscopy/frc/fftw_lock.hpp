// FFTW's (double) planner is not thread-safe: the FRC and decorrelation CPU
// engines plan and destroy their plans under this one lock (executing distinct
// plans needs none).
#pragma once

#include <mutex>

namespace nanoscopy {

std::mutex& fftw_planner_mutex();

}  // namespace nanoscopy
