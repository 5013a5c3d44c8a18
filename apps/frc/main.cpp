// frc: image resolution by Fourier ring correlation.
#include <iostream>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/frc/cli.hpp"
#include "nanoscopy/frc/decorr_cli.hpp"
#include "nanoscopy/params/tool_schemas.hpp"

int main(int argc, char** argv) {
  using namespace nanoscopy;
  ToolApp app("frc",
              "frc: resolution of an image by Fourier ring correlation (FRC) of two images of the same sample\n"
              "with independent noise. Both are windowed (Tukey, cosine taper on the outer 1/8 of each side) and\n"
              "transformed at their own size (no padding); FRC(r) = Re sum F1 F2* / sqrt(sum |F1|^2 sum |F2|^2)\n"
              "over rings r <= |k| < r+1, r = 0..N/2, N = the shorter side (non-square images: |k| scaled to N).\n"
              "Each ring is plotted at the mean radius of its coefficients (about r + 1/2) over N, in cycles/px.\n"
              "The resolution is 1 / f_c px at the first frequency f_c (interpolated between the rings) where\n"
              "the curve, after being above it from ring 1 on, falls below the threshold. The two images can be:\n"
              "  two files                 frc A.tif B.tif            (--page K of multi-page files)\n"
              "  one stack split in two    frc stack.tif --split odd-even|halves   (summed frames, --frames)\n"
              "  localizations             frc locs.hdf5 --render-px 10   (random time blocks, 2D histograms)",
              frc_schema());
  FrcCliOptions options;
  app.cli()
      .add_option("inputs", options.inputs,
                  "Two images (A.tif B.tif), one stack with --split, or one localization file (.csv ThunderSTORM, "
                  ".hdf5 Picasso)")
      ->type_name("INPUT");
  app.bind("--threshold", "FRC/threshold");
  app.bind("--pixel-size", "FRC/pixel size", "Camera pixel size in nm (default: the file's own)");
  app.bind("--page", "Input/page");
  app.bind("--split", "Input/split");
  app.bind("--render-px", "FRC/render px");
  app.bind("--field", "FRC/field", "Localizations: the camera frame WxH in camera pixels (default: the .yaml beside the "
                                   "file, else the localizations' extent)");
  app.bind("--time-blocks", "FRC/time blocks");
  app.bind("--seed", "FRC/seed");
  app.bind("--tukey", "FRC/tukey fraction");
  app.cli()
      .add_option("--curve", options.curve,
                  "Write the curve as CSV (ring, mean_radius, frequency_per_px = mean_radius / N, frc, pixels, "
                  "threshold)")
      ->type_name("CSV");
  app.cli()
      .add_option("--plot", options.plot, "Draw the curve, the threshold and the crossing as a PNG")
      ->type_name("PNG");
  app.cli()
      .add_option("--json", options.json, "Write the resolution, threshold, crossing and curve as JSON")
      ->type_name("JSON");
  DecorrCliOptions decorr;
  auto* decorr_cmd = app.cli().add_subcommand(
      "decorr", "Resolution of ONE image (or of each frame of a stack) by decorrelation analysis (frc decorr --help)");
  decorr_cmd->add_option("image", decorr.input, "Image or stack (TIFF/HDF5; every frame, or --frames A:B)")
      ->required()
      ->type_name("IMAGE");
  app.bind(decorr_cmd, "--radii", "Decorr/radii");
  app.bind(decorr_cmd, "--filters", "Decorr/filters");
  app.bind(decorr_cmd, "--pixel-size", "FRC/pixel size", "Pixel size in nm (default: the file's own)");
  app.bind(decorr_cmd, "--units", "Decorr/units");
  app.bind(decorr_cmd, "--apodization", "Decorr/apodization");
  decorr_cmd->add_option("--json", decorr.json, "Write every frame's curves, peaks and resolution as JSON")
      ->type_name("JSON");
  decorr_cmd
      ->add_option("--table", decorr.table,
                   "Write one row per frame (frame, kc_max, a0, resolution_px, resolution_nm) as CSV")
      ->type_name("CSV");
  decorr_cmd->add_option("--plot", decorr.plot, "Draw the (first) frame's curves and kcMax as a PNG")->type_name("PNG");
  decorr_cmd->footer(
      "Resolution of ONE image (or of each frame of a stack) by decorrelation analysis (Descloux et al., Nature\n"
      "Methods 2019; as ImDecorr's getDcorr): the edge-apodized image's spectrum F is correlated with its\n"
      "normalised spectrum F/|F| inside a mask of radius r, d(r) = sum_{R<r} |F| / (||F|| sqrt(n(r))), over Nr radii\n"
      "(R: frequency normalised to 1 at Nyquist). The peak of d(r) marks where the image's content gives way to\n"
      "noise. The same on Ng Gaussian high-pass copies (weights 1 - exp(-2 g^2 R^2)), refined once; the\n"
      "resolution is 2 px / kcMax, kcMax the highest peak radius of amplitude >= 0.05; A0 is the unfiltered\n"
      "curve's peak (a contrast/SNR figure). Images of at least 32x32 px; any TIFF (raw, SOFI, eSRRF, rendered).\n"
      "Prints one line per frame: resolution, kcMax and A0.\n\n"
      "Examples:\n"
      "  frc decorr sofi.tif --pixel-size 108              one image; resolution in nm\n"
      "  frc decorr esrrf.tif --plot d.png --json d.json   curves as a PNG and as JSON\n"
      "  frc decorr movie.tif --frames 0:100 --table r.csv --device cuda   per frame, on the GPU\n"
      "No peak (\"resolution unknown\"): the curve rises up to Nyquist, the image is noise-dominated there.\n"
      "frc's common options apply: --device, --frames, --quiet, --params, --print-params (frc --help).");
  app.set_footer(
      "Examples:\n"
      "  frc a.tif b.tif --pixel-size 108                 two acquisitions; resolution in px and nm\n"
      "  frc sofi_a.tif sofi_b.tif --page 1               the second page (sofi: order 3) of each\n"
      "  frc movie.tif --split odd-even --frames 0:2000   even vs odd frames of a stack, summed\n"
      "  frc movie.tif --split halves --threshold half-bit --curve frc.csv --plot frc.png\n"
      "  frc locs.hdf5 --render-px 5 --time-blocks 20 --seed 3 --json frc.json   Picasso localizations\n"
      "  frc locs.csv --render-px 10                      ThunderSTORM CSV (already in nm)\n"
      "  frc a.tif b.tif --threshold 2sigma --device cuda  k-sigma threshold (as in the SMRE paper), on the GPU\n"
      "  frc decorr image.tif --pixel-size 100            ONE image: decorrelation analysis (frc decorr --help)\n"
      "Thresholds: 1/7 (default), half-bit, <k>sigma (2sigma, 3sigma), or a number in (0, 1).\n"
      "Resolution 'not reached': the FRC stays above the threshold up to Nyquist; 2 px is reported.");
  return app.run(argc, argv, [&](ToolContext& ctx) {
    if (*decorr_cmd) return run_decorr_cli(decorr, ctx, std::cout);
    run_frc_cli(options, ctx, std::cout);
  });
}
