#include "nanoscopy/backend/registry.hpp"

#include <filesystem>
#include <cstdio>
#include <thread>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

Device select_device(const DeviceRequest& request, bool quiet) {
  Device cpu;
  cpu.kind = DeviceKind::cpu;
  cpu.cpu_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (request.mode == DeviceRequest::Mode::cpu) return cpu;

  // A GPU this build cannot use (a driver older than the runtime, a card without code in the binary) is
  // an error even when the device was left to auto: running on the CPU instead would hide a build that
  // does not fit the lab's card, and a kernel launch on it would fail later and less clearly.
  if (const std::string mismatch = cuda_build_mismatch(request.all || request.gpu < 0 ? -1 : request.gpu);
      !mismatch.empty())
    throw DeviceError("--device " + request.to_string(), mismatch);
  std::string why;
  const auto gpus = list_gpus(&why);
  if (gpus.empty()) {
    if (request.mode == DeviceRequest::Mode::cuda)
      throw DeviceError("--device " + request.to_string(), "no usable GPU: " + why);
    // Say so when a GPU is there but cannot be used (driver too old, busy, broken);
    // a machine without an NVIDIA driver simply has no GPU to talk about.
    if (!quiet && cuda_compiled() && (cuda_driver_version() > 0 || std::filesystem::exists("/proc/driver/nvidia")))
      std::fprintf(stderr, "note: the GPU cannot be used (%s); running on the CPU\n", why.c_str());
    return cpu;
  }
  Device d;
  d.kind = DeviceKind::cuda;
  d.visible_gpus = static_cast<int>(gpus.size());
  if (request.all) {
    for (const auto& g : gpus) d.gpus.push_back(g.index);
  } else {
    const int index = request.gpu >= 0 ? request.gpu : gpus.front().index;
    if (index >= static_cast<int>(gpus.size()))
      throw DeviceError("--device " + request.to_string(),
                        "GPU " + std::to_string(index) + " does not exist (this machine has " +
                            std::to_string(gpus.size()) + ")");
    d.gpus.push_back(index);
  }
  return d;
}

}  // namespace nanoscopy
