#include "nanoscopy/sim/movie.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <random>
#include <span>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/sim/structures.hpp"

namespace nanoscopy {
namespace {

// Fraction of a unit Gaussian of std `sigma` centred at `mu` that falls in pixel i.
double pixel_integral(std::int64_t i, double mu, double sigma) {
  const double s = std::sqrt(2.0) * sigma;
  return 0.5 * (std::erf((static_cast<double>(i) - mu + 0.5) / s) - std::erf((static_cast<double>(i) - mu - 0.5) / s));
}

struct Spot {
  double x, y, photons;
  double sx, sy;  // PSF widths, px
  double z = 0;   // nm (the pupil PSF)
};

// The camera's ADU for `electrons` (photoelectrons) at pixel k.
double camera_adu(const MovieSettings& m, double electrons, std::size_t k, std::mt19937_64& rng) {
  if (m.camera == "emccd") {
    double e = electrons;
    if (m.em_gain > 1) {
      e = electrons > 0 ? std::gamma_distribution<double>(electrons, m.em_gain)(rng) : 0.0;
    } else {
      e *= m.em_gain;
    }
    if (m.read_noise > 0) e += std::normal_distribution<double>(0.0, m.read_noise)(rng);
    return m.baseline + e / m.sensitivity;
  }
  // scmos
  const auto& maps = *m.maps;
  double adu = maps.offset[k] + maps.gain[k] * electrons;
  if (maps.variance[k] > 0) adu += std::normal_distribution<double>(0.0, std::sqrt(static_cast<double>(maps.variance[k])))(rng);
  return adu;
}

// One frame: the expected photons (background plus each spot's pixel-integrated
// Gaussian within 6 sigma, beyond which it is below 1e-8 of the spot), Poisson
// shot noise, then the camera.
void render_frame(const MovieSettings& m, const std::vector<Spot>& spots, const std::vector<std::size_t>& hot,
                  std::int64_t t, std::span<std::uint16_t> out) {
  std::vector<double> expected(out.size(), m.background);
  for (const std::size_t k : hot) expected[k] += m.hot_pixel_photons;
  std::vector<double> px, py;
  for (const auto& s : spots) {
    if (m.pupil) {
      m.pupil->add(s.x, s.y, s.z, s.photons, m.width, m.height, expected.data());
      continue;
    }
    const std::int64_t reach = static_cast<std::int64_t>(std::ceil(6 * std::max(s.sx, s.sy))) + 1;
    const std::int64_t x0 = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(s.x)) - reach);
    const std::int64_t x1 = std::min<std::int64_t>(m.width - 1, static_cast<std::int64_t>(std::floor(s.x)) + reach);
    const std::int64_t y0 = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(s.y)) - reach);
    const std::int64_t y1 = std::min<std::int64_t>(m.height - 1, static_cast<std::int64_t>(std::floor(s.y)) + reach);
    if (x0 > x1 || y0 > y1) continue;  // drifted off the frame
    px.resize(static_cast<std::size_t>(x1 - x0 + 1));
    py.resize(static_cast<std::size_t>(y1 - y0 + 1));
    for (std::int64_t i = x0; i <= x1; ++i) px[static_cast<std::size_t>(i - x0)] = pixel_integral(i, s.x, s.sx);
    for (std::int64_t j = y0; j <= y1; ++j) py[static_cast<std::size_t>(j - y0)] = pixel_integral(j, s.y, s.sy);
    for (std::int64_t j = y0; j <= y1; ++j)
      for (std::int64_t i = x0; i <= x1; ++i)
        expected[static_cast<std::size_t>(j * m.width + i)] +=
            s.photons * px[static_cast<std::size_t>(i - x0)] * py[static_cast<std::size_t>(j - y0)];
  }
  std::seed_seq seed{static_cast<std::uint32_t>(m.seed), static_cast<std::uint32_t>(m.seed >> 32),
                     static_cast<std::uint32_t>(t), static_cast<std::uint32_t>(t >> 32)};
  std::mt19937_64 rng(seed);
  // Most pixels hold only the background: one distribution serves them all
  // (setting up a Poisson distribution costs more than drawing from it).
  std::poisson_distribution<std::int64_t> background(m.background);
  const bool plain = m.camera == "poisson";
  for (std::size_t k = 0; k < expected.size(); ++k) {
    const double mean = expected[k];
    const auto electrons = static_cast<double>(mean == m.background ? background(rng)
                                                                     : std::poisson_distribution<std::int64_t>(mean)(rng));
    const double adu = std::round(plain ? m.baseline + electrons / m.sensitivity : camera_adu(m, electrons, k, rng));
    out[k] = static_cast<std::uint16_t>(std::clamp(adu, 0.0, 65535.0));
  }
}

void check_settings(const MovieSettings& m) {
  if (m.camera != "poisson" && m.camera != "emccd" && m.camera != "scmos")
    throw UsageError("--camera", "unknown camera '" + m.camera + "' (poisson, emccd or scmos)");
  if (m.camera == "emccd" && !(m.em_gain >= 1)) throw UsageError("--em-gain", "must be at least 1");
  if (m.camera == "emccd" && !(m.read_noise >= 0)) throw UsageError("--read-noise", "must not be negative");
  if (m.camera == "scmos") {
    if (!m.maps) throw UsageError("--camera", "an sCMOS camera needs its per-pixel maps");
    m.maps->check_frame_size(m.width, m.height, "the simulated movie");
  }
  if (m.z_stack && !m.astigmatism && !m.pupil)
    throw UsageError("--z-stack", "a bead z-stack needs an astigmatic calibration or the pupil PSF");
  if (m.hot_pixels < 0 || m.hot_pixels > m.width * m.height) throw UsageError("--hot-pixels", "more than the frame has");
  if (m.pupil) {
    if (!(m.z_min_nm <= m.z_max_nm)) throw UsageError("--z-min", "the z range is empty (--z-min > --z-max)");
    const double top = m.z_stack ? m.z_min_nm + m.z_step_nm * static_cast<double>(m.frames - 1) : m.z_max_nm;
    if (m.z_min_nm < m.pupil->z_min_nm() - 1e-6 || top > m.pupil->z_max_nm() + 1e-6)
      throw UsageError("--z-min/--z-max", "beyond the pupil PSF's table");
    if (m.z_stack && !(m.z_step_nm > 0)) throw UsageError("--z-step", "must be positive (nm)");
  } else if (m.astigmatism) {
    if (!(m.z_min_nm <= m.z_max_nm)) throw UsageError("--z-min", "the z range is empty (--z-min > --z-max)");
    m.astigmatism->require_covers(m.z_min_nm, m.z_max_nm, "--z-min/--z-max");
  }
  if (m.z_stack && !m.pupil) {
    if (!(m.z_step_nm > 0)) throw UsageError("--z-step", "must be positive (nm)");
    if (m.beads < 1) throw UsageError("--beads", "a z-stack needs at least one bead");
    m.astigmatism->require_covers(m.z_min_nm, m.z_min_nm + m.z_step_nm * static_cast<double>(m.frames - 1),
                                  "--z-step/--frames");
  }
}

}  // namespace

CameraMaps simulate_camera_maps(std::int64_t width, std::int64_t height, std::uint64_t seed) {
  CameraMaps maps;
  maps.width = width;
  maps.height = height;
  maps.source = "simulated camera maps";
  const auto n = static_cast<std::size_t>(width * height);
  maps.offset.resize(n);
  maps.gain.resize(n);
  maps.variance.resize(n);
  std::mt19937_64 rng(seed ^ 0x5c3a05c3a05c3a05ULL);
  std::normal_distribution<double> offset(100.0, 3.0), gain(2.0, 0.1), log_variance(std::log(6.0), 0.4);
  std::bernoulli_distribution hot(0.01);
  std::uniform_real_distribution<double> hot_factor(std::log(5.0), std::log(100.0));
  for (std::size_t k = 0; k < n; ++k) {
    maps.offset[k] = static_cast<float>(offset(rng));
    maps.gain[k] = static_cast<float>(std::max(0.5, gain(rng)));
    double v = std::exp(log_variance(rng));
    if (hot(rng)) v *= std::exp(hot_factor(rng));
    maps.variance[k] = static_cast<float>(v);
  }
  return maps;
}

std::vector<EmitterTruth> simulate_movie(const MovieSettings& m, const std::string& path, MovieTruthExtras* extras) {
  check_settings(m);
  std::mt19937_64 rng(m.seed);
  // 3D: σx, σy in px from the calibration (σ in nm over this movie's pixel size).
  std::optional<AstigmaticPsf<double>> psf;
  if (m.astigmatism) psf = m.astigmatism->in_pixels<double>(m.pixel_size_nm);
  auto widths = [&](double z) {
    if (!psf) return std::pair{m.psf_sigma, m.psf_sigma};
    return std::pair{psf->x.sigma(z), psf->y.sigma(z)};
  };
  double widest = psf ? 0.0 : m.psf_sigma;
  if (psf)
    for (int i = 0; i <= 100; ++i) {
      const auto [sx, sy] = widths(m.z_min_nm + (m.z_max_nm - m.z_min_nm) * i / 100.0);
      widest = std::max({widest, sx, sy});
    }
  // The pupil PSF: emitters 3 px from the edges (its window is cut there), beads half a window.
  const double margin = m.pupil ? (m.z_stack ? std::min<double>(m.pupil->settings().half_width_px,
                                                                0.25 * static_cast<double>(std::min(m.width, m.height)))
                                             : 3.0)
                                : 2.0 * widest;
  std::uniform_real_distribution<double> ux(margin, static_cast<double>(m.width) - 1 - margin);
  std::uniform_real_distribution<double> uy(margin, static_cast<double>(m.height) - 1 - margin);
  struct Emitter {
    double x, y;
    bool on;
    bool marker;
    double z = 0;  // nm
  };
  std::vector<Emitter> emitters(static_cast<std::size_t>(m.z_stack ? 0 : m.emitters));
  std::bernoulli_distribution starts_on(m.on_fraction);
  if (m.z_stack && m.pupil) {
    // Beads of the pupil PSF, 26 px apart in x or y where the frame has room (1000 tries each): fit2d
    // calibrate --model spline uses beads whose 25 px cuts (its default box 21 + 4) do not overlap.
    const double apart = 26;
    for (int k = 0; k < m.beads; ++k) {
      double x = ux(rng), y = uy(rng);
      for (int tries = 0; tries < 1000; ++tries) {
        bool clear = true;
        for (const auto& e : emitters) clear = clear && std::max(std::abs(e.x - x), std::abs(e.y - y)) >= apart;
        if (clear) break;
        x = ux(rng), y = uy(rng);
      }
      emitters.push_back({x, y, true, true});
    }
  } else if (m.z_stack) {
    // Beads: always on, like markers, but at the stack's z.
    for (int k = 0; k < m.beads; ++k) emitters.push_back({ux(rng), uy(rng), true, true});
  } else if (m.structure == "grid") {
    // As square a grid as the frame allows, cells filled in row order.
    const double w = static_cast<double>(m.width) - 1 - 2 * margin, h = static_cast<double>(m.height) - 1 - 2 * margin;
    const int cols = std::max(1, static_cast<int>(std::ceil(std::sqrt(m.emitters * w / std::max(h, 1.0)))));
    const int rows = std::max(1, (m.emitters + cols - 1) / cols);
    for (int k = 0; k < m.emitters; ++k)
      emitters[static_cast<std::size_t>(k)] = {margin + w * (k % cols + 0.5) / cols, margin + h * (k / cols + 0.5) / rows,
                                               starts_on(rng), false};
  } else if (m.structure == "random") {
    for (auto& e : emitters) e = {ux(rng), uy(rng), starts_on(rng), false};
  } else if (m.structure == "lines" || m.structure == "rings") {
    const auto points = place_emitters(structure_within(m, margin), m.emitters, rng);
    for (std::size_t k = 0; k < points.size(); ++k) emitters[k] = {points[k].x, points[k].y, starts_on(rng), false};
  } else {
    throw UsageError("--structure", "unknown structure '" + m.structure + "' (random, grid, lines or rings)");
  }
  if (!m.z_stack)
    for (int k = 0; k < m.markers; ++k) emitters.push_back({ux(rng), uy(rng), true, true});
  if ((psf || m.pupil) && !m.z_stack) {
    // z from its own stream, so the (x, y) and blinking of a 2D movie stay as they are.
    std::mt19937_64 zrng(m.seed ^ 0x7a5e3d7a5e3d7a5eULL);
    if (m.z_even) {
      std::vector<double> zs(emitters.size());
      for (std::size_t k = 0; k < zs.size(); ++k)
        zs[k] = m.z_min_nm + (m.z_max_nm - m.z_min_nm) * (static_cast<double>(k) + 0.5) / static_cast<double>(zs.size());
      std::shuffle(zs.begin(), zs.end(), zrng);
      for (std::size_t k = 0; k < zs.size(); ++k) emitters[k].z = zs[k];
    } else {
      std::uniform_real_distribution<double> uz(m.z_min_nm, m.z_max_nm);
      for (auto& e : emitters) e.z = uz(zrng);
    }
  }
  DriftSimSettings drift_settings = m.drift;
  drift_settings.seed = m.seed;
  DriftTrace drift = simulate_drift(drift_settings, m.frames, m.pixel_size_nm);
  for (std::int64_t t = 0; t < m.frames; ++t) {
    drift.dx[static_cast<std::size_t>(t)] += m.drift_x * static_cast<double>(t);
    drift.dy[static_cast<std::size_t>(t)] += m.drift_y * static_cast<double>(t);
  }
  if (extras) {
    extras->emitters.clear();
    for (const auto& e : emitters) extras->emitters.push_back({e.x, e.y, e.z, e.marker});
  }
  // Two-state Markov blinking with the requested duty cycle and on-period length.
  const double p_off = 1.0 / std::max(1.0, m.mean_on_frames);
  const double p_on = std::clamp(p_off * m.on_fraction / std::max(1e-9, 1.0 - m.on_fraction), 0.0, 1.0);

  ImageMeta meta;
  meta.width = m.width;
  meta.height = m.height;
  meta.frames = m.frames;
  meta.type = PixelType::u16;
  meta.pixel_size_nm = m.pixel_size_nm;
  meta.software = "nanoscopy simulate movie";
  auto writer = create_image_writer(path, meta);

  // Frames are made in batches: who is on, sequentially with one RNG; then every
  // frame's image and noise in parallel, each with its own RNG seeded from (seed,
  // frame), so the movie is the same for any number of threads.
  const std::int64_t pixels = m.width * m.height;
  const std::int64_t batch = std::clamp<std::int64_t>((std::int64_t{1} << 24) / pixels, 1, 256);
  std::vector<std::vector<Spot>> spots(static_cast<std::size_t>(batch));
  std::vector<std::uint16_t> frames(static_cast<std::size_t>(batch * pixels));
  std::vector<EmitterTruth> truth;
  // Hot pixels: their own stream, so the rest of the movie is the same with or without them.
  std::vector<std::size_t> hot;
  {
    std::mt19937_64 hrng(m.seed ^ 0x407a407a407a407aULL);
    std::uniform_int_distribution<std::size_t> pick(0, static_cast<std::size_t>(pixels - 1));
    while (static_cast<int>(hot.size()) < m.hot_pixels) {
      const std::size_t k = pick(hrng);
      if (std::find(hot.begin(), hot.end(), k) == hot.end()) hot.push_back(k);
    }
  }
  for (std::int64_t t0 = 0; t0 < m.frames; t0 += batch) {
    const std::int64_t count = std::min(batch, m.frames - t0);
    for (std::int64_t b = 0; b < count; ++b) {
      const std::int64_t t = t0 + b;
      auto& on_now = spots[static_cast<std::size_t>(b)];
      on_now.clear();
      const double shift_x = drift.dx[static_cast<std::size_t>(t)], shift_y = drift.dy[static_cast<std::size_t>(t)];
      for (auto& e : emitters) {
        if (t > 0 && !e.marker) e.on = e.on ? !std::bernoulli_distribution(p_off)(rng) : std::bernoulli_distribution(p_on)(rng);
        if (!e.on) continue;
        const double photons = e.marker && !m.z_stack ? m.photons * m.marker_brightness : m.photons;
        const double z = m.z_stack ? m.z_min_nm + m.z_step_nm * static_cast<double>(t) : e.z;
        const auto [sx, sy] = widths(z);
        truth.push_back({t, e.x + shift_x, e.y + shift_y, photons, z});
        on_now.push_back({e.x + shift_x, e.y + shift_y, photons, sx, sy, z});
      }
    }
#pragma omp parallel for schedule(dynamic)
    for (std::int64_t b = 0; b < count; ++b)
      render_frame(m, spots[static_cast<std::size_t>(b)], hot, t0 + b,
                   std::span<std::uint16_t>(frames).subspan(static_cast<std::size_t>(b * pixels),
                                                            static_cast<std::size_t>(pixels)));
    writer->write(frames.data(), count);
  }
  writer->close();
  if (extras) extras->drift = std::move(drift);
  return truth;
}

}  // namespace nanoscopy
