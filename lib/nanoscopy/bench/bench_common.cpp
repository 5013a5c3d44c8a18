#include "nanoscopy/bench/bench_common.hpp"

#include <ctime>
#include <fstream>
#include <thread>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/commit.hpp"
#include "nanoscopy/config.hpp"
#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

using json = nlohmann::json;

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

json bench_document(const std::string& benchmark) {
  return {{"benchmark", benchmark},
          {"version", NANOSCOPY_VERSION},
          {"commit", NANOSCOPY_GIT_COMMIT},
          {"date", utc_now()},
          {"machine", machine_info()}};
}

json machine_info() {
  json gpus = json::array();
  for (const auto& g : list_gpus())
    gpus.push_back({{"index", g.index},
                    {"name", g.name},
                    {"compute_capability", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor)},
                    {"memory_gib", static_cast<double>(g.total_memory) / (1 << 30)}});
  return {{"cpu", cpu_model()},
          {"cpu_threads", std::thread::hardware_concurrency()},
          {"gpus", gpus},
          {"cuda_driver", cuda_driver_version()},
          {"cuda_runtime", cuda_runtime_version()},
          {"cuda_backend_compiled", cuda_compiled()}};
}

std::vector<BenchDevice> bench_devices(const std::vector<std::string>& requested) {
  std::vector<BenchDevice> out;
  std::vector<std::string> names = requested;
  if (names.empty()) {
    names.push_back("cpu");
    const auto gpus = list_gpus();
    for (const auto& g : gpus) names.push_back("cuda:" + std::to_string(g.index));
    if (gpus.size() > 1) names.push_back("cuda:all");  // 1 GPU against all of them, end to end
  }
  for (const auto& n : names) {
    auto request = DeviceRequest::parse(n);
    if (request.mode == DeviceRequest::Mode::automatic)
      throw UsageError("--devices", "name devices explicitly (cpu, cuda:N), not auto");
    out.push_back({n, select_device(request, true)});
  }
  return out;
}

std::filesystem::path bench_scratch_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  if (dir.empty()) return fs::temp_directory_path();
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) throw OutputError(dir, "is not a folder");
  fs::create_directories(dir, ec);  // a folder named for this run need not exist yet
  if (ec || !fs::is_directory(dir, ec)) throw OutputError(dir, "cannot create the folder: " + ec.message());
  return dir;
}

}  // namespace nanoscopy
