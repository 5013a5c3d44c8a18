#include "common/device_query.hpp"

#include <cuda_runtime.h>

#include <string>

namespace nanoscopy::cuda {

std::vector<GpuInfo> query_gpus(std::string* why_none) {
  std::vector<GpuInfo> gpus;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (why_none) *why_none = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    cudaGetLastError();  // clear the sticky-free error so later calls are not confused
    return gpus;
  }
  std::string unusable;  // why a GPU that is there cannot be used (busy, exclusive, broken)
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    GpuInfo g;
    g.index = i;
    g.name = prop.name;
    g.cc_major = prop.major;
    g.cc_minor = prop.minor;
    g.total_memory = prop.totalGlobalMem;
    g.multiprocessors = prop.multiProcessorCount;
    // A context must come up on it: an exclusive-process GPU in use elsewhere,
    // or one in a bad state, is listed but cannot be used.
    int previous = 0;
    cudaGetDevice(&previous);
    std::size_t free_b = 0, total_b = 0;
    cudaError_t probe = cudaSetDevice(i);
    if (probe == cudaSuccess) probe = cudaMemGetInfo(&free_b, &total_b);
    cudaSetDevice(previous);
    if (probe != cudaSuccess) {
      unusable = "GPU " + std::to_string(i) + " (" + prop.name + "): " + cudaGetErrorName(probe) + ": " +
                 cudaGetErrorString(probe);
      cudaGetLastError();
      continue;
    }
    g.free_memory = free_b;
    gpus.push_back(g);
  }
  if (gpus.empty() && !unusable.empty()) {
    if (why_none) *why_none = unusable;
    return gpus;
  }
  if (gpus.empty() && why_none) *why_none = "no CUDA device is visible";
  return gpus;
}

int driver_version() {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess) return 0;
  return v;
}

int runtime_version() {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) return 0;
  return v;
}

double peak_memory_bandwidth(int gpu) {
  int clock_khz = 0, bus_bits = 0;
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, gpu) != cudaSuccess ||
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, gpu) != cudaSuccess)
    return 0;
  return 2.0 * clock_khz * 1e3 * bus_bits / 8.0;  // double data rate
}

}  // namespace nanoscopy::cuda
