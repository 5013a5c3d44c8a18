// Plain C++ view of the CUDA devices, for the backend registry (no CUDA headers).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "nanoscopy/core/device.hpp"

namespace nanoscopy::cuda {

// Every visible device; empty when there is no driver or no GPU (never throws).
// `why_none` says why the list is empty (e.g. "no CUDA driver").
std::vector<GpuInfo> query_gpus(std::string* why_none = nullptr);
int driver_version();   // e.g. 13000; 0 without a driver
int runtime_version();
// Nominal peak memory bandwidth in bytes/s (2 x memory clock x bus width); 0 when unknown.
double peak_memory_bandwidth(int gpu);

}  // namespace nanoscopy::cuda
