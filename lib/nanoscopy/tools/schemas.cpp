#include "nanoscopy/tools/schemas.hpp"

namespace nanoscopy {
namespace {

// Shared by every tool that streams a stack.
void add_input(Schema& s) {
  s.integer("Input/chunk frames", 256, 1, 1 << 20, "frames read per chunk while streaming (memory ~ chunk x frame size)");
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
    s.integer("Fit/max iterations", 20, 1, 1000, "Levenberg-Marquardt iterations before giving up");
    s.real("Fit/max error", 0, 0, {}, "stop when the normalized chi^2 falls below this (0: off)");
    s.real("Fit/min delta", 1e-6, 0, 1, "stop when chi^2 decreases by less than this fraction");
    s.real("Fit/min step", 1e-4, 0, 1, "stop when every parameter step is below this fraction of the parameter");
    s.choice("Fit/model", "integrated", {"sampled", "integrated"},
             "spot shape: pixel-integrated Gaussian (erf; photons = amplitude) or sampled Gaussian (the paper's)");
    s.real("Filter/min sigma", 0.5, 0, {}, "drop fits with a PSF sigma below this (px)");
    s.real("Filter/max sigma", 3.0, 0, {}, "drop fits with a PSF sigma above this (px)");
    s.real("Filter/min photons", 0, 0, {}, "drop fits with fewer photons");
    s.real("Filter/max precision", 0, 0, {}, "drop fits whose localization precision is worse than this (nm; 0: off)");
    s.choice("Output/format", "auto", {"auto", "csv", "hdf5"},
             "auto: from the extension (.csv ThunderSTORM, .hdf5 Picasso)");
    s.real("Tracking/radius", 1.0, 0, {}, "link a localization to a track whose last point is within this distance (px)");
    s.integer("Tracking/max gap", 3, 0, 1000000, "frames a marker may be missing and still continue its track");
    s.integer("Tracking/min length", 20, 1, {}, "tracks with fewer points are not markers");
    s.real("Tracking/min presence", 0.5, 0, 1, "a marker must be found in at least this fraction of the frames");
    return s;
  }();
  return schema;
}

const Schema& sofi_schema() {
  static const Schema schema = [] {
    Schema s("sofi");
    add_input(s);
    return s;
  }();
  return schema;
}

const Schema& frc_schema() {
  static const Schema schema = [] {
    Schema s("frc");
    add_input(s);
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
