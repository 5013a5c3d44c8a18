// `bench spline3d`: the bead-to-3D path end to end on a PSF that is not a Gaussian,
// the astigmatic Gaussian and the cubic spline side by side (issue 27).
//
//  1. A bead z-stack with the pupil-function PSF (sim/pupil_psf.hpp: astigmatism,
//     coma and spherical aberration, so +z and −z differ): --beads beads, ±--bead-z-range
//     nm in --z-step steps.
//  2. Both calibrations from it, by fit2d itself: `fit2d calibrate --model spline -o
//     psf.h5` and `fit2d calibrate --model astigmatic -o astig.json`.
//  3. A movie of emitters on a grid (one per --spacing px cell, all on, --frames frames), each at a
//     z uniform in ±--z-range nm, --photons photons over --background photons/px.
//  4. `fit2d movie.tif --calibration astig.json` and `--calibration psf.h5` (with
//     --recenter: its boxes moved onto the fits far from focus, loc/recenter.hpp), then each
//     localization matched to the truth of its frame (nearest within 250 nm).
//  5. Per 100 nm of true z: matches, x, y, z RMS (about the model's mean offset: a
//     calibration's x/y origin is a convention), z bias, the Cramér–Rao bound of the TRUE
//     pupil PSF (Poisson, θ = x, y, z, photons, background over the fit's box, derivatives
//     by central differences of the pupil model itself, averaged over the bin's z and
//     sub-pixel positions), and RMS/CRB.
//  6. Per bin, the maximum-likelihood fit whose model is the true pupil PSF itself on centred
//     boxes (--exact-fits per bin, bench/exact_pupil_fit.hpp): how close to the bound any fit can come.
// The files stay in --dir. fit2d is run from beside bench (or --fit2d PATH).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>

namespace nanoscopy {

struct Spline3dBenchOptions {
  std::string dir = "spline3d_bench";
  std::string fit2d;           // path of fit2d; "" = beside this bench
  std::string device = "auto"; // passed to fit2d
  int beads = 5;
  double bead_z_range_nm = 800, z_step_nm = 10, bead_photons = 20000;
  double z_range_nm = 600;
  std::int64_t frames = 160;  // 225 emitters evenly over 12 bins (18–19 each) × 160 frames, all on: ≥ 2,880 per bin
  int grid = 15;               // emitters per side of the grid (grid² per frame)
  // px between grid neighbours: isolated emitters, as the CRB assumes. At 16 px the spots far from focus
  // (stretched over ±8 px) reach into their neighbours' 13-px boxes, and the +500..+600 nm bin loses a
  // third of its emitters to detection (1,290 of 2,250 kept).
  int spacing = 24;
  double photons = 2000, background = 20;
  int box = 13;                // fit2d's box for the movie
  std::string recenter = "auto";  // fit2d's --recenter for the spline fits
  std::int64_t exact_fits = 2000;  // per bin, the true-PSF MLE's reference (0: none): ±1.6 % on its RMS
  std::uint64_t seed = 1;
};

void add_spline3d_options(CLI::App& cmd, Spline3dBenchOptions& options);

// Prints the tables to `out`; a model whose fit2d run fails is reported with fit2d's message
// (the spline fit comes with issue 27's part A: until then its row says so) and the other goes on.
void run_spline3d_bench(const Spline3dBenchOptions& options, std::ostream& out);

}  // namespace nanoscopy
