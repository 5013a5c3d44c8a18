// `bench decorr`: decorrelation analysis (frc decorr) per image size on every
// device: the time of one whole analysis (upload, apodization, FFT, three
// passes of radius-bin sums, peaks and refinement on the host), the same from
// an image already uploaded (device-resident), and the transform alone
// (apodization + FFT: the one-FFT floor the GPU target is judged against).
// Test images: blurred random points (sigma 1.5 px) plus Gaussian noise; a
// second noise realisation gives the FRC (1/7) of the pair to compare with.
// Also kcMax's difference from the CPU's. Results as a table and, with --json, as JSON.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace nanoscopy {

struct DecorrBenchOptions {
  std::vector<int> sizes{256, 512, 1024, 2048};
  std::vector<std::string> devices;  // empty: cpu and every GPU
  std::string json;
};

// The bench's (and the tests') structure: sparse points (one per 20 px, 100 counts each) blurred by a
// periodic Gaussian of sigma px, on a background of 10; width x height, row-major.
std::vector<float> decorr_blurred_points(std::int64_t width, std::int64_t height, double sigma, std::uint64_t seed);
// `image` plus white Gaussian noise of standard deviation sd.
std::vector<float> decorr_with_noise(std::vector<float> image, double sd, std::uint64_t seed);

void add_decorr_bench_options(CLI::App& cmd, DecorrBenchOptions& options);
void run_decorr_bench(const DecorrBenchOptions& options, std::uint64_t seed, int repeats, bool quiet,
                      std::ostream& out);

}  // namespace nanoscopy
