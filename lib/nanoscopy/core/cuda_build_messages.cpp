#include "nanoscopy/core/cuda_build_messages.hpp"

#include <vector>

namespace nanoscopy {
namespace {

std::vector<std::string> split_architectures(const std::string& list) {
  std::vector<std::string> out;
  std::string item;
  for (const char c : list + ";") {
    if (c == ';' || c == ',') {
      if (!item.empty()) out.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  return out;
}

std::string card(int gpu, const std::string& name, int cc_major, int cc_minor) {
  return "GPU " + std::to_string(gpu) + " (" + name + ", compute capability " + std::to_string(cc_major) + "." +
         std::to_string(cc_minor) + ")";
}

}  // namespace

std::string describe_cuda_architectures(const std::string& architectures) {
  std::string real, ptx;
  for (const std::string& a : split_architectures(architectures)) {
    const auto dash = a.find('-');
    const std::string number = a.substr(0, dash), kind = dash == std::string::npos ? "" : a.substr(dash + 1);
    if (kind != "virtual") real += (real.empty() ? "sm_" : ", sm_") + number;
    if (kind != "real") ptx += (ptx.empty() ? "compute_" : ", compute_") + number;
  }
  if (ptx.empty()) return real.empty() ? "no architecture" : real;
  return real.empty() ? "PTX " + ptx : real + " and PTX " + ptx;
}

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string driver_too_old_message(int driver_cuda_version, int runtime_cuda_version) {
  const std::string driver = cuda_version_text(driver_cuda_version), runtime = cuda_version_text(runtime_cuda_version);
  return "the NVIDIA driver supports CUDA " + driver + " but this build needs CUDA " + runtime +
         " (the toolkit it was built with): update the driver to one for CUDA " + runtime +
         " or newer, or build nanoscopy with a CUDA " + driver + " toolkit (12.0 or newer)";
}

std::string no_code_message(int gpu, const std::string& name, int cc_major, int cc_minor,
                            const std::string& architectures) {
  std::string line = card(gpu, name, cc_major, cc_minor) + " has no code in this build (made for " +
                     describe_cuda_architectures(architectures) + "): ";
  const int arch = cc_major * 10 + cc_minor;
  if (arch < 75) return line + "nanoscopy's kernels need compute capability 7.5 (Turing) or newer; run with --device cpu";
  return line + "rebuild on that machine (-DNANOSCOPY_CUDA_TARGETS=native) or with -DCMAKE_CUDA_ARCHITECTURES=" +
         std::to_string(arch) + "-real, or with -DNANOSCOPY_CUDA_TARGETS=all for every card from Turing on";
}

std::string ptx_too_new_message(int gpu, const std::string& name, int cc_major, int cc_minor,
                                const std::string& architectures, int driver_cuda_version) {
  return card(gpu, name, cc_major, cc_minor) + " has only this build's PTX (" +
         describe_cuda_architectures(architectures) + "), newer than its driver (CUDA " +
         cuda_version_text(driver_cuda_version) +
         ") compiles: update the NVIDIA driver, or rebuild on that machine (-DNANOSCOPY_CUDA_TARGETS=native)";
}

}  // namespace nanoscopy
