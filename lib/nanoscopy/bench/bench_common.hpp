// Pieces every bench subcommand shares: the machine it ran on, the time, and
// the devices to measure.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "nanoscopy/core/device.hpp"

namespace nanoscopy {

std::string cpu_model();  // /proc/cpuinfo's model name, or "unknown"
std::string utc_now();    // ISO 8601, e.g. 2024-05-01T12:00:00Z

// CPU, hardware threads, GPUs (index, name, compute capability, memory),
// CUDA driver/runtime versions and whether the CUDA backend is compiled in.
nlohmann::json machine_info();

// Where a subcommand's --dir puts its scratch files: the system temp dir when `dir` is empty, else
// `dir`, created with its parents when missing (OutputError naming it when it cannot be).
std::filesystem::path bench_scratch_dir(const std::string& dir);

// The head of a bench subcommand's JSON: {"benchmark": name, "version", "commit", "date", "machine"}.
nlohmann::json bench_document(const std::string& benchmark);

struct BenchDevice {
  std::string label;  // "cpu", "cuda:0", "cuda:all"
  Device device;
};

// The devices named (cpu, cuda:N, cuda:all; UsageError for auto), or cpu,
// every GPU and, with more than one, cuda:all when none is named. DeviceError for a GPU this machine lacks.
std::vector<BenchDevice> bench_devices(const std::vector<std::string>& requested);

}  // namespace nanoscopy
