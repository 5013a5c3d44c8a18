#include "nanoscopy/bench/bench_roi.hpp"

#include <nlohmann/json.hpp>
#include <ostream>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/device.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/fit/engine.hpp"
#include "nanoscopy/loc/track/roi_tracker.hpp"

namespace nanoscopy {

void add_roi_bench_options(CLI::App& cmd, RoiBenchOptions& o) {
  cmd.add_option("--markers", o.markers, "marker ROIs per frame")->default_val(o.markers)->check(CLI::Range(1, 10000));
  cmd.add_option("--size", o.size, "ROI edge in pixels")->default_val(o.size)->check(CLI::Range(3, 32));
  cmd.add_option("--frames", o.frames, "timed frames")->default_val(o.frames)->check(CLI::Range(1, 100000000));
  cmd.add_option("--devices", o.devices, "devices (cpu runs one thread; cuda:N); default: cpu and every GPU")->delimiter(',');
  cmd.add_option("--json", o.json, "write the cells as JSON")->type_name("FILE");
}

void run_roi_bench(const RoiBenchOptions& o, std::uint64_t seed, std::ostream& out) {
  std::vector<std::string> names = o.devices;
  if (names.empty()) {
    names.push_back("cpu");
    for (const auto& g : list_gpus()) names.push_back("cuda:" + std::to_string(g.index));
  }
  if (!o.json.empty()) AtomicOutput check(o.json);  // fail before measuring
  nlohmann::json cells = nlohmann::json::array();
  out << "| device | markers | ROI | frames | p50 µs | p99 µs | mean µs | max µs | markers converged |\n"
      << "|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& name : names) {
    Device device = select_device(DeviceRequest::parse(name), true);
    // One thread on the CPU: a stage-control loop owns one core, and thread
    // start-up would dominate a 10-ROI call.
    auto backend = device.kind == DeviceKind::cpu ? make_cpu_fit_engine(FitSettings{}, 1) : make_fit_engine(device, FitSettings{});
    const auto s = measure_roi_latency(*backend, o.markers, o.size, o.frames, seed);
    out << "| " << backend->name() << " | " << o.markers << " | " << o.size << "x" << o.size << " | " << s.frames << " | "
        << s.p50_us << " | " << s.p99_us << " | " << s.mean_us << " | " << s.max_us << " | " << s.markers_mean << " |\n";
    cells.push_back({{"device", name}, {"backend", backend->name()}, {"markers", o.markers}, {"size", o.size},
                     {"frames", s.frames}, {"p50_us", s.p50_us}, {"p99_us", s.p99_us}, {"mean_us", s.mean_us},
                     {"max_us", s.max_us}});
  }
  if (!o.json.empty()) write_file_atomically(o.json, nlohmann::json{{"roi_latency", cells}}.dump(1) + "\n");
}

}  // namespace nanoscopy
