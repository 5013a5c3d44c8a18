// Where a run computes: `--device auto|cpu|cuda|cuda:N|cuda:all` parsed into a
// request, and the Device it resolves to (backend/registry.hpp select_device:
// CUDA when compiled in and a GPU is visible; asking for CUDA without a usable
// GPU is a DeviceError, never a silent CPU run). Plain values every layer may
// hold; only the registry turns them into engines.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace nanoscopy {

enum class DeviceKind { cpu, cuda };

struct DeviceRequest {
  enum class Mode { automatic, cpu, cuda } mode = Mode::automatic;
  int gpu = -1;      // cuda:N; -1 = the first
  bool all = false;  // cuda:all
  static DeviceRequest parse(const std::string& text);  // UsageError on bad text
  std::string to_string() const;
};

struct GpuInfo {
  int index = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  std::size_t total_memory = 0;
  std::size_t free_memory = 0;
  int multiprocessors = 0;
};

// The backend a run uses.
struct Device {
  DeviceKind kind = DeviceKind::cpu;
  std::vector<int> gpus;  // CUDA device indices (one, or several for cuda:all)
  int cpu_threads = 1;    // for the CPU backend
  int visible_gpus = 0;   // GPUs this process sees (MPI ranks share them out: cluster/mpi.hpp)
};

}  // namespace nanoscopy
