// fit2d: find fluorescent spots in a camera stack and fit each with a 2D Gaussian.
#include <iostream>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/fit2d/calibrate.hpp"
#include "nanoscopy/fit2d/filter_cmd.hpp"
#include "nanoscopy/fit2d/link_cmd.hpp"
#include "nanoscopy/fit2d/render_cmd.hpp"
#include "nanoscopy/fit2d/undrift_cmd.hpp"
#include "nanoscopy/fit2d/partial.hpp"
#include "nanoscopy/fit2d/cli.hpp"
#include "nanoscopy/params/tool_schemas.hpp"

namespace {

// The localization file a postprocessing subcommand reads (ours, Picasso's or ThunderSTORM's) and the pixel size a
// ThunderSTORM CSV without its .yaml needs.
void add_locs_input(CLI::App* cmd, std::string& input, double& pixel_size_nm, const std::string& what) {
  cmd->add_option("locs", input, what)->required()->type_name("LOCS");
  cmd->add_option("--pixel-size", pixel_size_nm, "nm; for a ThunderSTORM CSV without its .yaml");
}

// The localization file it writes, in either format.
void add_locs_output(CLI::App* cmd, std::string& output, std::string& format, const std::string& what) {
  cmd->add_option("-o,--output", output, what + ": .csv (ThunderSTORM) or .hdf5 (Picasso)")->required()->type_name("FILE");
  cmd->add_option("--format", format, "csv or hdf5 [default: from the output's extension]");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace nanoscopy;
  ToolApp app("fit2d",
              "fit2d: localize single molecules in a camera stack (TIFF/BigTIFF, HDF5 file.h5:/dataset, Picasso .raw):\n"
              "find spots, fit each with a 2D Gaussian (implicit-amplitude Levenberg-Marquardt) on the GPU when there\n"
              "is one, and write ThunderSTORM CSV (.csv) or Picasso HDF5 (.hdf5 + .yaml). --track follows fiducial\n"
              "markers and writes the drift. --undrift, --link and --render then run the subcommands of those names\n"
              "on the result, each on the previous step's file (OUT, OUT_undrift, ..._link, <last>.tif + .png).",
              fit2d_schema());
  Fit2dOptions o;
  auto& cli = app.cli();
  cli.add_option("stack", o.input, "Input stack")->type_name("STACK");
  cli.add_option("-o,--output", o.output, "Localizations: .csv (ThunderSTORM) or .hdf5 (Picasso); default STACK_locs.hdf5")
      ->type_name("FILE");
  app.bind("--format", "Output/format");
  app.bind_flag("--fit-diagnostics", "Output/fit diagnostics");
  cli.add_flag("--track", o.track, "Link localizations of fiducial markers across frames; write OUT_drift.txt (Picasso), "
                                   "OUT_drift.csv (nm) and OUT_tracks.csv");
  cli.add_option("--roi", o.roi_file, "Fit these fixed marker ROIs in every frame (lines 'x y' centres or 'x0 y0 w h'), "
                                     "warm-started, and write the drift per frame (default STACK_roi_drift.csv)")
      ->type_name("FILE");
  cli.add_option("--regions", o.regions_file, "Localize only inside these regions: lines 'x0 y0 width height' (px)")
      ->type_name("FILE");
  cli.add_flag("--stream", o.stream, "With --roi: print 'frame dx_nm dy_nm markers status' on stdout as each frame is done");
  cli.add_option("--partial", o.partial, "Write the localizations of --frames A:B to this part file (HDF5) for "
                                         "fit2d merge, instead of a localization file")
      ->type_name("PART.h5");
  Fit2dMergeOptions merge;
  auto* merge_cmd = cli.add_subcommand(
      "merge", "Merge part files (fit2d --partial) into one localization file ordered by frame, as one run writes it");
  merge_cmd->add_option("parts", merge.parts, "Part files, in any order (--series: in the files' order)")
      ->required()
      ->type_name("PARTS");
  merge_cmd->add_option("-o,--output", merge.output, "Localizations: .csv (ThunderSTORM) or .hdf5 (Picasso)")
      ->required()
      ->type_name("FILE");
  merge_cmd->add_flag("--series", merge.series,
                      "Parts of several files (one recording split over files): frames are numbered on from file to "
                      "file, in the order the parts are given");
  merge_cmd->add_flag("--track", merge.track, "Track fiducial markers in the merged localizations (as fit2d --track); "
                                              "--undrift, --link and --render work on the merged file as on fit2d's");
  Fit2dCalibrateOptions calibrate;
  auto* calibrate_cmd = cli.add_subcommand(
      "calibrate", "3D calibration from a bead z-stack. --model spline (recommended): the beads' own PSF, "
                   "aligned, averaged and smoothed, as a cubic spline (psf.h5, or SMAP's psf.mat) for fit2d "
                   "--calibration; --model astigmatic: elliptical fits of the beads of every frame, sigma x and sigma y "
                   "vs z fitted by defocus curves (a JSON). Writes a PNG beside it");
  calibrate_cmd->add_option("stack", calibrate.input, "Bead z-stack, one z per frame")->required()->type_name("STACK");
  calibrate_cmd->add_option("-o,--output", calibrate.output,
                            "The calibration: psf.h5 (ours) or psf.mat (SMAP's, DECODE reads it) with --model spline; "
                            "a JSON with --model astigmatic (as bench simulate movie --calibration reads)")
      ->required()
      ->type_name("FILE");
  calibrate_cmd->add_option("--z-step", calibrate.z_step, "z step between frames, nm")->required();
  calibrate_cmd->add_option("--z0", calibrate.z0, "z of frame 0, nm [default: the centre frame is z = 0]");
  calibrate_cmd->add_option("--box", calibrate.box,
                            "ROI edge in pixels (odd; defocused beads are wide) [default: 15; spline: 21, the spline's "
                            "width: beads closer than box + 4 px to each other are not used]");
  calibrate_cmd->add_option("--model", calibrate.model,
                            "spline: the measured PSF (any shape, reaches the CRB); astigmatic: Gaussian widths vs z; "
                            "auto: spline for -o *.h5 or *.mat, astigmatic for a JSON")
      ->default_val(calibrate.model)
      ->check(CLI::IsMember({"auto", "astigmatic", "spline"}));
  calibrate_cmd->add_option("--smooth-z", calibrate.smooth_z_nm,
                            "spline: smoothing along z, the cut-off period in nm (a PSF has no detail finer than "
                            "wavelength/n, about 500 nm; noise has); 0: none")
      ->default_val(calibrate.smooth_z_nm);
  calibrate_cmd->add_option("--smooth-xy", calibrate.smooth_xy_px,
                            "spline: smoothing in x and y, the cut-off period in px; 0: none")
      ->default_val(calibrate.smooth_xy_px);
  calibrate_cmd->add_option("--oversample", calibrate.oversample,
                            "spline: voxels per camera pixel in x and y. A spline through samples one pixel apart "
                            "misses a PSF sampled near Nyquist between them (z off by up to 30 nm at sub-pixel "
                            "positions); 2 leaves about 2 nm. 0: 2 for psf.h5, 1 for SMAP's psf.mat (its voxel is "
                            "one pixel)")
      ->default_val(calibrate.oversample)
      ->check(CLI::Range(0, 4));
  calibrate_cmd->add_option("--plot", calibrate.plot, "PNG of sigma x, sigma y vs z [default: OUTPUT with .png]")
      ->type_name("FILE");
  calibrate_cmd->add_flag("!--no-higher-order", calibrate.higher_order,
                          "fit sigma0, c, d only (no cubic and quartic terms A, B)");
  Fit2dFilterOptions filter;
  auto* filter_cmd = cli.add_subcommand(
      "filter", "Keep the localizations for which an expression over their columns holds (Picasso's names and "
                "units: x, y, sx, sy, lpx, lpy in px; photons, bg; z, lpz in nm; frame, net_gradient, chi2, ...)");
  add_locs_input(filter_cmd, filter.input, filter.pixel_size_nm, "Localizations: ours, Picasso's or ThunderSTORM's");
  add_locs_output(filter_cmd, filter.output, filter.format, "Filtered localizations");
  filter_cmd->add_option("--where", filter.where,
                         "e.g. 'photons > 500 and lpx < 0.1', 'not (sx > 2 or sy > 2)', 'abs(z) < 300'; "
                         "and, or, not, < <= > >= == !=, + - * /, abs(), sqrt()")
      ->required()
      ->type_name("EXPR");
  Fit2dLinkOptions link;
  auto* link_cmd = cli.add_subcommand(
      "link", "Merge the localizations of one blink (consecutive frames, within a radius) into one, as Picasso's "
              "link: precision-weighted position, summed photons, len and n (ThunderSTORM: detections)");
  add_locs_input(link_cmd, link.input, link.pixel_size_nm,
                 "Localizations sorted by frame: ours, Picasso's or ThunderSTORM's");
  add_locs_output(link_cmd, link.output, link.format, "Linked localizations");
  app.bind(link_cmd, "--radius", "Link/radius");
  app.bind(link_cmd, "--max-dark", "Link/max dark");
  Fit2dRenderOptions render;
  auto* render_cmd = cli.add_subcommand(
      "render", "The super-resolution picture: a Gaussian (sigma = each localization's precision) or histogram "
                "rendering as a float32 TIFF with the pixel size in its metadata, and a PNG preview with a scale bar");
  add_locs_input(render_cmd, render.input, render.pixel_size_nm, "Localizations: ours, Picasso's or ThunderSTORM's");
  render_cmd->add_option("-o,--output", render.output, "The picture: .tif (or .h5)")->required()->type_name("IMAGE");
  app.bind(render_cmd, "--pixel", "Render/pixel");
  app.bind(render_cmd, "--mode", "Render/mode");
  app.bind(render_cmd, "--registration", "Render/registration");
  render_cmd->add_option("--png", render.png, "the preview [default: IMAGE with .png]")->type_name("FILE");
  render_cmd->add_option("--color", render.color,
                         "none, or z: RGB, each pixel's mean z on the viridis colour map, brightness from the density "
                         "(IMAGE: float32 pages red, green, blue)")
      ->default_val(render.color)
      ->check(CLI::IsMember({"none", "z"}));
  render_cmd->add_option("--color-range", render.color_range,
                         "z of the colour map's ends, nm, as LOW:HIGH [default: 1st to 99th percentile of the pixels]")
      ->type_name("LOW:HIGH");
  Fit2dUndriftOptions undrift;
  auto* undrift_cmd = cli.add_subcommand(
      "undrift", "Correct the sample drift: redundant cross-correlation of time segments (RCC, as Picasso's undrift), "
                 "the fiducial markers' smoothed drift, or both; writes OUT_drift.txt (Picasso), OUT_drift.csv (nm) "
                 "and OUT_drift.png");
  add_locs_input(undrift_cmd, undrift.input, undrift.pixel_size_nm, "Localizations: ours, Picasso's or ThunderSTORM's");
  add_locs_output(undrift_cmd, undrift.output, undrift.format, "Undrifted localizations");
  app.bind(undrift_cmd, "--method", "Undrift/method");
  app.bind(undrift_cmd, "--segment", "Undrift/segment");
  app.bind(undrift_cmd, "--pixel", "Undrift/pixel");
  app.bind(undrift_cmd, "--max-grid", "Undrift/max grid");
  app.bind(undrift_cmd, "--max-drift", "Undrift/max drift");
  app.bind(undrift_cmd, "--max-error", "Undrift/max error");
  app.bind(undrift_cmd, "--smooth", "Undrift/smooth");
  // The same steps behind the localization, in one run (fit2d/postprocess.hpp: the files and their names).
  app.bind_flag("--undrift", "Postprocess/undrift",
                "then correct the drift of OUT as fit2d undrift does: OUT_undrift and its _drift.txt/.csv/.png");
  app.bind_flag("--link", "Postprocess/link",
                "then merge each blink of the last file as fit2d link does: <last>_link");
  app.bind_flag("--render", "Postprocess/render",
                "then render the last file as fit2d render does: <last>.tif (float32, pixel size in the metadata) "
                "and <last>.png (preview with a scale bar); needs the camera's pixel size");
  app.bind("--undrift-method", "Undrift/method");
  app.bind("--undrift-segment", "Undrift/segment");
  app.bind("--undrift-pixel", "Undrift/pixel");
  app.bind("--undrift-max-grid", "Undrift/max grid");
  app.bind("--undrift-max-drift", "Undrift/max drift");
  app.bind("--undrift-max-error", "Undrift/max error");
  app.bind("--undrift-smooth", "Undrift/smooth");
  app.bind("--link-radius", "Link/radius");
  app.bind("--link-max-dark", "Link/max dark");
  app.bind("--render-pixel", "Render/pixel");
  app.bind("--render-mode", "Render/mode");
  app.bind("--render-registration", "Render/registration");
  app.bind("--baseline", "Camera/Baseline");
  app.bind("--sensitivity", "Camera/Sensitivity");
  app.bind("--gain", "Camera/Gain");
  app.bind("--qe", "Camera/Qe");
  app.bind("--pixel-size", "Camera/Pixelsize");
  app.bind("--box", "Detection/box");
  app.bind("--threshold", "Detection/threshold");
  app.bind("--min-net-gradient", "Detection/min net gradient");
  app.bind("--model", "Fit/model");
  app.bind("--fit-precision", "Fit/precision");
  app.bind("--estimator", "Fit/estimator");
  app.bind("--camera-maps", "Camera/maps");
  app.bind("--calibration", "Fit/calibration");
  app.bind("--z-range", "Fit/z range");
  app.bind("--z-factor", "Fit/z factor");
  app.bind("--max-iterations", "Fit/max iterations");
  app.bind("--recenter", "Fit/recenter");
  app.bind("--duplicates", "Filter/duplicates");
  app.set_footer(
      "Examples:\n"
      "  fit2d stack.tif -o locs.csv                      ThunderSTORM CSV (nm, frames from 1)\n"
      "  fit2d movie.raw -o movie_locs.hdf5 --gain 100    Picasso HDF5 + YAML, EMCCD\n"
      "  fit2d beads.tif --track                          drift from fiducial markers\n"
      "  fit2d calibrate beads.tif --z-step 10 --model spline -o psf.h5   3D calibration (the beads' own PSF)\n"
      "  fit2d calibrate zstack.tif --z-step 20 -o astig.json   astigmatic 3D calibration from beads\n"
      "  fit2d movie.tif --calibration astig.json -o locs.hdf5  3D: x, y, z (nm) and lpz\n"
      "  fit2d movie.tif --calibration psf.h5 --box 13 -o locs.hdf5   3D with the measured PSF (spline model)\n"
      "  fit2d filter locs.hdf5 -o good.hdf5 --where 'photons > 500 and lpx < 0.1'   keep the good ones\n"
      "  fit2d link locs.hdf5 -o linked.hdf5 --radius 0.8px --max-dark 1   one localization per blink (the defaults)\n"
      "  fit2d render locs.hdf5 -o picture.tif --pixel 10   the picture (+ picture.png with a scale bar)\n"
      "  fit2d render locs3d.hdf5 -o depth.tif --color z --device cuda   3D: RGB by z, rendered on the GPU\n"
      "  fit2d undrift locs.hdf5 -o undrifted.hdf5 --segment 500   RCC drift correction (+ _drift.txt/.csv/.png)\n"
      "  fit2d movie.tif -o locs.hdf5 --undrift --link --render   the pipeline in one run: locs.hdf5,\n"
      "      locs_undrift.hdf5 (+ _drift.txt/.csv/.png), locs_undrift_link.hdf5, locs_undrift_link.tif/.png\n"
      "      (options of each step: --undrift-segment 500, --link-radius 3x, --render-pixel 5, ...; or the\n"
      "      Undrift, Link and Render subsections of a parameter file: fit2d --print-params)\n"
      "  fit2d live.tif --roi markers.txt --stream        per-frame drift for a stage controller\n"
      "  fit2d --params params/fit2d.prm stack.tif        camera and filters from a file\n"
      "  fit2d --print-params > my.prm                    every parameter with its default\n"
      "  fit2d s.tif --frames 0:5000 --partial p0.h5 ; fit2d merge p*.h5 -o locs.csv   the same rows, in parts\n"
      "  mpirun -n 4 fit2d s.tif -o locs.csv              four ranks, rank 0 writes\n"
      "  scripts/nanoscopy-submit fit2d s.tif -o locs.csv --chunks 16   a SLURM job array and a merge job");
  app.add_frames_command();
  return app.run(argc, argv, [&](ToolContext& ctx) {
    if (*merge_cmd) return run_fit2d_merge(merge, ctx, std::cout);
    if (*calibrate_cmd) return run_fit2d_calibrate(calibrate, ctx, std::cout);
    if (*filter_cmd) return run_fit2d_filter(filter, ctx, std::cout);
    if (*link_cmd) return run_fit2d_link(link, ctx, std::cout);
    if (*render_cmd) return run_fit2d_render(render, ctx, std::cout);
    if (*undrift_cmd) return run_fit2d_undrift(undrift, ctx, std::cout);
    run_fit2d_cli(o, ctx, std::cout);
  });
}
