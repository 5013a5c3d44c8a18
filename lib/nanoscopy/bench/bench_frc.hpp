// `bench frc`: FRC time (window + FFT + ring sums, plans made beforehand and
// not timed; for the GPU including the upload of both images) against the
// image edge on every device, and the largest |FRC_gpu - FRC_cpu| over the
// rings. Test pairs: one blurred random structure plus independent Gaussian
// noise per image. Results as a table and, with --json, as JSON.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace nanoscopy {

struct FrcBenchOptions {
  std::vector<int> sizes{256, 512, 1024, 2048, 4096};
  std::vector<std::string> devices;  // empty: cpu and every GPU
  std::string json;
};

void add_frc_bench_options(CLI::App& cmd, FrcBenchOptions& options);
void run_frc_bench(const FrcBenchOptions& options, std::uint64_t seed, int repeats, bool quiet, std::ostream& out);

}  // namespace nanoscopy
