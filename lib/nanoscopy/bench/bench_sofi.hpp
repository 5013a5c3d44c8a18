// `bench sofi`: the SMRE paper's SOFI measurements on simulated data, and speed.
//  - quality: a simulated quantum-dot stack (power-law blinking); SOFI2,
//    SOFI2(SMRE) (SMRE on every frame first) and SMRE(SOFI2) (SMRE on the
//    SOFI2 image), SOFI4, balanced SOFI and the mean image, each resolved by FRC
//    of the even- against the odd-frame image (threshold 2 sigma as in the
//    paper, and 1/7; the paper: 129, 95, 127 nm), and each compared with the
//    simulator's truth (sofi_truth.hpp): with the sample (every emitter by its
//    brightness, PSF sigma / 2), which ranks the images, and with its own ideal.
//  - speed: frames/s of orders 2 and 2-4, and of balanced SOFI (orders 2-4 and
//    the deconvolution on the same device), from a 512x512 uint16 TIFF in the
//    page cache (end to end, every device) and with --cold from a cold file,
//    reading alone as sofi reads (1 and N threads) for scale, and with the
//    frames already on the GPU the kernels' bandwidth against the nominal peak.
// A table on stdout and JSON; the images as TIFF and PNG with --images.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "nanoscopy/core/device.hpp"

namespace nanoscopy {

struct SofiBenchOptions {
  std::vector<std::string> devices;  // empty: cpu and every GPU
  // quality
  std::int64_t frames = 2000;
  std::int64_t size = 128;
  int emitters = 400;
  double psf_sigma = 2.0;     // px
  double pixel_size = 100;    // nm
  std::string smre_params;    // smre parameter file; default: the settings of params/sofi-smre.prm
  std::string quality_device; // default: the first GPU, else cpu
  // speed
  std::int64_t speed_frames = 6000;
  std::int64_t speed_size = 512;
  std::int64_t cpu_frames = 600;  // the CPU is timed over fewer frames
  std::string dir;                // where the test stacks go (default: system temp)
  bool skip_quality = false, skip_speed = false;
  bool skip_smre = false;        // quality without the two SMRE rows
  bool keep_stack = false;        // leave the speed stack in --dir (to time the sofi CLI on it)
  int read_threads = 0;           // speed: sofi's Input/read threads (0: auto)
  bool cold = false;              // speed: also from a cold file (its cached pages dropped before each pass)
  std::string images;
  std::string json;
};

void add_sofi_bench_options(CLI::App& cmd, SofiBenchOptions& options);
void run_sofi_bench(const SofiBenchOptions& options, std::uint64_t seed, int repeats, bool quiet, std::ostream& out);

}  // namespace nanoscopy
