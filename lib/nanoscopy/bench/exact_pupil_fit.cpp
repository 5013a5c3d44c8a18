#include "nanoscopy/bench/exact_pupil_fit.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "nanoscopy/sim/pupil_psf.hpp"

namespace nanoscopy {
namespace {

constexpr int kParams = 5;  // x, y, z, photons, background
using Vec = std::array<double, kParams>;
using Mat = std::array<Vec, kParams>;

// Central-difference steps: 0.01 px in x, y; 2 nm in z (the table's z is linear between slices, so a step
// of at least one slice sees its slope).
constexpr double kStepPx = 0.01, kStepNm = 2;

struct Emitter {
  double x, y, z, photons, background;
};

// Expected counts and their derivatives at pixel (u, v).
double pixel_gradient(const PupilPsf& psf, int u, int v, const Emitter& e, Vec& d) {
  const double j = psf.pixel(u, v, e.x, e.y, e.z);
  d = {e.photons * (psf.pixel(u, v, e.x + kStepPx, e.y, e.z) - psf.pixel(u, v, e.x - kStepPx, e.y, e.z)) / (2 * kStepPx),
       e.photons * (psf.pixel(u, v, e.x, e.y + kStepPx, e.z) - psf.pixel(u, v, e.x, e.y - kStepPx, e.z)) / (2 * kStepPx),
       e.photons * (psf.pixel(u, v, e.x, e.y, e.z + kStepNm) - psf.pixel(u, v, e.x, e.y, e.z - kStepNm)) /
           (2 * kStepNm),
       j, 1};
  return e.photons * j + e.background;
}

// Solves a·x = b (Gauss–Jordan, partial pivoting); false when singular.
bool solve(Mat a, Vec b, Vec& x) {
  for (int c = 0; c < kParams; ++c) {
    int p = c;
    for (int r = c + 1; r < kParams; ++r)
      if (std::abs(a[r][c]) > std::abs(a[p][c])) p = r;
    std::swap(a[c], a[p]);
    std::swap(b[c], b[p]);
    if (!(std::abs(a[c][c]) > 0)) return false;
    for (int r = 0; r < kParams; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (int k = 0; k < kParams; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  for (int i = 0; i < kParams; ++i) x[i] = b[i] / a[i][i];
  return true;
}

double log_likelihood(const PupilPsf& psf, int box, const Emitter& e, const std::vector<double>& counts) {
  double l = 0;
  for (int v = 0; v < box; ++v)
    for (int u = 0; u < box; ++u) {
      const double mu = e.photons * psf.pixel(u, v, e.x, e.y, e.z) + e.background;
      if (!(mu > 0)) return -INFINITY;
      l += counts[static_cast<std::size_t>(v * box + u)] * std::log(mu) - mu;
    }
  return l;
}

// Levenberg–Marquardt on the Poisson likelihood with the Fisher matrix as its curvature; z kept inside
// [z_min, z_max]. Returns the fit and its log-likelihood.
std::pair<Emitter, double> fit(const PupilPsf& psf, int box, Emitter e, const std::vector<double>& counts,
                               double z_min, double z_max) {
  double ll = log_likelihood(psf, box, e, counts), lambda = 1e-3;
  for (int iteration = 0; iteration < 100; ++iteration) {
    Mat fisher{};
    Vec gradient{};
    for (int v = 0; v < box; ++v)
      for (int u = 0; u < box; ++u) {
        Vec d;
        const double mu = pixel_gradient(psf, u, v, e, d);
        const double w = counts[static_cast<std::size_t>(v * box + u)] / mu - 1;
        for (int a = 0; a < kParams; ++a) {
          gradient[a] += w * d[a];
          for (int b = 0; b < kParams; ++b) fisher[a][b] += d[a] * d[b] / mu;
        }
      }
    bool improved = false;
    for (int attempt = 0; attempt < 10 && !improved; ++attempt) {
      Mat damped = fisher;
      for (int a = 0; a < kParams; ++a) damped[a][a] *= 1 + lambda;
      Vec step;
      if (!solve(damped, gradient, step)) return {e, ll};
      const Emitter next{e.x + step[0], e.y + step[1], std::clamp(e.z + step[2], z_min, z_max),
                         std::max(1.0, e.photons + step[3]), std::max(1e-3, e.background + step[4])};
      const double next_ll = log_likelihood(psf, box, next, counts);
      if (next_ll > ll) {
        const double gain = next_ll - ll;
        e = next;
        ll = next_ll;
        lambda = std::max(1e-6, lambda * 0.3);
        improved = true;
        if (gain < 1e-7) return {e, ll};
      } else {
        lambda *= 10;
      }
    }
    if (!improved) return {e, ll};
  }
  return {e, ll};
}

}  // namespace

std::array<double, 3> pupil_crb(const PupilPsf& psf, int box, double x, double y, double z_nm, double photons,
                                double background) {
  Mat fisher{};
  const Emitter e{x, y, z_nm, photons, background};
  for (int v = 0; v < box; ++v)
    for (int u = 0; u < box; ++u) {
      Vec d;
      const double mu = pixel_gradient(psf, u, v, e, d);
      for (int a = 0; a < kParams; ++a)
        for (int b = 0; b < kParams; ++b) fisher[a][b] += d[a] * d[b] / mu;
    }
  std::array<double, 3> variance{};
  for (int k = 0; k < 3; ++k) {
    Vec unit{}, column;
    unit[k] = 1;
    if (!solve(fisher, unit, column)) return {NAN, NAN, NAN};
    variance[static_cast<std::size_t>(k)] = column[k];
  }
  return variance;
}

ExactFitStats exact_pupil_mle(const PupilPsf& psf, int box, double z_lo_nm, double z_hi_nm, double photons,
                              double background, std::int64_t fits, std::uint64_t seed) {
  const double centre = (box - 1) / 2.0;
  // Keep z a slice inside the table, where its derivative is still two-sided.
  const double z_min = psf.z_min_nm() + kStepNm, z_max = psf.z_max_nm() - kStepNm;
  std::vector<double> starts;
  for (double z = std::ceil(z_min / 200) * 200; z <= z_max; z += 200) starts.push_back(z);
  struct Error {
    double dx, dy, dz;
  };
  std::vector<Error> errors(static_cast<std::size_t>(std::max<std::int64_t>(fits, 0)));
  const auto work = [&](std::int64_t first, std::int64_t stride) {
    std::vector<double> counts(static_cast<std::size_t>(box * box));
    for (std::int64_t i = first; i < fits; i += stride) {
      std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(i));  // per fit: any thread count
      std::uniform_real_distribution<double> uniform(0, 1);
      const double x = centre + uniform(rng) - 0.5, y = centre + uniform(rng) - 0.5;
      const Emitter truth{x, y, z_lo_nm + (z_hi_nm - z_lo_nm) * uniform(rng), photons, background};
      for (int v = 0; v < box; ++v)
        for (int u = 0; u < box; ++u) {
          std::poisson_distribution<long> noise(photons * psf.pixel(u, v, truth.x, truth.y, truth.z) + background);
          counts[static_cast<std::size_t>(v * box + u)] = static_cast<double>(noise(rng));
        }
      auto best = fit(psf, box, truth, counts, z_min, z_max);
      for (const double z0 : starts) {
        const auto other = fit(psf, box, Emitter{x, y, z0, photons, background}, counts, z_min, z_max);
        if (other.second > best.second) best = other;
      }
      errors[static_cast<std::size_t>(i)] = {best.first.x - truth.x, best.first.y - truth.y, best.first.z - truth.z};
    }
  };
  const auto threads = static_cast<std::int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (std::int64_t t = 0; t < threads; ++t) pool.emplace_back(work, t, threads);
  for (auto& t : pool) t.join();

  ExactFitStats s;
  s.fits = static_cast<std::int64_t>(errors.size());
  if (s.fits == 0) return s;
  for (const auto& e : errors) {
    s.rms_x_px += e.dx * e.dx, s.rms_y_px += e.dy * e.dy, s.rms_z_nm += e.dz * e.dz, s.bias_z_nm += e.dz;
    s.far += std::abs(e.dz) > 150 ? 1 : 0;
  }
  const auto n = static_cast<double>(s.fits);
  s.rms_x_px = std::sqrt(s.rms_x_px / n), s.rms_y_px = std::sqrt(s.rms_y_px / n), s.rms_z_nm = std::sqrt(s.rms_z_nm / n);
  s.bias_z_nm /= n;
  return s;
}

}  // namespace nanoscopy
