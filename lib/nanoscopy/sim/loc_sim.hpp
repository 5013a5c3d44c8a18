// Localizations simulated straight from the emitter truth, without images
// (bench postprocess: undrift and link against a known drift and known blinks,
// at 10^5–10^7 localizations, where fitting movies would take hours).
//
// Emitters sit on a structure (sim/structures.hpp) in a width × height px
// field and blink as in the movie simulator (a two-state Markov chain per
// frame: mean on period `mean_on_frames`, duty cycle `on_fraction`, starting
// stationary); every frame an emitter is on gives one localization, displaced
// by the drift (sim/drift.hpp) and by Gaussian noise of its precision. The
// precision is per blink: `precision_nm` times a lognormal factor (log-σ 0.3,
// the spread of the photon counts of real blinks), so linking's weights and
// its radius in multiples of the precision are exercised. Fiducial markers are
// on in every frame with `marker_precision_nm`. Deterministic for a seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nanoscopy/loc/localization.hpp"
#include "nanoscopy/loc/track/drift.hpp"
#include "nanoscopy/sim/drift.hpp"
#include "nanoscopy/sim/structures.hpp"

namespace nanoscopy {

struct LocSimSettings {
  std::int64_t frames = 20000;
  std::int64_t width = 256, height = 256;  // px
  double pixel_size_nm = 130;
  StructureSettings structure;  // its box and pixel size are set from the field (a 2 px margin)
  int emitters = 2000;
  double on_fraction = 0.025;   // of the frames; emitters × frames × on_fraction localizations on average
  double mean_on_frames = 3;    // mean length of a blink
  double precision_nm = 10;     // median localization precision
  double photons = 2000;        // recorded per localization (render, filters), scaled with the precision
  int markers = 0;              // fiducial markers, on in every frame
  double marker_precision_nm = 20;
  DriftSimSettings drift;
  std::uint64_t seed = 1;
};

struct SimulatedLocalizations {
  std::vector<Localization> locs;  // sorted by frame, positions drifted (px)
  std::vector<std::int64_t> blink;  // per localization: its true blink (on period), −1 for a marker
  std::int64_t blinks = 0;
  DriftTrace drift;                 // px per frame, as imposed
  std::vector<EmitterPoint> emitters;  // without drift (markers last)
};

// UsageError for frames < 1, a field under 8 px, emitters < 0, on_fraction outside (0, 1), a mean on
// period < 1 frame or a precision ≤ 0.
SimulatedLocalizations simulate_localizations(const LocSimSettings& settings);

}  // namespace nanoscopy
