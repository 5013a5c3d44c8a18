// Simulated single-molecule movies with known truth: emitters at random
// positions that blink (exponential on/off times), a pixel-integrated Gaussian
// PSF (round, or astigmatic with a z per emitter), uniform background, Poisson
// shot noise, then a camera: the plain one (gain and baseline), an EMCCD (gamma
// EM gain, read noise) or an sCMOS (per-pixel offset, gain and read noise).
// Also bead z-stacks for the astigmatic calibration. Used by the README's demo,
// by tests and by bench.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nanoscopy/core/astigmatism.hpp"
#include "nanoscopy/core/camera_maps.hpp"
#include "nanoscopy/sim/drift.hpp"
#include "nanoscopy/sim/pupil_psf.hpp"

namespace nanoscopy {

struct MovieSettings {
  std::int64_t frames = 200;
  std::int64_t width = 64;
  std::int64_t height = 64;
  int emitters = 30;
  // "random" positions, a "grid" (rows of evenly spaced emitters), or "lines" / "rings" (filaments and
  // circles, sim/structures.hpp, with the counts and radii below)
  std::string structure = "random";
  int filaments = 0;                 // lines: 0 = one per 40 emitters
  int rings = 0;                     // rings: 0 = one per 12 emitters
  double ring_radius_min_nm = 150, ring_radius_max_nm = 300;
  double on_fraction = 0.1;    // mean fraction of frames an emitter is on
  double mean_on_frames = 3;   // mean length of an on period
  double photons = 1500;       // photons per frame while on
  double psf_sigma = 1.3;      // pixels
  double background = 20;      // photons per pixel per frame
  double baseline = 100;       // ADU
  double sensitivity = 0.5;    // e- per ADU
  double pixel_size_nm = 108;
  int markers = 0;             // fiducial markers: always on, `marker_brightness` × photons
  double marker_brightness = 3;
  double drift_x = 0;          // stage drift, px per frame: every emitter sits at (x + t·drift_x, y + t·drift_y)
  double drift_y = 0;
  DriftSimSettings drift;      // and the imposed drift of sim/drift.hpp (linear + random walk) on top
  std::uint64_t seed = 1;

  // The camera after the shot noise (electrons = photons: Qe is not applied):
  //   "poisson"  ADU = baseline + electrons / sensitivity (the default);
  //   "emccd"    electrons → Gamma(shape electrons, scale em_gain) (excess noise
  //              factor 2), + Gaussian read noise of read_noise e⁻ rms, then as above;
  //   "scmos"    ADU = offset_i + gain_i · electrons + N(0, variance_i), per pixel from `maps`.
  // ADU are rounded and clamped to uint16.
  std::string camera = "poisson";
  double em_gain = 100;    // emccd
  double read_noise = 0;   // emccd: e⁻ rms, added after the EM gain
  std::shared_ptr<const CameraMaps> maps;  // scmos: width × height

  // Astigmatic 3D: when set, each emitter sits at a z drawn uniformly from
  // [z_min_nm, z_max_nm] and its σx, σy (px: the calibration's σ in nm over
  // pixel_size_nm) come from the calibration; psf_sigma is not used.
  std::optional<AstigmaticCalibration> astigmatism;
  double z_min_nm = -600, z_max_nm = 600;
  // 3D (not a z-stack): the emitters' z evenly spaced over [z_min_nm, z_max_nm] in random order instead of
  // uniform at random, so that every depth bin of a benchmark holds the same number of emitters.
  bool z_even = false;

  // Bead z-stack (needs `astigmatism`): `beads` always-on emitters at random
  // (x, y); frame t shows them at z = z_min_nm + t · z_step_nm (emitters,
  // on_fraction and markers are not used).
  bool z_stack = false;
  int beads = 1;
  double z_step_nm = 10;

  // The pupil-function PSF (sim/pupil_psf.hpp) instead of the Gaussian: 3D, each emitter at a z
  // uniform in [z_min_nm, z_max_nm] (a z-stack: frame t at z_min_nm + t · z_step_nm); `astigmatism`
  // and psf_sigma are not used. Its table must cover the z range. z-stack beads are placed at least
  // 2·half_width_px + 1 apart and half_width_px from the edges where the frame has room.
  std::shared_ptr<const PupilPsf> pupil;
  // Hot pixels: this many pixels (at seeded random places, the same in every frame) with
  // `hot_pixel_photons` extra expected photons in every frame (then Poisson like the rest).
  int hot_pixels = 0;
  double hot_pixel_photons = 2000;
};

struct EmitterTruth {
  std::int64_t frame;
  double x, y;     // pixels, centre of pixel i at i
  double photons;  // photons in this frame
  double z = 0;    // nm (astigmatic movies and z-stacks)
};

// sCMOS maps as a simulated camera has them (seeded, reproducible): offset
// N(100, 3²) ADU, gain N(2, 0.1²) ADU/e⁻ (at least 0.5), read-noise variance
// lognormal (median 6 ADU², log-σ 0.4) with a hot-pixel tail: 1% of the pixels
// 5–100× noisier.
CameraMaps simulate_camera_maps(std::int64_t width, std::int64_t height, std::uint64_t seed);

// Where each emitter is without drift, and the whole drift per frame.
struct MovieEmitter {
  double x, y;  // px
  double z;     // nm (astigmatic movies)
  bool marker;  // a fiducial marker (or a z-stack's bead)
};
struct MovieTruthExtras {
  std::vector<MovieEmitter> emitters;
  DriftTrace drift;  // px per frame: t·drift_x plus the imposed drift (an emitter at x is seen at x + dx[t])
};

// Writes the movie as uint16 TIFF (or HDF5 by extension) and returns the truth
// (one row per emitter per frame it was on, markers included, at their drifted
// positions); `extras` (optional) gets the emitters and the drift. Streams in
// batches of frames, made in parallel.
std::vector<EmitterTruth> simulate_movie(const MovieSettings& settings, const std::string& path,
                                         MovieTruthExtras* extras = nullptr);

}  // namespace nanoscopy
