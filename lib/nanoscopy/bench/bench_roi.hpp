// `bench roi`: per-frame latency of fit2d --roi (cut 10 marker ROIs from a
// frame, one fit call, the drift) on the CPU and every GPU: p50 and p99.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace nanoscopy {

struct RoiBenchOptions {
  int markers = 10;
  int size = 9;
  std::int64_t frames = 10000;
  std::vector<std::string> devices;  // empty: cpu (1 thread, as a stage controller would run it) and every GPU
  std::string json;
};

void add_roi_bench_options(CLI::App& cmd, RoiBenchOptions& options);
void run_roi_bench(const RoiBenchOptions& options, std::uint64_t seed, std::ostream& out);

}  // namespace nanoscopy
