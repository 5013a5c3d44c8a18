#include "nanoscopy/core/device.hpp"

#include <charconv>

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

}  // namespace nanoscopy
