// `bench postprocess`: fit2d's postprocessing against a known truth, on
// localizations simulated straight from blinking emitters (sim/loc_sim.hpp; no
// images), with fit2d's own defaults for every step (its parameter schema):
//   - drift: the RMS per axis of recovered − imposed over the frames, after
//     removing their mean difference (the free constant of every drift
//     estimate), for RCC, the markers' raw trace (unsmoothed, as fit2d --track
//     writes it), the markers smoothed (fiducial) and combined; and each one's time;
//   - the auto RCC segment against fixed ones over several scenarios (segment_table.hpp; a scenario where
//     auto fails its limit makes the run's exit status 1, after every table is written) and link's
//     candidate radii scored against the true blinks (link_table.hpp);
//   - link: recall (the fraction of true blinks whose localizations all land in
//     one group), over-merging (the fraction of groups holding more than one
//     blink), groups against blinks; on the RCC-undrifted localizations, as the
//     pipeline links them;
//   - render: the time to render 10^5–10^8 localizations (Gaussian and
//     histogram) on each device. The CPU renderer is loc/render.hpp; the backend
//     registry has no render engine yet, so a GPU row says so (the hook:
//     render_engine_time in bench_postprocess.cpp, where a registry entry
//     make_render_engine would be called). Localizations are made and rendered in
//     chunks of 10^7 (memory), each chunk's picture added to the total.
// Results as Markdown tables and, with --json, as JSON.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace nanoscopy {

struct PostprocessBenchOptions {
  bool quick = false;  // 4,000 frames, 10^5 localizations, render 10^5 and 10^6
  std::int64_t frames = 20000;
  double localizations = 1e6;  // about, the markers' included; the emitters' duty cycle is set from it
  int emitters = 2000;
  std::string structure = "random";
  double drift_linear_nm = 20;  // nm per 1000 frames
  double drift_walk_nm = 0;     // nm per √frame
  double precision_nm = 10;
  int markers = 4;
  double marker_precision_nm = 20;
  std::string segment = "auto";  // RCC segment (fit2d's default)
  bool no_tables = false;        // leave out the segment and link tables (segment_table.hpp, link_table.hpp)
  std::vector<double> render_sizes{1e6, 1e7, 1e8};
  std::vector<std::string> devices;  // render: empty = cpu and every GPU
  std::string json;
};

void add_postprocess_bench_options(CLI::App& cmd, PostprocessBenchOptions& options);
void run_postprocess_bench(PostprocessBenchOptions options, std::uint64_t seed, bool quiet, std::ostream& out);

}  // namespace nanoscopy
