// Camera model and units, with Picasso's names (ThunderSTORM and SMAP aliases
// are accepted by fit2d's parameters). Picasso's convention, followed so that
// numbers agree with it: photons = (ADU − Baseline) · Sensitivity / Gain; Qe is
// recorded but not applied.
#pragma once

#include <string>

namespace nanoscopy {

struct Camera {
  double baseline = 100.0;     // ADU added by the camera
  double sensitivity = 1.0;    // electrons per ADU
  double em_gain = 1.0;        // electron-multiplying gain (1: no EM gain)
  double qe = 1.0;             // quantum efficiency (recorded, not applied)
  double pixel_size_nm = 100;  // back-projected pixel size

  // Photons per ADU above the baseline.
  double photons_per_adu() const { return sensitivity / em_gain; }
  // Mortensen's excess-noise factor: 2 with EM gain, else 1.
  double excess_noise() const { return em_gain > 1.0 ? 2.0 : 1.0; }
  // UsageError naming `where` for gain ≤ 0, sensitivity ≤ 0, qe outside (0, 1], pixel size ≤ 0.
  void validate(const std::string& where) const;
};

// Localization precision (Mortensen et al. 2010, least squares), in pixels:
// σ_a² = σ² + a²/12 with a = 1 px, τ = 2π σ_a² b / N, Var = F·(σ_a²/N)·(16/9 + 4τ).
// sigma in px, photons N, background b in photons per pixel, F excess noise.
double mortensen_precision(double sigma, double photons, double background, double excess_noise);

}  // namespace nanoscopy
