#include "nanoscopy/sofi/balanced.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/sofi/deconvolve.hpp"

namespace nanoscopy {
namespace {

constexpr float kMasked = std::numeric_limits<float>::quiet_NaN();

// bSOFI's bands (sofiBalance): order 4 where |w4| is well away from its zeros
// rho = 1/2 -+ sqrt(3)/6 (0.211, 0.789), order 3 near them.
bool use_order4(float rho) {
  if (!std::isfinite(rho)) return true;
  return (rho > 0.278f && rho < 0.722f) || rho < 0.128f || rho > 0.872f;
}

std::vector<float> scaled_to_max(std::vector<float> v) {
  float peak = 0;
  for (float x : v)
    if (std::isfinite(x)) peak = std::max(peak, x);
  if (peak > 0)
    for (float& x : v) x /= peak;
  return v;
}

}  // namespace

CumulantDeconvolver richardson_lucy_deconvolver(double psf_sigma, int iterations,
                                                std::shared_ptr<DeconvolveEngine> engine) {
  if (!engine) engine = make_cpu_deconvolve_engine();
  return [psf_sigma, iterations, engine](std::span<float> image, std::int64_t w, std::int64_t h, int order) {
    richardson_lucy(image, w, h, order_psf_kernel(psf_sigma, order), iterations, *engine);
  };
}

BalancedImages balance_sofi(const SofiProblem& problem, const SofiImages& images, const BalancedSettings& settings,
                            const CumulantDeconvolver& deconvolve) {
  const int n = static_cast<int>(problem.planes.size()) + 1;
  for (int i = 0; i < static_cast<int>(problem.planes.size()); ++i)
    if (problem.planes[static_cast<std::size_t>(i)].order != i + 2 || problem.planes[static_cast<std::size_t>(i)].cross)
      throw UsageError("--balanced", "needs the auto-cumulants of orders 2..n in order");
  if (n < 3 || n > 4) throw UsageError("--balanced", "balances orders 3 or 4 (got up to " + std::to_string(n) + ")");
  if (problem.moments) throw UsageError("--balanced", "needs cumulants, not moments (--moments)");
  const std::int64_t w = problem.width, h = problem.height;
  const auto pixels = static_cast<std::size_t>(problem.pixels());
  BalancedImages out;
  out.order = n;

  // K_n: |kappa_n| deconvolved with U^n, the sign of kappa_n back, per PSF mass.
  for (int order = 2; order <= n; ++order) {
    const auto& kappa = images.planes[static_cast<std::size_t>(order - 2)];
    std::vector<float> k(pixels);
    for (std::size_t i = 0; i < pixels; ++i) {
      if (!std::isfinite(kappa[i])) throw InputError("--balanced", "the order " + std::to_string(order) + " image has non-finite pixels");
      k[i] = std::abs(kappa[i]);
    }
    deconvolve(k, w, h, order);
    const double mass = order_psf_mass(settings.psf_sigma, order);
    for (std::size_t i = 0; i < pixels; ++i)
      k[i] = static_cast<float>(std::max(0.0f, k[i]) / mass) * (kappa[i] < 0 ? -1.0f : 1.0f);
    out.linear.push_back(std::move(k));
  }

  // Molecular parameters from the K_n at the order-2 resolution.
  if (n >= 4) {
    const PsfKernel common = make_psf_kernel(settings.psf_sigma / std::sqrt(2.0));
    std::vector<std::vector<float>> r;
    for (int order = 2; order <= 4; ++order) {
      r.push_back(out.linear[static_cast<std::size_t>(order - 2)]);
      convolve_reflect(r.back(), w, h, common);
    }
    float peak2 = 0;
    for (float v : r[0]) peak2 = std::max(peak2, v);
    const double floor = settings.mask_fraction * peak2;
    out.rho.assign(pixels, kMasked);
    out.epsilon.assign(pixels, kMasked);
    out.density.assign(pixels, kMasked);
    for (std::size_t i = 0; i < pixels; ++i) {
      const auto m = molecular_parameters(r[0][i], r[1][i], r[2][i], floor);
      out.rho[i] = static_cast<float>(m.rho);
      out.epsilon[i] = static_cast<float>(m.epsilon);
      out.density[i] = static_cast<float>(m.density);
    }
  }

  // Linearized orders (not reconvolved: balanced.hpp), each scaled to its maximum.
  auto linearized = [&](int order) {
    std::vector<float> l(pixels);
    const auto& k = out.linear[static_cast<std::size_t>(order - 2)];
    for (std::size_t i = 0; i < pixels; ++i) l[i] = std::pow(std::abs(k[i]), 1.0f / static_cast<float>(order));
    return scaled_to_max(std::move(l));
  };
  const auto l3 = linearized(3);
  if (n == 3) {
    out.balanced = l3;
    return out;
  }
  const auto l4 = linearized(4);
  std::vector<float> choose4(pixels);
  for (std::size_t i = 0; i < pixels; ++i) choose4[i] = use_order4(out.rho[i]) ? 1.0f : 0.0f;
  convolve_reflect(choose4, w, h, make_psf_kernel(settings.psf_sigma / std::sqrt(static_cast<double>(n))));
  out.balanced.resize(pixels);
  for (std::size_t i = 0; i < pixels; ++i) out.balanced[i] = choose4[i] * l4[i] + (1 - choose4[i]) * l3[i];
  return out;
}

}  // namespace nanoscopy
