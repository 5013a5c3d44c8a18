// smre: statistical multi-resolution estimation (denoising and deconvolution).
#include <iostream>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/params/tool_schemas.hpp"
#include "nanoscopy/smre/partial.hpp"
#include "nanoscopy/smre/cli.hpp"

int main(int argc, char** argv) {
  using namespace nanoscopy;
  static const Schema schema = smre_schema();
  ToolApp app("smre",
              "smre: statistical multi-resolution estimation. Restores an image, or every frame of a stack, blurred\n"
              "by a Gaussian PSF and disturbed by noise: the smoothest image (in the sense of the regularizer)\n"
              "whose residual passes a chi-square test on every square of the image at every scale, with\n"
              "probability --alpha for pure noise. ADMM with exact Dykstra projections (squares of edge\n"
              "1..MRdepth at every shift; --exact) or the incomplete Dykstra (dyadic squares in 32x32 tiles,\n"
              "the default, much faster). Output: float32 TIFF (or .h5), <input>_smre.tif unless -o.\n"
              "Parameter files follow the SMRE paper's listing (params/smre.prm).",
              schema);
  SmreOptions options;
  app.cli().add_option("image", options.input, "Input image or stack (TIFF, HDF5, Picasso .raw, PNG)")->type_name("IMAGE");
  app.cli().add_option("-o,--output", options.output, "Output image (.tif float32 or .h5)")->type_name("FILE");
  auto* icd = app.bind_flag("--icd", "program flow control/approx", "Incomplete Dykstra on 32x32 tiles (fast; the default)");
  app.bind_flag("--exact", "program flow control/approx",
                "Exact Dykstra on every square of edge 1..MRdepth at every shift (the paper's reference; ~50x slower)",
                "false")
      ->excludes(icd);
  app.bind("--psf", "input data/sigma", "PSF sigma in pixels");
  app.cli().add_option("--fwhm", options.fwhm, "PSF full width at half maximum in pixels (instead of --psf)")
      ->type_name("PX");
  app.bind("--noise", "input data/gaussian noise", "Gaussian noise sigma; 0 = estimate from each frame (MAD)");
  app.bind("--regularizer", "method/regularizer");
  app.bind("--lambda", "input data/regularization", "Regularization weight");
  app.bind("--alpha", "method/coverage", "Coverage: probability that pure noise meets every constraint");
  app.bind("--weights", "method/weights");
  app.bind("--weight-samples", "method/weight samples");
  app.bind("--mrdepth", "program flow control/MRdepth", "Exact Dykstra: largest square edge (px)");
  app.bind("--icd-sweeps", "method/icd sweeps");
  app.bind("--iterations", "program flow control/maximum iterations", "Maximum ADMM iterations");
  app.bind("--tolerance", "program flow control/tolerance");
  app.bind("--report-interval", "program flow control/report interval");
  app.bind_flag("--anscombe", "method/anscombe", "Poisson data: Anscombe transform and its unbiased inverse");
  app.bind_flag("--simulate", "simulate dataset from real image/simulate",
                "Treat the input as a true image: blur it, add --noise, restore, report the quality");
  app.bind_flag("--time-seed", "simulate dataset from real image/time seed", "Seed the simulated noise from the clock");
  app.bind_flag("--control", "output/control", "Save the estimate every report interval (<output>_iterNNNNNN.tif)");
  app.bind("--log", "output/log", "Write the convergence history as CSV");
  app.cli().add_flag("--print-weights", options.print_weights,
                     "Print the weights c_s for the image (or --size) and exit");
  app.cli().add_option("--size", options.size, "Frame size for --print-weights without an image")->type_name("WxH");
  app.cli()
      .add_option("--partial", options.partial,
                  "Write the restored frames of --frames A:B to this part file (HDF5) for smre merge")
      ->type_name("PART.h5");
  SmreMergeOptions merge;
  auto* merge_cmd = app.cli().add_subcommand(
      "merge", "Merge part files (smre --partial) into one stack, pages in frame order (streamed)");
  merge_cmd->add_option("parts", merge.parts, "Part files, in any order (--series: in the files' order)")
      ->required()
      ->type_name("PARTS");
  merge_cmd->add_option("-o,--output", merge.output, "Output stack (.tif float32 or .h5)")->required()->type_name("FILE");
  merge_cmd->add_flag("--series", merge.series,
                      "Parts of several files: frames follow file after file, in the order the parts are given");
  app.set_footer(
      "Examples:\n"
      "  smre --icd --psf 3 image.tif                      # writes image_smre.tif\n"
      "  smre --icd --fwhm 6 --anscombe stack.tif -o out.tif  # Poisson counts, every frame\n"
      "  smre --regularizer tv --psf 4 --noise 3 --log conv.csv image.tif\n"
      "  smre --simulate --noise 3 --psf 4 --icd truth.png  # blur + noise a true image, restore, report quality\n"
      "  smre --print-weights --size 1024x1024 --weights closed-form\n"
      "  smre --params params/smre.prm image.tif            # the paper's listing (simulate = true there)\n"
      "  smre --icd s.tif --frames 0:500 --partial p0.h5 ; smre merge p*.h5 -o s_smre.tif   the same stack, in parts\n"
      "  mpirun -n 4 smre --icd s.tif -o s_smre.tif        four ranks split the frames, rank 0 writes");
  app.add_frames_command();
  return app.run(argc, argv, [&](ToolContext& ctx) {
    if (*merge_cmd) return run_smre_merge(merge, ctx, std::cout);
    run_smre_cli(options, ctx, std::cout);
  });
}
