// `bench fit2d` and `bench simulate spots`: the fitting paper's benchmark.
// Throughput (fits/s and latency per call, host-to-host and device-resident)
// over ROI sizes and batch sizes on the CPU and every GPU; accuracy (the
// paper's Table 1 next to the Cramér–Rao bound), the iteration histogram and
// the stop conditions (the paper's Fig. 8). Markdown on stdout, JSON on request.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "nanoscopy/core/device.hpp"
#include "nanoscopy/fit/fit_types.hpp"

namespace nanoscopy {

struct FitBenchOptions {
  std::vector<int> sizes = {4, 5, 7, 9, 11, 13, 16, 24, 32};
  std::vector<std::int64_t> batches = {10, 100, 1000, 10000, 100000, 1000000};
  std::vector<std::string> devices;       // empty: cpu and every GPU
  std::int64_t cpu_max_batch = 100000;    // CPU cells with larger batches are skipped (minutes each)
  std::int64_t accuracy_fits = 100000;
  std::string model = "sampled";
  // Estimators measured, each on every device and precision: lsq (the paper's, Table 1), wlsq, mle.
  std::vector<std::string> estimators = {"lsq"};
  // The GPUs' fit arithmetic, each measured (the CPU reference computes in double): float, double.
  std::vector<std::string> precisions = {"float", "double"};
  bool quick = false;                     // a small grid (for demos and CI smoke runs)
  bool throughput = true;
  bool accuracy = true;
  std::string json;
  // --model spline (bench/bench_spline.hpp): a spline calibration to use instead of the built-in
  // astigmatic one, and Gpufit's library to compare with.
  std::string calibration;
  std::string gpufit;
};

void add_fit_bench_options(CLI::App& cmd, FitBenchOptions& options);
void run_fit_bench(FitBenchOptions options, std::uint64_t seed, int repeats, bool quiet, std::ostream& out);

struct SpotSimOptions {
  int size = 9;
  std::int64_t count = 1000;
  double signal = 400;
  double background = 40;
  std::string output = "spots.tif";
};

void add_spot_sim_options(CLI::App& cmd, SpotSimOptions& options);
// Writes the ROIs as a uint16 TIFF stack (one ROI per page) and <stem>_truth.csv.
void run_simulate_spots(const SpotSimOptions& options, std::uint64_t seed, bool quiet);

}  // namespace nanoscopy
