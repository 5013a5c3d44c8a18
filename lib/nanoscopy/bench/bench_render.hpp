// `bench render` and the hook other benchmarks call (bench postprocess): the
// time of fit2d render's accumulation on a device for N simulated
// localizations — the Renderer's conversion to render points, the transfer,
// the kernels and reading the picture back; not reading a file. The scene: a
// square field (default 40 µm) of 100 nm camera pixels rendered at 10 nm
// (4,000 x 4,000), uniform positions, precision 5 to 15 nm, z uniform in
// ±400 nm. N beyond 2^22 repeats a pool of 2^22 simulated localizations
// (the same pixels are hit again, as a denser sample's would be).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "nanoscopy/core/device.hpp"
#include "nanoscopy/loc/render/engine.hpp"

namespace nanoscopy {

struct RenderBenchCase {
  std::int64_t localizations = 1000000;
  RenderMode mode = RenderMode::gaussian;
  bool color_z = false;
  double pixel_nm = 10;   // rendered pixel
  double field_um = 40;   // the square field's side
};

struct RenderTiming {
  std::string engine;              // the engine's name ("cpu", "cuda:0 (NVIDIA H100 …)")
  std::int64_t width = 0, height = 0;
  std::int64_t rendered = 0;       // localizations inside the field (all of them here)
  std::vector<double> seconds;     // per repeat: a new engine's accumulation and read-back (made beforehand)
  double median_seconds = 0;
  double integral = 0;             // the picture's sum (≈ rendered, a check that the work was done)
};

// Renders c.localizations on `device` `repeats` (≥ 1) times, each on a freshly
// made engine (not timed). UsageError for a case the renderer refuses.
RenderTiming time_render(const Device& device, const RenderBenchCase& c, std::uint64_t seed, int repeats);

struct RenderBenchOptions {
  std::vector<double> locs{1e6, 1e7};
  std::vector<std::string> devices;  // empty: cpu and every GPU
  std::string mode = "gaussian";
  std::string color = "none";
  double pixel_nm = 10, field_um = 40;
  std::string json;
};

void add_render_bench_options(CLI::App& cmd, RenderBenchOptions& options);
void run_render_bench(const RenderBenchOptions& options, std::uint64_t seed, int repeats, bool quiet, std::ostream& out);

}  // namespace nanoscopy
