// `bench smre`: the SMRE paper's measurements on simulated data.
//  - runtime: a fixed number of ADMM iterations against the image edge for CPU
//    exact, CPU ICD, GPU exact and GPU ICD (the paper's Fig. 8; start-up such as
//    the weights excluded, as there). CPU runs that would take longer than a
//    budget are timed over fewer iterations and scaled (marked "extrapolated").
//  - quality: camera.png (scikit-image, CC0) blurred with sigma_PSF = 4 px plus
//    Gaussian noise 1, 3, 10: |x - x*| / |I - x*| for ICD and exact.
//  - stack: frames/s for a stack of 512^2 frames with ICD at 100 iterations.
// Results as a table on stdout and as JSON (scripts/plot_bench.py smre draws Fig. 8).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace nanoscopy {

struct SmreBenchOptions {
  std::vector<int> sizes{256, 512, 1024, 2048};
  long long iterations = 200;
  int mr_depth = 15;
  std::vector<std::string> devices;  // empty: cpu and every GPU
  double cpu_budget_s = 20;          // per CPU measurement
  std::string truth;                 // default: scikit-image's camera.png when installed
  std::vector<double> noise{1, 3, 10};
  double psf_sigma = 4;
  long long quality_iterations = 3000;
  std::string regularizer = "tv";
  std::int64_t stack_frames = 64;
  bool skip_runtime = false, skip_quality = false, skip_stack = false;
  std::string images;                // directory for the quality images (truth, measured, restored)
  std::string json;
};

void add_smre_bench_options(CLI::App& cmd, SmreBenchOptions& options);
void run_smre_bench(const SmreBenchOptions& options, std::uint64_t seed, bool quiet, std::ostream& out);

}  // namespace nanoscopy
