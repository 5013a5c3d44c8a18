// Decorrelation analysis (Descloux, Grussmayer & Radenovic, Nature Methods 16,
// 918-924, 2019): the resolution of ONE image from the correlation of its
// spectrum with its normalised spectrum, following ImDecorr's getDcorr.m
// (github.com/Ades91/ImDecorr; its definitions, not its code):
//   1. Edge apodization (apodImRect): (I - mean) times a separable mask that
//      rises as a half sine from 0 at the border to 1 over `apodization` px.
//   2. F = FFT of the apodized image, the mean (k = 0) removed (as the ImageJ
//      plugin does; otherwise the offset dominates the norms), restricted to
//      R < 1 (decorr_math.hpp: R = 1 at Nyquist). The normalised spectrum
//      Fn = F / |F| has unit modulus, so
//        d(r) = Re sum_{R<r} Fq Fn* / (||Fq|| ||Fn||_{R<r})
//             = sum_{R<r} |F| q(R) / (sqrt(sum_{R<1} |F|^2 q^2) sqrt(n(r)))
//      with n(r) the number of coefficients (|F| > 0) inside r and q the
//      high-pass weight (1 for d0). d is truncated to 3 decimals (getCorrcoef).
//   3. d0 over Nr radii r = linspace(0, 1, Nr); its peak by getDcorrLocalMax's
//      rules (a maximum at the last radius is dropped and the search repeats;
//      a peak must stand 0.0005 above the minimum after it).
//   4. Ng + 1 Fourier Gaussian high-pass copies, q = 1 - exp(-2 g^2 R^2),
//      g = [H/4, exp(linspace(log(2/k0), log(0.15), Ng))]; then getDcorr's
//      refinement: Ng filters between the two around the highest peak and Nr
//      radii from that peak - one step to +0.4.
//   5. Peaks with an amplitude below 0.05 are dropped; kcMax = the highest
//      peak radius; resolution = 2 px / kcMax (ImDecorr's "res"), A0 = d0's
//      peak amplitude.
// The engine (CPU: FFTW double; CUDA: cuFFT float) transforms once per image and
// then returns the per-radius-bin sums of a pass (one set of radii and filters);
// the curves, peaks and refinement are computed here on the host from those
// sums, the same code for both engines.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace nanoscopy {

// Smallest side analysed: below it the few coefficients give no curve (UsageError).
inline constexpr std::int64_t kMinDecorrSide = 32;

struct DecorrGeometry {
  std::int64_t width = 0, height = 0;
  double apodization_px = 20;  // ImDecorr's main script: apodImRect(image, 20); capped at a quarter of each side
};

// The apodization mask along one side of n px (apodImRect), with its edge
// band of min(apodization, n / 4) px: 0 at the border, 1 inside.
std::vector<double> decorr_apodization(std::int64_t n, double apodization_px);

// One pass: Nr mask radii linspace(r_min, r_max, nr) and a set of filters
// (g <= 0: no filter, the d0 curve).
struct DecorrPass {
  double r_min = 0, r_max = 1;
  int nr = 50;
  std::vector<double> g;
  std::vector<double> radii() const;
};

// Per pass, over the (two-sided) spectrum without k = 0, R < 1:
struct DecorrSums {
  std::vector<double> count;      // nr: coefficients with |F| > 0 in radius bin b (decorr_math::radius_bin)
  std::vector<double> amplitude;  // filters x nr, filter-major: sum |F| q in bin b
  std::vector<double> power;      // filters: sum |F|^2 q^2 over R < 1
};

// The engine: planned for one image size, reused for many images (frames of a
// stack, bench); not thread-safe.
class DecorrEngine {
 public:
  virtual ~DecorrEngine() = default;
  virtual std::string name() const = 0;
  const DecorrGeometry& geometry() const { return geometry_; }
  // Copies the image (width * height floats, row-major) to where the engine works.
  virtual void upload(std::span<const float> image) = 0;
  // Apodization and FFT of the uploaded image.
  virtual void transform() = 0;
  // The sums of one pass over the transformed image (at most kMaxDecorrFilters filters, nr <= kMaxDecorrRadii).
  virtual DecorrSums sums(const DecorrPass& pass) = 0;
  // Waits for queued work (a GPU's transform runs asynchronously; bench times it alone).
  virtual void synchronize() {}

 protected:
  explicit DecorrEngine(const DecorrGeometry& g) : geometry_(g) {}
  DecorrGeometry geometry_;
};

inline constexpr int kMaxDecorrFilters = 32;
inline constexpr int kMaxDecorrRadii = 200;

// UsageError for an image below 32 px a side (naming it) or a bad apodization.
void check_decorr_geometry(const DecorrGeometry& geometry);
// The CPU reference.
std::unique_ptr<DecorrEngine> make_cpu_decorr_engine(const DecorrGeometry& geometry);

struct DecorrSettings {
  int nr = 50;  // radii per curve (ImDecorr: >= 30)
  int ng = 10;  // high-pass filters per refinement step (ImDecorr: >= 5)
};

struct DecorrCurve {
  double g = 0;                  // the filter's g (0: none, d0)
  std::vector<double> radius;    // normalised frequency (1 = Nyquist)
  std::vector<double> d;         // the correlation, truncated to 3 decimals
  int peak = 0;                  // index of the local maximum (getDcorrLocalMax)
  double kc = 0, amplitude = 0;  // radius[peak], d[peak]
};

struct DecorrResult {
  std::int64_t width = 0, height = 0;
  DecorrCurve d0;
  std::vector<DecorrCurve> coarse;   // Ng + 1 filters on d0's radii
  std::vector<DecorrCurve> refined;  // Ng filters on the refined radii
  double kc_max = 0;                 // normalised (1 = Nyquist); 0: no peak of amplitude >= 0.05
  double a0 = 0;                     // d0's peak amplitude
  double resolution_px() const { return kc_max > 0 ? 2.0 / kc_max : 0.0; }
};

// The local maximum of a curve by getDcorrLocalMax's rules; index 0 when none.
int decorr_local_max(std::span<const double> d);

// The curve of a pass's filter f from its sums (prefix sums, getCorrcoef's 3-decimal truncation).
std::vector<double> decorr_curve(const DecorrSums& sums, int filter, int nr);

// The whole analysis of one image on `engine` (upload, transform, two passes).
DecorrResult compute_decorr(DecorrEngine& engine, std::span<const float> image, const DecorrSettings& settings);
// The same on the image already uploaded (bench: device-resident timing).
DecorrResult analyse_uploaded(DecorrEngine& engine, const DecorrSettings& settings);

}  // namespace nanoscopy
