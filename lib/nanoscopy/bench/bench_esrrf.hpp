// `bench esrrf` (issue 28): eSRRF's speed and its quality against the truth.
//  - speed: frames/s end to end (a uint16 TIFF in the page cache -> the image)
//    per device and frame size at magnification 5; the 1,000 frames of 512^2 case
//    against the target (<= 2 s on an H100) and the special-function floor (~0.3 s).
//  - quality: simulated blinking emitters (random points and rings): Pearson r of
//    eSRRF (AVG, VAR, TAC2), SOFI2, balanced SOFI and the mean image against the
//    sample (emitters by brightness, PSF sigma / 2) on the magnified grid (the
//    camera-grid images upsampled by Catmull-Rom) inside eSRRF's zero border, and
//    against each kind's own ideal (sofi_truth.hpp's cumulant weights);
//    the QnR sweep's choice judged against the truth (the pair the truth prefers).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace nanoscopy {

struct EsrrfBenchOptions {
  std::vector<std::string> devices;  // empty: cpu and every GPU
  int magnification = 5;
  // quality
  // bench sofi's stack (128^2, 2,000 frames, 400 emitters): small stacks hold a ring or two and too few
  // blinking cycles for the second-order images.
  std::int64_t frames = 2000;
  std::int64_t size = 128;
  int emitters = 400;
  double psf_sigma = 1.5;
  double pixel_size = 100;
  // bench sofi's rings (radius 150-300 nm); --ring-radius-min/max change them. The mean image correlates
  // 0.90-0.93 with the sample on rings of 100-300 nm radius (a ring blurred by sigma/2 is a smooth object):
  // the bench prints that room above the mean, 1 - r(mean), the most any method can gain in Pearson r.
  double ring_radius_min_nm = 150;
  double ring_radius_max_nm = 300;
  std::string quality_device;  // default: the first GPU, else cpu
  std::string sweep = "radius=1:2:0.5,sensitivity=1:3";
  // speed
  std::int64_t speed_frames = 1000;
  std::vector<std::int64_t> speed_sizes{128, 256, 512};
  std::int64_t cpu_frames = 4;  // the CPU is timed over fewer frames
  std::string dir;
  bool skip_quality = false, skip_speed = false, skip_sweep = false;
  std::string images;
  std::string json;
};

void add_esrrf_bench_options(CLI::App& cmd, EsrrfBenchOptions& options);
void run_esrrf_bench(const EsrrfBenchOptions& options, std::uint64_t seed, bool quiet, std::ostream& out);

}  // namespace nanoscopy
