// Backend selection: `--device auto|cpu|cuda|cuda:N|cuda:all`. The CPU backend
// always exists; CUDA exists when compiled in (NANOSCOPY_HAVE_CUDA) and a GPU
// is visible. Asking for CUDA without a usable GPU is a DeviceError, never a
// silent CPU run; `auto` uses the GPU when there is one and says so once.
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
};

bool cuda_compiled();                       // NANOSCOPY_HAVE_CUDA
std::vector<GpuInfo> list_gpus(std::string* why_none = nullptr);  // empty without CUDA build or GPU
int cuda_driver_version();                  // 0 when unknown
int cuda_runtime_version();

// Resolves a request against what this machine has. DeviceError for cuda
// without a usable GPU or an index out of range; `auto` falls back to the CPU
// and, unless quiet, says why on stderr.
Device select_device(const DeviceRequest& request, bool quiet);

}  // namespace nanoscopy
