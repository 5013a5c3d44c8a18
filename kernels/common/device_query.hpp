// Plain C++ view of the CUDA devices, for the backend registry (no CUDA headers).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace nanoscopy::cuda {

struct GpuProperties {
  int index = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  std::size_t total_memory = 0;
  std::size_t free_memory = 0;
  int multiprocessors = 0;
};

// Every visible device; empty when there is no driver or no GPU (never throws).
// `why_none` says why the list is empty (e.g. "no CUDA driver").
std::vector<GpuProperties> query_gpus(std::string* why_none = nullptr);
int driver_version();   // e.g. 13000; 0 without a driver
int runtime_version();

}  // namespace nanoscopy::cuda
