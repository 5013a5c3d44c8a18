// simulate_blinking: emitter placement, rendering and the camera (see blinking.hpp).
#include "nanoscopy/sim/blinking.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numbers>
#include <random>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/progress.hpp"
#include "nanoscopy/core/sibling_path.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/table_writer.hpp"
#include "nanoscopy/sim/structures.hpp"

namespace nanoscopy {
namespace {

using Point = EmitterPoint;  // pixels

void validate(const BlinkingSettings& s) {
  auto require = [](bool ok, const char* option, const std::string& what) {
    if (!ok) throw UsageError(option, what);
  };
  require(s.frames >= 1, "--frames", "must be at least 1");
  require(s.width >= 1 && s.height >= 1, "--size", "width and height must be at least 1");
  require(s.pixel_size_nm > 0, "--pixel-size", "must be positive");
  require(s.structure == "random" || s.structure == "lines" || s.structure == "rings", "--structure",
          "unknown structure '" + s.structure + "' (random, lines or rings)");
  require(s.emitters >= 0 && s.density >= 0, "--emitters", "must not be negative");
  require(s.filaments >= 0 && s.rings >= 0, "--filaments", "must not be negative");
  require(s.ring_radius_min_nm > 0 && s.ring_radius_max_nm >= s.ring_radius_min_nm, "--ring-radius",
          "need 0 < min <= max");
  require(s.blinking == "exponential" || s.blinking == "power-law", "--blinking",
          "unknown blinking law '" + s.blinking + "' (exponential or power-law)");
  require(s.mean_on_frames > 0 && s.mean_off_frames > 0, "--mean-on", "mean on and off times must be positive");
  require(s.alpha_on > 0 && s.alpha_off > 0, "--alpha-on", "power-law exponents must be positive");
  require(s.power_law_min_frames > 0 && s.power_law_max_frames >= s.power_law_min_frames, "--t-min",
          "need 0 < t_min <= t_max");
  require(s.bleach_frames >= 0 && s.photon_budget >= 0, "--bleach-frames", "must not be negative");
  require(s.brightness >= 0, "--brightness", "must not be negative");
  require(s.psf_sigma > 0, "--psf-sigma", "must be positive");
  require(s.background >= 0, "--background", "must not be negative");
  require(s.em_gain >= 1, "--em-gain", "must be at least 1 (1: no EM gain)");
  require(s.read_noise >= 0, "--read-noise", "must not be negative");
  require(s.sensitivity > 0, "--sensitivity", "must be positive");
  require(std::isfinite(s.drift_x_px_per_frame) && std::isfinite(s.drift_y_px_per_frame) &&
              std::isfinite(s.drift_wobble_px),
          "--drift", "must be finite");
  require(s.drift_wobble_period > 0, "--drift-period", "must be positive");
  require(s.truth_upsample >= 1 && s.truth_upsample <= 64, "--truth-upsample", "must be in 1..64");
}

int emitter_count(const BlinkingSettings& s) {
  if (s.density <= 0) return s.emitters;
  const double um2 = static_cast<double>(s.width * s.height) * std::pow(s.pixel_size_nm / 1000.0, 2);
  return static_cast<int>(std::lround(s.density * um2));
}

// Emitters keep 2σ from the border so their PSF is (nearly) all on the chip.
std::vector<Point> place_emitters(const BlinkingSettings& s, int n, std::mt19937_64& rng) {
  const double margin = std::min(2.0 * s.psf_sigma, 0.25 * static_cast<double>(std::min(s.width, s.height) - 1));
  return nanoscopy::place_emitters(structure_within(s, margin), n, rng);
}

// An emitter's PSF, pixel-integrated and separable, on the window of pixels
// within ⌈5σ⌉+1 of it (the mass outside is < 1e-6): [x_first, x_first + px.size()).
struct Footprint {
  std::int64_t x_first, y_first;
  std::vector<double> px, py;
};

std::vector<double> pixel_integrals(std::int64_t first, std::int64_t last, double mu, double sigma) {
  const double s = std::sqrt(2.0) * sigma;
  std::vector<double> v;
  for (std::int64_t i = first; i <= last; ++i) {
    const double c = static_cast<double>(i) - mu;
    v.push_back(0.5 * (std::erf((c + 0.5) / s) - std::erf((c - 0.5) / s)));
  }
  return v;
}

Footprint footprint(Point p, const BlinkingSettings& s) {
  const auto r = static_cast<std::int64_t>(std::ceil(5 * s.psf_sigma)) + 1;
  const auto cx = static_cast<std::int64_t>(std::lround(p.x)), cy = static_cast<std::int64_t>(std::lround(p.y));
  const std::int64_t xa = std::max<std::int64_t>(0, cx - r), xb = std::min(s.width - 1, cx + r);
  const std::int64_t ya = std::max<std::int64_t>(0, cy - r), yb = std::min(s.height - 1, cy + r);
  return {xa, ya, pixel_integrals(xa, xb, p.x, s.psf_sigma), pixel_integrals(ya, yb, p.y, s.psf_sigma)};
}

// Expected photons → uint16 ADU through the camera model of blinking.hpp.
class Camera {
 public:
  Camera(const BlinkingSettings& s) : s_(s), rng_(s.seed ^ 0x5EED'CA3E'0000'0001ULL) {}

  std::uint16_t operator()(double expected) {
    double e;
    if (s_.noise_free) {
      e = expected * s_.em_gain;
    } else {
      e = expected > 0 ? static_cast<double>(std::poisson_distribution<std::int64_t>(expected)(rng_)) : 0.0;
      if (s_.em_gain > 1 && e > 0) e = std::gamma_distribution<double>(e, s_.em_gain)(rng_);
      if (s_.read_noise > 0) e += read_(rng_) * s_.read_noise;
    }
    const double adu = std::round(s_.baseline + e / s_.sensitivity);
    return static_cast<std::uint16_t>(std::clamp(adu, 0.0, 65535.0));
  }

 private:
  const BlinkingSettings& s_;
  std::mt19937_64 rng_;
  std::normal_distribution<double> read_{0.0, 1.0};
};


bool drifts(const BlinkingSettings& s) {
  return s.drift_x_px_per_frame != 0 || s.drift_y_px_per_frame != 0 || s.drift_wobble_px != 0;
}

}  // namespace

DriftPx blinking_drift(const BlinkingSettings& s, double t) {
  const double phase = 2 * std::numbers::pi * t / s.drift_wobble_period;
  return {s.drift_x_px_per_frame * t + s.drift_wobble_px * std::sin(phase),
          s.drift_y_px_per_frame * t + s.drift_wobble_px * (1 - std::cos(phase))};
}

BlinkingResult simulate_blinking(const BlinkingSettings& s, const std::string& path, bool quiet) {
  validate(s);
  std::mt19937_64 rng(s.seed);
  const auto points = place_emitters(s, emitter_count(s), rng);
  const auto n = points.size();
  std::vector<Footprint> footprints;
  std::vector<BlinkingTrace> traces;
  footprints.reserve(n);
  traces.reserve(n);
  for (std::size_t k = 0; k < n; ++k) {
    footprints.push_back(footprint(points[k], s));
    traces.emplace_back(s, k);
  }

  ImageMeta meta;
  meta.width = s.width;
  meta.height = s.height;
  meta.frames = s.frames;
  meta.type = PixelType::u16;
  meta.pixel_size_nm = s.pixel_size_nm;
  meta.software = "nanoscopy simulate blinking";
  auto writer = create_image_writer(path, meta);

  const auto pixels = static_cast<std::size_t>(s.width * s.height);
  std::vector<double> expected(pixels), mean(pixels, 0.0);
  std::vector<std::uint16_t> frame(pixels);
  Camera camera(s);
  Progress progress("simulate blinking", s.frames, quiet);
  const bool drifting = drifts(s);
  for (std::int64_t t = 0; t < s.frames; ++t) {
    std::fill(expected.begin(), expected.end(), s.background);
    for (std::size_t k = 0; k < n; ++k) {
      const double photons = s.brightness * traces[k].next_frame();
      if (photons <= 0) continue;
      // A drifting stage moves the footprint every frame: during frame t the drift is blinking_drift(t).
      Footprint moved;
      if (drifting) {
        const DriftPx d = blinking_drift(s, static_cast<double>(t));
        moved = footprint({points[k].x + d.x, points[k].y + d.y}, s);
      }
      const auto& f = drifting ? moved : footprints[k];
      for (std::size_t j = 0; j < f.py.size(); ++j) {
        double* row = expected.data() + (f.y_first + static_cast<std::int64_t>(j)) * s.width + f.x_first;
        const double wy = photons * f.py[j];
        for (std::size_t i = 0; i < f.px.size(); ++i) row[i] += wy * f.px[i];
      }
    }
    for (std::size_t p = 0; p < pixels; ++p) {
      mean[p] += expected[p];
      frame[p] = camera(expected[p]);
    }
    writer->write(frame.data(), 1);
    progress.update(t + 1);
  }
  progress.finish();

  BlinkingResult result;
  result.emitters = static_cast<std::int64_t>(n);
  result.emitters_csv = sibling_path(path, "_emitters.csv");
  result.truth_image = sibling_path(path, "_truth.tif");
  result.mean_image = sibling_path(path, "_mean.tif");
  const double frames = static_cast<double>(s.frames);

  // Truth table and the upsampled delta image.
  const std::int64_t u = s.truth_upsample, fine_w = s.width * u, fine_h = s.height * u;
  std::vector<float> truth(static_cast<std::size_t>(fine_w * fine_h), 0.0f);
  auto table = create_csv_writer(result.emitters_csv,
                                 {{"id", ColumnType::u32}, {"x_px", ColumnType::f64}, {"y_px", ColumnType::f64},
                                  {"x_nm", ColumnType::f64}, {"y_nm", ColumnType::f64}, {"brightness", ColumnType::f64},
                                  {"on_fraction", ColumnType::f64}, {"bleach_frame", ColumnType::i32}});
  std::vector<double> rows;
  rows.reserve(n * 8);
  double on_sum = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const auto& p = points[k];
    const double on_fraction = traces[k].total_on_time() / frames;
    on_sum += on_fraction;
    if (traces[k].bleach_frame() >= 0) ++result.bleached;
    result.emitter_list.push_back({p.x, p.y, s.brightness, on_fraction});
    rows.insert(rows.end(), {static_cast<double>(k), p.x, p.y, (p.x + 0.5) * s.pixel_size_nm,
                             (p.y + 0.5) * s.pixel_size_nm, s.brightness, on_fraction,
                             static_cast<double>(traces[k].bleach_frame())});
    // Camera pixel i spans [i − 0.5, i + 0.5) → fine pixels [i·u, (i+1)·u).
    const auto fx = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::floor((p.x + 0.5) * static_cast<double>(u))), 0, fine_w - 1);
    const auto fy = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::floor((p.y + 0.5) * static_cast<double>(u))), 0, fine_h - 1);
    truth[static_cast<std::size_t>(fy * fine_w + fx)] += static_cast<float>(s.brightness * on_fraction);
  }
  table->append(rows);
  table->finish();
  result.mean_on_fraction = n > 0 ? on_sum / static_cast<double>(n) : 0.0;
  const float* truth_page = truth.data();
  write_float_pages(result.truth_image, fine_w, fine_h, {&truth_page, 1}, s.pixel_size_nm / static_cast<double>(u),
                    "nanoscopy simulate blinking (truth)");

  std::vector<float> mean_f(pixels);
  for (std::size_t p = 0; p < pixels; ++p) mean_f[p] = static_cast<float>(mean[p] / frames);
  const float* mean_page = mean_f.data();
  write_float_pages(result.mean_image, s.width, s.height, {&mean_page, 1}, s.pixel_size_nm,
                    "nanoscopy simulate blinking (noise-free mean, photons)");

  // Last, so that a stack under its final name always has its truth beside it.
  writer->close();
  return result;
}

}  // namespace nanoscopy
