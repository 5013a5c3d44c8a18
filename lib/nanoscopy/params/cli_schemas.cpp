#include "nanoscopy/params/tool_schemas.hpp"

#include "nanoscopy/sofi/balanced.hpp"  // kBalancedRlIterations

namespace nanoscopy {
namespace {

// Shared by every tool that streams a stack.
void add_input(Schema& s) {
  s.integer("Input/chunk frames", 256, 1, 1 << 20, "frames read per chunk while streaming (memory ~ chunk x frame size)");
  s.integer("Input/read threads", 0, 0, 64,
            "threads that read and decode the stack, each taking a share of every chunk's frames (0: auto = half "
            "the hardware threads, 1 to 8; HDF5 is read by one); the results do not depend on it");
}

}  // namespace

const Schema& fit2d_schema() {
  static const Schema schema = [] {
    Schema s("fit2d");
    add_input(s);
    // Camera: Picasso's names; ThunderSTORM's and SMAP's spellings are aliases.
    s.real("Camera/Baseline", 100, {}, {}, "camera offset in ADU (dark level)");
    s.positive_real("Camera/Sensitivity", 1, "electrons per ADU (conversion factor)");
    s.positive_real("Camera/Gain", 1, "EM gain (1 for sCMOS or a CCD without EM gain)");
    s.real("Camera/Qe", 1, 0, 1, "quantum efficiency (recorded with the results; not applied, as in Picasso)");
    s.positive_real("Camera/Pixelsize", 100, "back-projected pixel size in nm (the file's own value wins when it has one)");
    s.alias("Camera/offset", "Camera/Baseline");            // ThunderSTORM, SMAP
    s.alias("Camera/photons2ADU", "Camera/Sensitivity");    // ThunderSTORM
    s.alias("Camera/conversion", "Camera/Sensitivity");     // SMAP
    s.alias("Camera/gainEM", "Camera/Gain");                // ThunderSTORM
    s.alias("Camera/emgain", "Camera/Gain");                // SMAP
    s.alias("Camera/quantumEfficiency", "Camera/Qe");       // ThunderSTORM
    s.alias("Camera/pixelSize", "Camera/Pixelsize");        // ThunderSTORM (nm)
    s.integer("Detection/box", 7, 3, 31, "ROI edge in pixels (odd): spots are cut and fitted in box x box regions");
    s.positive_real("Detection/threshold", 5, "a candidate's smoothed peak must exceed this many noise standard deviations");
    s.real("Detection/min net gradient", 0, 0, {},
           "Picasso Localize's identification threshold in its units (camera counts, ADU): candidates whose net "
           "gradient does not exceed it are dropped before fitting; recorded as 'Min. Net Gradient' (0: off)");
    s.integer("Fit/max iterations", 20, 1, 1000, "Levenberg-Marquardt iterations before giving up");
    s.real("Fit/max error", 0, 0, {}, "stop when the normalized chi^2 falls below this (0: off)");
    s.real("Fit/min delta", 1e-6, 0, 1, "stop when chi^2 decreases by less than this fraction");
    s.real("Fit/min step", 1e-4, 0, 1, "stop when every parameter step is below this fraction of the parameter");
    s.choice("Fit/model", "integrated", {"sampled", "integrated", "elliptical", "astigmatic", "spline"},
             "spot shape: pixel-integrated Gaussian (erf; photons = amplitude), sampled Gaussian (the paper's), "
             "elliptical: pixel-integrated with sigma_x and sigma_y (astigmatic beads and spots), or astigmatic: "
             "3D, x, y and z with sigma_x(z), sigma_y(z) from Fit/calibration (set by --calibration), or spline: "
             "3D with the measured PSF of a spline calibration (psf.h5, set by --calibration)");
    s.string("Fit/calibration", "",
             "3D calibration: an astigmatic one (JSON, as fit2d calibrate writes it) localizes in x, y and z (nm) "
             "with the astigmatic model; a spline one (HDF5 psf.h5, fit2d calibrate --model spline) with the "
             "spline model (chosen by the file's content); empty: 2D");
    s.positive_real("Fit/z factor", 1,
                    "spline model: reported z (and lpz) = factor x the calibration's z, for the refractive-index "
                    "mismatch between the bead calibration and the sample (Picasso's 0.79 for an oil objective "
                    "imaging in water; 1: none)");
    s.string("Fit/z range", "",
             "3D: the depths a fit may take, 'min:max' in nm (e.g. -400:400); it must lie inside the calibrated "
             "range; empty: the calibration's whole range");
    s.string("Fit/recenter", "auto",
             "a spot's box is placed on the detector's maximum, which far from focus need not be the emitter's "
             "centre: a fit whose centre lies more than this distance (px) from its box's centre is fitted again in "
             "a box around that centre; auto: 1 px for the spline model, off for the others; off; or a distance");
    s.choice("Fit/precision", "auto", {"auto", "float", "double"},
             "arithmetic of the fit: auto = double on the CPU, float on a GPU (the same accuracy; GeForce and "
             "Quadro cards run FP64 at 1/32 to 1/64 speed)");
    s.choice("Fit/estimator", "auto", {"auto", "lsq", "wlsq", "mle"},
             "what the fit minimizes: lsq = least squares (the paper's method: alpha, beta in closed form; "
             "Mortensen's precision), wlsq = weighted least squares (weights 1/max(photons, 1)), mle = Poisson "
             "maximum likelihood (at the Cramer-Rao bound); wlsq and mle fit the pixels converted to photons with "
             "the camera's Baseline, Sensitivity and Gain, and report the Cramer-Rao bound as the precision (x sqrt 2 "
             "with EM gain). auto: mle for camera data (the camera's Baseline/Sensitivity/Gain set here or by the "
             "movie's metadata, or camera maps), lsq otherwise (without a known camera the photon counts mle needs "
             "are guesses)");
    s.string("Camera/maps", "",
             "sCMOS camera maps for wlsq/mle (maps.h5 with /offset, /gain [ADU/e-], /variance [ADU^2], or "
             "offset.tif,gain.tif,variance.tif): each ROI is fitted in photons with its per-pixel read-noise shift "
             "var/gain^2; empty: the movie's .yaml 'Camera maps:' entry if any (used by wlsq/mle only)");
    s.real("Filter/min sigma", 0.5, 0, {}, "drop fits with a PSF sigma below this (px; Gaussian models: the spline fits no width)");
    s.real("Filter/max sigma", 3.0, 0, {}, "drop fits with a PSF sigma above this (px; Gaussian models: the spline fits no width)");
    s.real("Filter/min photons", 0, 0, {}, "drop fits with fewer photons");
    s.real("Filter/max precision", 0, 0, {}, "drop fits whose localization precision is worse than this (nm; 0: off)");
    s.string("Filter/duplicates", "auto",
             "one emitter fitted twice in a frame (an elongated 3D spot detected twice): of the localizations of a "
             "frame closer than this distance (px) keep the most precise, as ThunderSTORM's 'remove duplicates'; "
             "auto: 1 px for the spline model (its spots far from focus), off for the others; off; or a distance");
    s.choice("Output/format", "auto", {"auto", "csv", "hdf5"},
             "auto: from the extension (.csv ThunderSTORM, .hdf5 Picasso)");
    s.boolean("Output/fit diagnostics", false,
              "also write chi2, iterations and status per localization: after Picasso's own fields (HDF5; "
              "Picasso's link and other post-processing drop them) or ThunderSTORM's columns (CSV)");
    s.real("Tracking/radius", 1.0, 0, {}, "link a localization to a track whose last point is within this distance (px)");
    s.integer("Tracking/max gap", 3, 0, 1000000, "frames a marker may be missing and still continue its track");
    s.integer("Tracking/min length", 20, 1, {}, "tracks with fewer points are not markers");
    s.real("Tracking/min presence", 0.5, 0, 1, "a marker must be found in at least this fraction of the frames");
    // The postprocessing steps (fit2d undrift, link, render), each reachable from fit2d STACK in one run
    // (Postprocess/...) and read by the subcommands too, so a step has one set of defaults wherever it runs.
    s.boolean("Postprocess/undrift", false,
              "after localizing, correct the drift as fit2d undrift does (section Undrift): OUT_undrift + its "
              "_drift.txt/.csv/.png");
    s.boolean("Postprocess/link", false,
              "after localizing (and undrifting), merge each blink as fit2d link does (section Link): ..._link");
    s.boolean("Postprocess/render", false,
              "after the other steps, render the last file's picture as fit2d render does (section Render): "
              "<last file>.tif + .png");
    s.choice("Undrift/method", "rcc", {"rcc", "fiducial", "combined"},
             "rcc: redundant cross-correlation of time segments (Picasso's undrift); fiducial: the markers found as "
             "by --track (section Tracking), smoothed; combined: RCC plus the markers' smoothed difference from it");
    s.string("Undrift/segment", "auto",
             "frames per RCC segment, or auto: the shortest holding 1500 localizations (a sharp correlation peak), "
             "at least 20 frames, at most 40 segments (Picasso's default is 1000)");
    s.real("Undrift/pixel", 0, 0, {}, "RCC grid pixel, nm (0: a fifth of the camera pixel)");
    s.integer("Undrift/max grid", 1024, 64, 32768,
              "largest RCC grid side, pixels (the pixel grows beyond it; memory: segments x grid x 8 bytes)");
    s.positive_real("Undrift/max drift", 3000, "largest drift between two RCC segments, nm");
    s.real("Undrift/max error", 0, 0, {},
           "drop RCC pairs that disagree with the solution by more than this, nm (0: 4 robust sigma)");
    s.integer("Undrift/smooth", 100, 3, {}, "frames of the markers' robust smoothing window (fiducial, combined)");
    s.string("Link/radius", "0.8px",
             "one blink's localizations lie within 0.8px, 100nm, or 5x (times the larger precision of the two); "
             "0.8px with max dark 1 splits and merges about 1 % of the true blinks or less on simulated rings "
             "and lines, sparse and dense, where 5x splits up to 5 % (bench postprocess, docs/fit2d.md)");
    s.integer("Link/max dark", 1, 0, 1000000, "frames a blink may be missed and still continue");
    s.positive_real("Render/pixel", 10, "rendered pixel, nm");
    s.choice("Render/registration", "camera", {"camera", "picasso"},
             "where the picture lies on the camera frame: camera (its corner is the frame's, camera pixel i centred "
             "at x = i: the picture overlays the movie) or picasso (its corner at x = 0, as Picasso's render: each "
             "localization half a camera pixel further left and up in the picture)");
    s.choice("Render/mode", "gaussian", {"gaussian", "histogram"},
             "gaussian: each localization a Gaussian of sigma = its precision; histogram: counts per pixel");
    return s;
  }();
  return schema;
}

const Schema& sofi_schema() {
  static const Schema schema = [] {
    Schema s("sofi");
    add_input(s);
    s.string("SOFI/orders", "2,3,4", "cumulant orders, comma-separated: 2..6 (auto), 2..4 (--cross)");
    s.string("SOFI/lags", "",
             "time lags in frames, comma-separated and distinct; order n uses the first n (empty: 0,1,...,n-1)");
    s.integer("SOFI/block", 500, 2, {}, "frames per block: each block is centred on its own mean (bleaching), block "
                                        "results are averaged; the last block takes the remainder");
    s.boolean("SOFI/cross", false, "cross-cumulants of distinct pixels at zero lag on an n-times finer grid");
    s.boolean("SOFI/moments", false, "central moments (mSOFI) instead of cumulants");
    s.positive_real("SOFI/psf sigma", 1.5,
                    "PSF standard deviation in px (distance factor of --cross; the deconvolution of --balanced, "
                    "which needs it given)");
    s.boolean("SOFI/balanced", false,
              "balanced SOFI (bSOFI): orders 2..n (n = 3 or 4, the largest of orders) deconvolved; writes "
              "<out>_balanced.tif (balanced image; with n = 4 also on-time ratio, brightness, density) and PNGs");
    s.choice("SOFI/deconvolution", "rl", {"rl", "smre"},
             "balanced: deconvolution of order n with the PSF sigma/sqrt(n): Richardson-Lucy or SMRE");
    s.integer("SOFI/rl iterations", kBalancedRlIterations, 1, 10000, "balanced: Richardson-Lucy iterations per order");
    s.string("SOFI/deconvolution smre", "",
             "balanced with smre: smre parameter file (empty: smre's defaults); its PSF sigma is replaced");
    s.real("SOFI/parameter mask", 0.05, 0, 1,
           "balanced: rho, epsilon, density are NaN where the order-2 image is below this fraction of its maximum");
    s.string("SOFI/pre smre", "", "smre parameter file: restore every frame with SMRE first (SOFI2(SMRE))");
    s.string("SOFI/post smre", "",
             "smre parameter file: restore each cumulant image (SMRE(SOFI2)); its PSF sigma is the camera's, "
             "divided by sqrt(order) on the image's own grid");
    s.choice("SOFI/split", "none", {"none", "odd-even", "halves"},
             "also write images of the even/odd frames (_even, _odd) or of the two halves (_first, _second), for frc");
    // Drift and bleaching corrections (issue 19): a first pass over the frames before the cumulants.
    s.boolean("SOFI/undrift", false,
              "estimate the stage drift from the mean images of --drift-block blocks (cross-correlation) and shift "
              "every frame back by it (bilinear) before the cumulants; writes OUT_drift.csv and OUT_drift.png");
    s.integer("SOFI/drift block", 0, 0, {}, "frames per drift block of --undrift (0: --block)");
    s.real("SOFI/max drift", 0, 0, {},
           "largest drift between any two drift blocks in px, the correlation's search radius (0: a quarter of the "
           "smaller frame side)");
    s.choice("SOFI/bleach correction", "block", {"none", "block", "exponential"},
             "none: one block over the whole range; block: each --block centred on its own mean; exponential: "
             "f(t) = A exp(-t/tau) + C fitted to the mean intensity, every frame scaled by f(0)/f(t) first, then blocks");
    // sofi esrrf (issue 28): NanoPyx's / NanoJ-eSRRF's parameters and defaults.
    s.integer("eSRRF/magnification", 5, 1, 20, "sofi esrrf: output pixels per input pixel along each axis");
    s.positive_real("eSRRF/radius", 1.5,
                    "sofi esrrf: radius in input px of the radial gradient convergence; its Gaussian weighting has "
                    "sigma = radius / 2.355");
    s.positive_real("eSRRF/sensitivity", 1, "sofi esrrf: the convergence is raised to this power (where > 1)");
    s.integer("eSRRF/frames per timepoint", 0, 0, {},
              "sofi esrrf: frames per output image (0: all frames, one image); more images: a time series");
    s.integer("eSRRF/step", 0, 0, {},
              "sofi esrrf: frames between the starts of consecutive time points (0: frames per timepoint, no "
              "overlap); smaller: a sliding window");
    s.choice("eSRRF/temporal", "avg", {"avg", "var", "tac2"},
             "sofi esrrf: temporal analysis of the convergence maps of a time point: avg (mean), var (variance, "
             "lag 0), tac2 (lag-1 autocorrelation of the mean-subtracted maps)");
    s.boolean("eSRRF/intensity weighting", true, "sofi esrrf: multiply the convergence by the magnified intensity");
    s.boolean("eSRRF/macro pixel correction", true,
              "sofi esrrf: divide each pixel by the mean of its position within the magnification grid (the image's "
              "mean units are kept)");
    s.boolean("eSRRF/error map", false,
              "sofi esrrf: SQUIRREL error map against the mean of the frames (RSE, RSP); writes OUT_errormap.tif/.png");
    s.string("eSRRF/sweep", "",
             "sofi esrrf: parameter sweep scored by QnR, e.g. radius=1:2:0.25,sensitivity=1:4; the best pair makes "
             "the image; writes OUT_sweep.csv");
    s.real("Output/pixel size", 0, 0, {}, "pixel size in nm recorded in the output (0: the stack's own, if any)");
    return s;
  }();
  return schema;
}

const Schema& frc_schema() {
  static const Schema schema = [] {
    Schema s("frc");
    add_input(s);
    s.integer("Input/page", 0, 0, {}, "page (frame) of each multi-page image in two-image mode (sofi writes one per order)");
    s.choice("Input/split", "none", {"none", "odd-even", "halves"},
             "one stack: sum of even vs odd frames, or of the first vs the second half (none: two images)");
    s.string("FRC/threshold", "1/7", "1/7, a number in (0, 1), half-bit, or k sigma (2sigma, 3sigma, ...)");
    s.real("FRC/pixel size", 0, 0, {}, "camera pixel size in nm (0: the file's own, else results in px only)");
    s.real("FRC/tukey fraction", 0.125, 0, 0.5, "cosine taper of the window on each side, as a fraction of the side");
    s.positive_real("FRC/render px", 10, "localizations: rendered histogram pixel in nm");
    s.string("FRC/field", "",
             "localizations: the camera frame WxH in camera pixels (empty: the .yaml beside the file, else the "
             "localizations' extent)");
    s.integer("FRC/time blocks", 20, 2, 1000000, "localizations: blocks of consecutive frames, half to each image (even)");
    s.integer("FRC/seed", 1, 0, {}, "localizations: seed of the random assignment of time blocks");
    // frc decorr (decorrelation analysis, Descloux et al. 2019; ImDecorr's getDcorr).
    s.integer("Decorr/radii", 50, 30, 200, "decorr: mask radii Nr per curve, linspace(0, 1, Nr) of the normalised frequency");
    s.integer("Decorr/filters", 10, 5, 31, "decorr: Gaussian high-pass filters Ng per refinement step");
    s.real("Decorr/apodization", 20, 0, {},
           "decorr: edge apodization band in px (half-sine taper to the image mean; at most a quarter of each side)");
    s.choice("Decorr/units", "nm", {"nm", "um"}, "decorr: unit of the reported resolution when the pixel size is known");
    return s;
  }();
  return schema;
}

const Schema& bench_schema() {
  static const Schema schema = [] {
    Schema s("bench");
    s.integer("seed", 1, 0, {}, "random seed of every simulation");
    s.integer("repeats", 5, 1, 1000, "timed repetitions per cell (the median is reported)");
    return s;
  }();
  return schema;
}

}  // namespace nanoscopy
