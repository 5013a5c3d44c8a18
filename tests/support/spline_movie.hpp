// A movie of spots drawn from a spline PSF, for the spline model's tests
// (test_fit2d_spline end to end, the localize engines' re-centring in
// test_localize_engine and gpu/test_localize_gpu):
// 64×64 px frames, four emitters per frame near (16, 16), (47, 16), (16, 47),
// (47, 47) (± 0.5 px), 3000 photons each, z uniform in [z_min, z_max] nm, on 20
// background photons; ADU = Poisson photons + 100 (baseline 100, sensitivity 1).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "nanoscopy/core/defocus_curve.hpp"
#include "nanoscopy/core/spline_psf.hpp"
#include "nanoscopy/core/spline_psf_build.hpp"
#include "nanoscopy/fit/models/spline3d.hpp"
#include "nanoscopy/loc/localize_engine.hpp"

namespace nanoscopy::test {

struct SplineEmitter {
  int frame;
  double x, y, z;  // px, px, nm
};

struct SplineMovie {
  static constexpr int kWidth = 64;
  int frames = 0;
  std::vector<std::uint16_t> pixels;  // frames × 64 × 64
  std::vector<SplineEmitter> truth;
};

inline SplineMovie spline_movie(const SplinePsf& psf, int frames, double z_min, double z_max, std::uint64_t seed = 3) {
  using namespace fit_detail;
  const Spline3d model = make_spline_model(psf, 1.0, psf.coefficients.data());
  constexpr int W = SplineMovie::kWidth;
  SplineMovie out;
  out.frames = frames;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-0.5, 0.5), uz(z_min, z_max);
  out.pixels.resize(static_cast<std::size_t>(W) * W * static_cast<std::size_t>(frames));
  for (int f = 0; f < frames; ++f) {
    std::vector<double> mu(W * W, 20.0);
    for (auto [cx, cy] : {std::pair{16, 16}, std::pair{47, 16}, std::pair{16, 47}, std::pair{47, 47}}) {
      const SplineEmitter e{f, cx + u(rng), cy + u(rng), uz(rng)};
      out.truth.push_back(e);
      for (int r = cy - 10; r <= cy + 10; ++r)
        for (int c = cx - 10; c <= cx + 10; ++c)
          mu[r * W + c] += 3000 * std::max(0.0, model.value<double>(e.x, e.y, e.z, c, r));
    }
    for (int i = 0; i < W * W; ++i)
      out.pixels[static_cast<std::size_t>(f) * W * W + static_cast<std::size_t>(i)] =
          static_cast<std::uint16_t>(std::poisson_distribution<int>(mu[i])(rng) + 100);
  }
  return out;
}

// astigmatic_spline_psf's spot (21×21 voxels of 100 nm, 61 slices of 20 nm) with its peak moved
// 3 px in x per 600 nm of z away from the emitter: the detector's box lands off the emitter.
inline SplinePsf drifting_spline_psf() {
  const AstigmaticPsf<double> curves = typical_astigmatic_psf();
  constexpr int size = 21, slices = 61;
  constexpr double centre = 10, focus = 30, step = 20;
  std::vector<float> volume(static_cast<std::size_t>(size * size * slices));
  for (int k = 0; k < slices; ++k) {
    const double z = (k - focus) * step, sx = curves.x.sigma(z), sy = curves.y.sigma(z);
    const double dx0 = 3.0 * z / 600.0;
    for (int j = 0; j < size; ++j)
      for (int i = 0; i < size; ++i) {
        const double dx = i - centre - dx0, dy = j - centre;
        volume[static_cast<std::size_t>((k * size + j) * size + i)] = static_cast<float>(
            std::exp(-0.5 * (dx * dx / (sx * sx) + dy * dy / (sy * sy))) / (2 * M_PI * sx * sy));
      }
  }
  return spline_from_volume(volume, size, size, slices, 1.0, step, centre, centre, focus, 100.0);
}

// Localize settings for a spline_movie: 13 px boxes, the spline model (mle) with `psf`, the
// movie's baseline of 100, and re-centring beyond `recenter_px` (0: off).
inline LocalizeSettings spline_movie_settings(const SplinePsf& psf, double recenter_px) {
  DetectSettings ds;
  ds.box = 13;
  FitSettings fs;
  fs.model = ShapeModel::spline;
  fs.spline = std::make_shared<const SplinePsf>(psf);
  fs.estimator = Estimator::mle;
  fs.photon_offset = 100;
  return LocalizeSettings{ds, fs, {}, {}, recenter_px};
}

}  // namespace nanoscopy::test
