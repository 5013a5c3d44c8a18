// `bench localize`: fit2d end to end. Simulates a uint16 TIFF stack, then
// times (a) reading it alone as the pipeline reads it (its FrameSource, with
// one and with N read threads) and, per device, (b) the whole pipeline (read →
// detect → fit → filter → Picasso HDF5) and (c) the localizer alone on frames
// already in host memory; (a) and (b) from the page cache and, with --cold,
// from a cold file too. Markdown on stdout, JSON on request.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace nanoscopy {

struct LocalizeBenchOptions {
  std::int64_t frames = 10000;
  int size = 256;                      // frame edge, px
  double spots = 20;                   // mean emitters on per frame
  std::int64_t unique_frames = 500;    // the stack repeats a simulated movie of this many frames
  std::int64_t chunk_frames = 256;     // the pipeline's chunk
  std::int64_t memory_frames = 2560;   // frames for the localizer-alone timing (c)
  std::vector<std::string> devices;    // empty: cpu and every GPU
  int read_threads = 0;                // the pipeline's Input/read threads (0: auto)
  int engines_per_gpu = 0;             // localize engines per GPU (0: as fit2d, localize_engines_per_gpu)
  bool cold = false;                   // also time (a) and (b) with the file's cached pages dropped first
  std::string dir;                     // for the stack and the outputs (default: system temp dir)
  std::string json;
};

void add_localize_bench_options(CLI::App& cmd, LocalizeBenchOptions& options);
void run_localize_bench(const LocalizeBenchOptions& options, std::uint64_t seed, bool quiet, std::ostream& out);

}  // namespace nanoscopy
