// sofi: super-resolution optical fluctuation imaging (cumulants) of a blinking stack.
#include <iostream>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/params/tool_schemas.hpp"
#include "nanoscopy/sofi/cli.hpp"
#include "nanoscopy/sofi/esrrf_cli.hpp"
#include "nanoscopy/sofi/esrrf_partial.hpp"

int main(int argc, char** argv) {
  using namespace nanoscopy;
  ToolApp app("sofi",
              "sofi: super-resolution optical fluctuation imaging. Per-pixel cumulants of a blinking stack\n"
              "(TIFF/BigTIFF, HDF5, Picasso .raw), streamed in blocks with time lags that cancel shot noise;\n"
              "optionally with SMRE on every frame first or on the result; partial sums for clusters.",
              sofi_schema());
  auto& cli = app.cli();
  SofiCliOptions options;
  cli.add_option("stack", options.input, "Input stack")->type_name("STACK");
  cli.add_option("-o,--output", options.output, "Output image: .tif (one float32 page per order, then the mean) or .h5 "
                                                "(datasets order2, ..., mean); default <stack>_sofi.tif")
      ->type_name("OUT");
  app.bind("--orders", "SOFI/orders");
  app.bind("--lags", "SOFI/lags");
  app.bind("--block", "SOFI/block");
  app.bind_flag("--cross", "SOFI/cross");
  app.bind_flag("--moments", "SOFI/moments");
  app.bind("--psf-sigma", "SOFI/psf sigma");
  app.bind_flag("--balanced", "SOFI/balanced");
  app.bind("--deconvolution", "SOFI/deconvolution");
  app.bind("--rl-iterations", "SOFI/rl iterations");
  app.bind("--deconvolution-smre", "SOFI/deconvolution smre");
  app.bind("--parameter-mask", "SOFI/parameter mask");
  app.bind("--pre-smre", "SOFI/pre smre");
  app.bind("--post-smre", "SOFI/post smre");
  app.bind("--split", "SOFI/split");
  app.bind("--pixel-size", "Output/pixel size");
  // Drift and bleaching corrections (issue 19).
  app.bind_flag("--undrift", "SOFI/undrift");
  app.bind("--drift-block", "SOFI/drift block");
  app.bind("--max-drift", "SOFI/max drift");
  app.bind("--bleach-correction", "SOFI/bleach correction");
  cli.add_option("--partial", options.partial,
                 "Write mergeable partial sums of --frames A:B to this HDF5 file instead of an image")
      ->type_name("PART.h5");

  SofiMergeOptions merge;
  auto* merge_cmd = cli.add_subcommand("merge", "Merge partial sums (sofi --partial) into the image of the whole stack");
  merge_cmd->add_option("parts", merge.parts, "Partial files, in any order")->required()->type_name("PARTS");
  merge_cmd->add_option("-o,--output", merge.output, "Output image (.tif or .h5)")->required()->type_name("OUT");

  EsrrfCliOptions esrrf;
  auto* esrrf_cmd = cli.add_subcommand(
      "esrrf",
      "eSRRF super-resolution (radial fluctuations, as NanoJ-eSRRF and NanoPyx), error map and parameter sweep");
  esrrf_cmd->add_option("stack", esrrf.input, "Input stack")->type_name("STACK");
  esrrf_cmd->add_option("-o,--output", esrrf.output, "Output image (.tif or .h5); default <stack>_esrrf.tif; also OUT.png")
      ->type_name("OUT");
  app.bind(esrrf_cmd, "-m,--magnification", "eSRRF/magnification");
  app.bind(esrrf_cmd, "-r,--radius", "eSRRF/radius");
  app.bind(esrrf_cmd, "-s,--sensitivity", "eSRRF/sensitivity");
  app.bind(esrrf_cmd, "--frames-per-timepoint", "eSRRF/frames per timepoint");
  app.bind(esrrf_cmd, "--step", "eSRRF/step");
  app.bind(esrrf_cmd, "--temporal", "eSRRF/temporal");
  app.bind(esrrf_cmd, "--intensity-weighting", "eSRRF/intensity weighting");
  app.bind(esrrf_cmd, "--macro-pixel-correction", "eSRRF/macro pixel correction");
  app.bind_flag(esrrf_cmd, "--error-map", "eSRRF/error map");
  app.bind(esrrf_cmd, "--sweep", "eSRRF/sweep");
  app.bind(esrrf_cmd, "--pixel-size", "Output/pixel size");
  esrrf_cmd->add_option("--partial", esrrf.partial,
                        "Write mergeable sums of --frames A:B (the whole stack's time points) to this HDF5 file; "
                        "sofi merge P*.h5 -o OUT.tif joins the parts")
      ->type_name("PART.h5");
  esrrf_cmd->footer(
      "eSRRF (enhanced super-resolution radial fluctuations; Laine et al. 2023): the radial gradient convergence of\n"
      "every frame on an M-times finer grid, then its mean (AVG), variance (VAR) or lag-1 autocorrelation (TAC2) over\n"
      "the frames of each time point. Float32 TIFF (one page per time point, pixel size = input pixel / M) and a PNG\n"
      "preview; optionally the SQUIRREL error map and a QnR parameter sweep.\n"
      "\n"
      "Examples:\n"
      "  sofi esrrf blink.tif -o e.tif                      magnification 5, radius 1.5, AVG: e.tif and e.png\n"
      "  sofi esrrf blink.tif -o e.tif --temporal tac2 --radius 2 --sensitivity 2\n"
      "  sofi esrrf blink.tif -o e.tif --frames-per-timepoint 100 --step 20   a sliding window: a time series\n"
      "  sofi esrrf blink.tif -o e.tif --error-map          also e_errormap.tif/.png; RSE and RSP printed\n"
      "  sofi esrrf blink.tif -o e.tif --sweep radius=1:2:0.25,sensitivity=1:4   QnR table, e_sweep.csv, best pair\n"
      "  sofi esrrf blink.tif -o e.tif --device cuda:0 --frames 0:1000   on a GPU, the first 1000 frames\n"
      "\n"
      "Intensity weighting and macro-pixel correction are on by default (turn off: --intensity-weighting false).\n"
      "VAR and TAC2 need at least 2 frames per time point. The sweep scores each (radius, sensitivity) pair with\n"
      "QnR: the harmonic mean of RSP (error map against the mean of the frames) and the FIRE resolution of the\n"
      "even- and odd-frame images mapped logistically across the sweep (NanoPyx); the best pair makes the image.");

  app.add_frames_command();

  app.set_footer(
      "Examples:\n"
      "  sofi blink.tif -o blink_sofi.tif                 orders 2,3,4 with lags 0,1,2,3 -> 4 pages (orders, mean)\n"
      "  sofi blink.tif -o s.tif --orders 2 --split odd-even   also s_even.tif and s_odd.tif (frc s_even.tif s_odd.tif)\n"
      "  sofi blink.tif -o x.h5 --cross --orders 2,3 --psf-sigma 1.6   cross-cumulants on 2x and 3x finer grids\n"
      "  sofi blink.tif -o s.tif --orders 2 --pre-smre params/smre.prm  SMRE on every frame first: SOFI2(SMRE)\n"
      "  sofi blink.tif --frames 0:5000 --partial p0.h5 ; sofi merge p*.h5 -o s.tif   the same image, in parts\n"
      "  sofi blink.tif -o s.tif --balanced --psf-sigma 1.5   bSOFI: also s_balanced.tif (balanced, rho, epsilon,\n"
      "                                                   density) and s_balanced.png, s_balanced_panel.png\n"
      "  scripts/nanoscopy-submit sofi blink.tif -o s.tif --chunks 16   a SLURM job array and a merge job\n"
      "\n"
      "  sofi blink.tif -o s.tif --undrift --drift-block 200   drift-corrected; also s_drift.csv and s_drift.png\n"
      "  sofi blink.tif -o s.tif --bleach-correction exponential   the fitted intensity decay divided out first\n"
      "\n"
      "Blocks: frames are centred per block of --block frames (bleaching); a block's lag tuples stay inside it.\n"
      "Partial files record the stack and parameter fingerprints; merge refuses parts that differ, overlap or leave\n"
      "a gap.\n"
      "Balanced SOFI (Geissbuehler et al. 2012): orders 2..4 are deconvolved (Richardson-Lucy, or --deconvolution\n"
      "smre) with the PSF of --psf-sigma narrowed by sqrt(order); the on-time ratio rho, brightness epsilon (photons\n"
      "per frame while on) and density N (emitters per px) come from their ratios, NaN where order 2 is below\n"
      "--parameter-mask of its maximum; the balanced image is order 4 linearized (4th root), order 3 where rho\n"
      "makes order 4 vanish. Blinking must be slow against the lags (on and off times of many frames).\n"
      "\n"
      "Drift and bleaching (two passes over the file): --undrift and --bleach-correction exponential first stream\n"
      "the range once to measure, then once more for the cumulants. --undrift: the mean image of each --drift-block\n"
      "block is cross-correlated with the others (FFT, sub-pixel Gaussian peak fit, redundant least squares); the\n"
      "block drifts are interpolated to every frame (cubic spline) and each frame is shifted back by bilinear\n"
      "interpolation (local, no ringing; mixes pixels of one frame only, so lagged cumulants stay noise-free), the\n"
      "image registered to the first frame; a stack whose blocks do not register (no fixed structure) gets a warning.\n"
      "--bleach-correction: none = no centring but the overall mean (a bleaching stack then shows its decay as\n"
      "fluctuation); block (default) = each --block centred on its own mean, as bSOFI and pysofi's sub-sequences;\n"
      "exponential = f(t) = A exp(-t/tau) + C fitted to the mean intensity per frame and each frame scaled by\n"
      "f(0)/f(t) (at most 100; Fiji's Bleach Correction, Exponential Fit), then blocks as usual. Neither works with\n"
      "--partial or mpirun (the first pass needs the whole range).");
  return app.run(argc, argv, [&](ToolContext& ctx) {
    if (*merge_cmd) {
      if (!merge.parts.empty() && is_esrrf_partial(merge.parts.front()))
        return run_esrrf_merge(merge.parts, merge.output, ctx, std::cout);
      return run_sofi_merge(merge, ctx, std::cout);
    }
    if (*esrrf_cmd) return run_sofi_esrrf(esrrf, ctx, std::cout);
    run_sofi_cli(options, ctx, std::cout);
  });
}
