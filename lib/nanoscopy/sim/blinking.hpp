// Simulated SOFI stacks: static emitters that blink in continuous time
// (exponential or power-law on/off durations, optional bleaching), imaged with
// a pixel-integrated Gaussian PSF onto an (EM)CCD/sCMOS camera model.
//
// Time is measured in frames (frame t covers [t, t+1)); positions in camera
// pixels with the centre of pixel i at i. An emitter that is on for a time
// τ ∈ [0, 1] within a frame emits brightness·τ photons in it (exact overlap of
// its on intervals with the frame).
//
// Camera, per pixel and frame: e = Poisson(background + Σ photons·PSF) (QE 1),
// then with EM gain g > 1: e = Gamma(shape e, scale g) (Hirsch et al. 2013,
// PLoS ONE 8:e53671), plus Normal(0, read_noise) e⁻;
// ADU = round(baseline + e / sensitivity), clipped to uint16. Hence
// photons ≈ (ADU − baseline)·sensitivity / gain, as in Picasso.
//
// Determinism: the same settings and seed give the same files (with the same
// build: Poisson/Gamma/Normal draws come from the standard library). Each
// emitter blinks from its own random stream derived from (seed, emitter id),
// so camera settings do not change the blinking, and the camera noise has a
// stream of its own.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace nanoscopy {

struct BlinkingSettings {
  // Stack
  std::int64_t frames = 1000;
  std::int64_t width = 128;          // pixels
  std::int64_t height = 128;         // pixels
  double pixel_size_nm = 100;        // camera pixel edge in the sample, nm

  // Emitter positions
  std::string structure = "random";  // "random" points, "lines" (straight filaments), "rings" (circles)
  int emitters = 200;                // number of emitters (ignored when density > 0)
  double density = 0;                // emitters per µm² of the field; 0: use `emitters`
  int filaments = 0;                 // lines: number of filaments; 0: one per 40 emitters
  int rings = 0;                     // rings: number of rings; 0: one per 12 emitters
  double ring_radius_min_nm = 150;   // rings: radius uniform in [min, max], nm
  double ring_radius_max_nm = 300;

  // Blinking (durations in frames)
  std::string blinking = "power-law";  // "exponential" or "power-law"
  double mean_on_frames = 2;         // exponential: mean on duration
  double mean_off_frames = 6;        // exponential: mean off duration
  double alpha_on = 0.8;             // power-law: Pareto tail exponent μ of on durations,
  double alpha_off = 0.6;            //   P(τ > t) = (t_min/t)^μ, i.e. density ∝ t^−(1+μ)
  double power_law_min_frames = 0.1;   // power-law: t_min (shortest duration)
  double power_law_max_frames = 100;   // power-law: cap; longer draws are cut to it (keeps ⟨τ⟩ finite)
  double bleach_frames = 0;          // mean on-time before bleaching (exponential), frames; 0: never
  double photon_budget = 0;          // mean photons emitted before bleaching (exponential); 0: unlimited

  // Optics and camera
  double brightness = 2000;          // photons per frame while on
  double psf_sigma = 1.5;            // Gaussian PSF standard deviation, pixels (FWHM 2.355σ)
  double background = 100;           // photons per pixel per frame
  double em_gain = 1;                // EM gain; 1: no EM register
  double read_noise = 1.5;           // e⁻ rms
  double baseline = 100;             // ADU offset
  double sensitivity = 1;            // e⁻ per ADU
  bool noise_free = false;           // no Poisson, Gamma or read noise: e = expectation × em_gain

  // Stage drift (sofi --undrift tests and bench): in frame t every emitter sits
  // at its position + blinking_drift(settings, t), a linear drift plus a
  // sinusoidal wobble; zero at frame 0, so the truth is frame 0's sample.
  double drift_x_px_per_frame = 0, drift_y_px_per_frame = 0;
  double drift_wobble_px = 0;          // amplitude of the wobble, px (x and y, a quarter period apart)
  double drift_wobble_period = 1000;   // frames

  // Truth
  int truth_upsample = 8;            // the truth image's grid is the camera grid × this

  std::uint64_t seed = 1;
};

// One emitter as <stem>_emitters.csv has it (for truth images in memory).
struct BlinkingEmitter {
  double x = 0, y = 0;     // px at frame 0
  double brightness = 0;   // photons per frame while on
  double on_fraction = 0;  // measured over the movie
};

// What was simulated (the per-emitter rows are in <stem>_emitters.csv).
struct BlinkingResult {
  std::vector<BlinkingEmitter> emitter_list;  // the rows of the CSV
  std::int64_t emitters = 0;
  double mean_on_fraction = 0;   // measured over the movie, averaged over emitters
  std::int64_t bleached = 0;     // emitters that bleached within the movie
  std::string emitters_csv;      // <stem>_emitters.csv
  std::string truth_image;       // <stem>_truth.tif
  std::string mean_image;        // <stem>_mean.tif
};

// Writes the stack (uint16 TIFF, or HDF5 by extension) frame by frame, and
// beside it (all atomically; the stack is renamed into place last):
//  <stem>_emitters.csv  id, x_px, y_px, x_nm, y_nm, brightness, on_fraction,
//                       bleach_frame (−1: never). x_nm = (x_px + 0.5)·pixel size
//                       (origin at the image corner, as in the ThunderSTORM CSV).
//  <stem>_truth.tif     float32, (width·u) × (height·u) for u = truth_upsample:
//                       each emitter a delta of brightness × on_fraction in the
//                       fine pixel holding it (fine pixel centres at integers,
//                       fine X = (x + 0.5)·u − 0.5).
//  <stem>_mean.tif      float32, width × height: the noise-free expected photons
//                       per pixel, averaged over the movie's frames (background
//                       included, camera gain and baseline not).
// Memory does not depend on the frame count. Throws UsageError for bad settings.
// `quiet`: no progress on stderr.
BlinkingResult simulate_blinking(const BlinkingSettings& settings, const std::string& path, bool quiet = true);

// Building blocks, public for tests.

struct DriftPx {
  double x = 0, y = 0;
};
// The imposed stage drift at (the start of) frame t, px; (0, 0) at t = 0.
DriftPx blinking_drift(const BlinkingSettings& settings, double t);

// Capped Pareto duration t_min·v^(−1/μ), at most `cap`, for v ∈ (0, 1].
double pareto_duration(double t_min, double mu, double cap, double v);
// Mean of that capped law: t_min + t_min^μ (cap^(1−μ) − t_min^(1−μ)) / (1 − μ).
double capped_pareto_mean(double t_min, double mu, double cap);
// Stationary on-fraction of the blinking without bleaching: ⟨τ_on⟩ / (⟨τ_on⟩ + ⟨τ_off⟩).
double stationary_on_fraction(const BlinkingSettings& settings);

// One emitter's blinking, frame by frame. Starts stationary: on with the
// stationary on-fraction, the first duration drawn from the equilibrium
// (residual-life) law, so no start-up transient (exponential: memoryless).
class BlinkingTrace {
 public:
  BlinkingTrace(const BlinkingSettings& settings, std::uint64_t emitter_id);
  // Time the emitter is on within the next frame, in frames ∈ [0, 1]. Call once per frame, in order.
  double next_frame();
  double total_on_time() const { return total_on_; }  // frames
  std::int64_t bleach_frame() const { return bleach_frame_; }  // −1: not bleached (yet)

 private:
  double draw(bool on_state, bool first);
  double uniform();  // (0, 1]

  std::uint64_t state_;  // splitmix64: 8 bytes per emitter
  bool exponential_;
  double mean_on_, mean_off_, mu_on_, mu_off_, t_min_, cap_;
  bool on_ = false;
  double switch_time_ = 0;  // absolute time (frames) of the next state change
  double budget_ = std::numeric_limits<double>::infinity();  // on-time left before bleaching
  std::int64_t frame_ = 0;
  std::int64_t bleach_frame_ = -1;
  double total_on_ = 0;
};

}  // namespace nanoscopy
