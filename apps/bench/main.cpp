// bench: simulate the papers' data and measure speed and accuracy.
#include <iostream>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/bench/bench_compare.hpp"
#include "nanoscopy/bench/bench_spline3d.hpp"
#include "nanoscopy/bench/bench_fit.hpp"
#include "nanoscopy/bench/bench_decorr.hpp"
#include "nanoscopy/bench/bench_frc.hpp"
#include "nanoscopy/bench/bench_io.hpp"
#include "nanoscopy/bench/bench_localize.hpp"
#include "nanoscopy/bench/bench_postprocess.hpp"
#include "nanoscopy/bench/bench_render.hpp"
#include "nanoscopy/bench/bench_roi.hpp"
#include "nanoscopy/bench/bench_smre.hpp"
#include "nanoscopy/bench/bench_sofi.hpp"
#include "nanoscopy/bench/bench_esrrf.hpp"
#include "nanoscopy/params/tool_schemas.hpp"
#include "nanoscopy/bench/simulate_cli.hpp"

int main(int argc, char** argv) {
  using namespace nanoscopy;
  ToolApp app("bench", "bench: simulate the papers' data and measure speed and accuracy of every backend.",
              bench_schema());
  app.without_frames();
  app.outputs_one_by_one();  // benchmarks write scratch stacks and read them back
  auto& cli = app.cli();
  cli.require_subcommand(0, 1);
  app.bind("--seed", "seed");
  app.bind("--repeats", "repeats");

  auto* simulate = cli.add_subcommand("simulate", "Write simulated data with its ground truth");
  simulate->require_subcommand(1);
  MovieCliOptions movie;
  auto* sim_movie = simulate->add_subcommand("movie", "A blinking single-molecule movie (uint16 TIFF/HDF5) + truth CSV");
  add_movie_options(*sim_movie, movie);
  SpotSimOptions spots;
  auto* sim_spots = simulate->add_subcommand("spots", "ROIs after the fitting paper's recipe (uint16 TIFF, one per page) + truth CSV");
  add_spot_sim_options(*sim_spots, spots);
  BlinkingCliOptions blinking;
  auto* sim_blinking = simulate->add_subcommand("blinking", "A SOFI stack of blinking emitters/quantum dots (uint16 TIFF/HDF5) + truth");
  add_blinking_options(*sim_blinking, blinking);

  CompareOptions compare;
  auto* compare_cmd = cli.add_subcommand("compare", "Localizations against the simulated truth: recall, false positives, RMS error (nm)");
  add_compare_options(*compare_cmd, compare);

  Spline3dBenchOptions spline3d;
  auto* spline3d_cmd = cli.add_subcommand(
      "spline3d", "3D from beads: pupil-PSF bead stack -> fit2d calibrate (spline and astigmatic) -> fits of a pupil-PSF "
                  "movie; x, y, z RMS and z bias per 100 nm of z against the CRB of the true PSF");
  add_spline3d_options(*spline3d_cmd, spline3d);

  FitBenchOptions fit;
  auto* fit_cmd = cli.add_subcommand("fit2d", "The Gaussian fitter: fits/s over ROI and batch sizes, accuracy vs the CRB");
  add_fit_bench_options(*fit_cmd, fit);

  RoiBenchOptions roi;
  auto* roi_cmd = cli.add_subcommand("roi", "fit2d --roi: per-frame latency (p50, p99) of 10 marker ROIs of 9x9");
  add_roi_bench_options(*roi_cmd, roi);

  IoBenchOptions io;
  auto* io_cmd = cli.add_subcommand("io", "Stack I/O speed: index and read an N-page TIFF");
  io_cmd->add_option("--pages", io.pages, "pages in the test stack")->default_val(io.pages);
  io_cmd->add_option("--size", io.size, "frame edge in pixels")->default_val(io.size);
  io_cmd->add_option("--dir", io.dir, "where to write the test stack (created when missing; default: system temp dir)");
  io_cmd->add_option("--json", io.json, "also write the results as JSON")->type_name("FILE");

  LocalizeBenchOptions localize;
  auto* localize_cmd = cli.add_subcommand("localize", "fit2d end to end: frames/s of read → detect → fit → HDF5 vs reading alone");
  localize_cmd->alias("fit2d-e2e");
  add_localize_bench_options(*localize_cmd, localize);

  SmreBenchOptions smre;
  auto* smre_cmd = cli.add_subcommand("smre", "SMRE: runtime vs image edge (CPU/GPU, exact/ICD), quality on camera.png, stack frames/s");
  add_smre_bench_options(*smre_cmd, smre);

  SofiBenchOptions sofi;
  auto* sofi_cmd = cli.add_subcommand("sofi", "SOFI: FRC of SOFI2, SOFI2(SMRE), SMRE(SOFI2) on quantum dots; frames/s and GPU bandwidth");
  add_sofi_bench_options(*sofi_cmd, sofi);

  EsrrfBenchOptions esrrf;
  auto* esrrf_cmd = cli.add_subcommand(
      "esrrf", "eSRRF: frames/s per device and size (1,000 frames of 512^2 at magnification 5), Pearson r against the "
               "truth next to SOFI2, balanced SOFI and the mean (random emitters and rings), the QnR sweep's choice");
  add_esrrf_bench_options(*esrrf_cmd, esrrf);

  FrcBenchOptions frc;
  auto* frc_cmd = cli.add_subcommand("frc", "FRC: time vs image edge (256..4096) on CPU and GPU, GPU/CPU agreement");
  add_frc_bench_options(*frc_cmd, frc);
  DecorrBenchOptions decorr;
  auto* decorr_cmd = cli.add_subcommand(
      "decorr", "frc decorr: time per image edge (256..2048) on CPU and GPU, agreement with FRC and with the CPU");
  add_decorr_bench_options(*decorr_cmd, decorr);

  PostprocessBenchOptions postprocess;
  auto* postprocess_cmd = cli.add_subcommand(
      "postprocess", "fit2d undrift, link and render against a known truth: drift error of RCC, markers and "
                     "combined; the auto RCC segment against fixed ones (exit 1 where it fails its limit); link's "
                     "split and merge rates per candidate radius; render time for 10^5-10^8 localizations");
  add_postprocess_bench_options(*postprocess_cmd, postprocess);
  RenderBenchOptions render;
  auto* render_cmd = cli.add_subcommand("render", "fit2d render: seconds to accumulate N localizations (4000x4000 at 10 nm) on each device");
  add_render_bench_options(*render_cmd, render);

  app.set_footer(
      "Examples:\n"
      "  bench simulate movie -o movie.tif --frames 500    a movie, its camera (movie.yaml) and movie_truth.csv\n"
      "  bench compare movie_locs.csv movie_truth.csv      recall, false positives and RMS error (nm) against the truth\n"
      "  bench simulate spots -o spots.tif --size 9        ROIs of the fitting paper and spots_truth.csv\n"
      "  bench simulate blinking -o qd.tif                 a quantum-dot SOFI stack + qd_emitters.csv,\n"
      "                                                    qd_truth.tif, qd_mean.tif (--structure rings|lines)\n"
      "  bench fit2d --json fit.json                       throughput and accuracy of every backend\n"
      "  bench fit2d --quick                               a one-minute version\n"
      "  bench localize --devices cpu,cuda:0               fit2d end to end on a 10,000-frame 256x256 stack\n"
      "  bench frc --sizes 256,1024 --json frc.json        FRC runtime on every device, GPU vs CPU agreement\n"
      "  bench decorr --json decorr.json                   decorrelation analysis per size, vs FRC and the CPU\n"
      "  bench render --locs 1e6,1e7,1e8 --devices cpu,cuda:0   fit2d render's accumulation on each device\n"
      "  bench io --pages 100000                           TIFF indexing and reading speed\n"
      "  bench postprocess --json post.json                drift error (RCC, markers, combined) on 10^6 simulated\n"
      "                                                    localizations in 20,000 frames, link recall, render time\n"
      "  bench simulate movie --drift-linear 20 --drift-walk 0.1 --structure rings   + movie_drift.csv, _emitters.csv\n"
      "  bench simulate movie --z-stack --psf pupil --z-step 10 -o beads.tif   bead stack of a non-Gaussian 3D PSF\n"
      "  bench spline3d --dir s3d                          beads -> spline and astigmatic calibration -> 3D fits vs CRB\n"
      "  bench smre --json smre.json --images smre-img     SMRE runtime (the paper's Fig. 8), quality, stack rate\n"
      "  bench sofi --json sofi.json --images sofi-img     SOFI resolution by FRC with/without SMRE; frames/s\n"
      "  bench esrrf --json esrrf.json --devices cuda:0    eSRRF frames/s and Pearson r against the truth");
  return app.run(argc, argv, [&](ToolContext& ctx) {
    const auto seed = static_cast<std::uint64_t>(ctx.params.get_int("seed"));
    if (*sim_movie) return run_simulate_movie(movie, seed, ctx.quiet);
    if (*sim_spots) return run_simulate_spots(spots, seed, ctx.quiet);
    if (*sim_blinking) return run_simulate_blinking(blinking, seed, ctx.quiet);
    if (*compare_cmd) return run_compare(compare, std::cout);
    if (*spline3d_cmd) return run_spline3d_bench(spline3d, std::cout);
    if (*fit_cmd) return run_fit_bench(fit, seed, static_cast<int>(ctx.params.get_int("repeats")), ctx.quiet, std::cout);
    if (*roi_cmd) return run_roi_bench(roi, seed, std::cout);
    if (*localize_cmd) return run_localize_bench(localize, seed, ctx.quiet, std::cout);
    if (*smre_cmd) return run_smre_bench(smre, seed, ctx.quiet, std::cout);
    if (*sofi_cmd)
      return run_sofi_bench(sofi, seed, static_cast<int>(ctx.params.get_int("repeats")), ctx.quiet, std::cout);
    if (*esrrf_cmd) return run_esrrf_bench(esrrf, seed, ctx.quiet, std::cout);
    if (*frc_cmd) return run_frc_bench(frc, seed, static_cast<int>(ctx.params.get_int("repeats")), ctx.quiet, std::cout);
    if (*decorr_cmd)
      return run_decorr_bench(decorr, seed, static_cast<int>(ctx.params.get_int("repeats")), ctx.quiet, std::cout);
    if (*render_cmd)
      return run_render_bench(render, seed, static_cast<int>(ctx.params.get_int("repeats")), ctx.quiet, std::cout);
    if (*io_cmd) return run_io_bench(io, ctx.params.get_int("repeats"), std::cout);
    if (*postprocess_cmd) return run_postprocess_bench(postprocess, seed, ctx.quiet, std::cout);
    throw UsageError("command line", "choose what to run: bench simulate movie|spots|blinking, bench fit2d, bench localize, bench roi, bench io, bench smre (see bench --help)");
  });
}
