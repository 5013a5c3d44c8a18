#include "nanoscopy/backend/device.hpp"

#include <charconv>
#include <filesystem>
#include <cstdio>
#include <thread>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

DeviceRequest DeviceRequest::parse(const std::string& text) {
  DeviceRequest r;
  if (text == "auto" || text.empty()) return r;
  if (text == "cpu") {
    r.mode = Mode::cpu;
    return r;
  }
  if (text == "cuda" || text == "gpu") {
    r.mode = Mode::cuda;
    return r;
  }
  if (text.rfind("cuda:", 0) == 0) {
    r.mode = Mode::cuda;
    const std::string rest = text.substr(5);
    if (rest == "all") {
      r.all = true;
      return r;
    }
    int index = -1;
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), index);
    if (ec == std::errc() && p == rest.data() + rest.size() && index >= 0) {
      r.gpu = index;
      return r;
    }
  }
  throw UsageError("--device", "'" + text + "' is not a device (use auto, cpu, cuda, cuda:N or cuda:all)");
}

std::string DeviceRequest::to_string() const {
  switch (mode) {
    case Mode::automatic: return "auto";
    case Mode::cpu: return "cpu";
    case Mode::cuda: return all ? "cuda:all" : gpu >= 0 ? "cuda:" + std::to_string(gpu) : "cuda";
  }
  return "auto";
}

Device select_device(const DeviceRequest& request, bool quiet) {
  Device cpu;
  cpu.kind = DeviceKind::cpu;
  cpu.cpu_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (request.mode == DeviceRequest::Mode::cpu) return cpu;

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
