// The CPU reference engine: one frame at a time (capacity 1), OpenMP inside
// every step. The iteration is the one stated in engine.hpp.
#include <algorithm>
#include <cmath>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/smre/dykstra.hpp"
#include "nanoscopy/smre/engine.hpp"
#include "nanoscopy/smre/smre_math.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace nanoscopy {

namespace {

namespace m = smre_math;

class CpuSmreEngine final : public SmreEngine {
 public:
  CpuSmreEngine(const SmreProblem& p, int threads) : p_(p), threads_(std::max(1, threads)) {
    const auto n = static_cast<std::size_t>(p_.pixels());
    for (auto* v : {&image_, &x_, &z_, &eps_, &ax_, &u1_, &u2_, &work_, &px_, &py_}) v->assign(n, 0.0f);
  }

  std::string name() const override { return "cpu (" + std::to_string(threads_) + " threads)"; }
  std::int64_t capacity() const override { return 1; }

  void start(std::span<const float> frames, std::span<const double> noise_sigma) override {
    if (frames.size() != static_cast<std::size_t>(p_.pixels()) || noise_sigma.size() != 1)
      throw Error(ErrorKind::other, "smre", "the CPU engine takes one frame per batch");
    std::copy(frames.begin(), frames.end(), image_.begin());
    sigma_ = noise_sigma[0];
    std::copy(image_.begin(), image_.end(), x_.begin());
    std::copy(image_.begin(), image_.end(), z_.begin());
    for (auto* v : {&eps_, &u1_, &u2_, &px_, &py_}) std::fill(v->begin(), v->end(), 0.0f);
    warm_ = false;
    with_threads([&] { apply_psf(p_.psf, x_, ax_, p_.width, p_.height, scratch_); });
  }

  void iterate(std::span<const std::uint8_t> active, std::span<FrameStats> stats) override {
    if (active.empty() || !active[0]) return;
    with_threads([&] { stats[0] = step(); });
  }

  void read_x(std::span<float> out) override { std::copy(x_.begin(), x_.end(), out.begin()); }
  void read_eps(std::span<float> out) override { std::copy(eps_.begin(), eps_.end(), out.begin()); }

 private:
  template <typename F>
  void with_threads(F&& f) {
#ifdef _OPENMP
    const int before = omp_get_max_threads();
    omp_set_num_threads(threads_);
    f();
    omp_set_num_threads(before);
#else
    f();
#endif
  }

  FrameStats step() {
    const SmreSettings& s = p_.settings;
    const std::int64_t n = p_.pixels(), w = p_.width, h = p_.height;
    const float rho1 = static_cast<float>(s.rho1), rho2 = static_cast<float>(s.rho2);
    const float gamma = static_cast<float>(s.gamma), lambda = static_cast<float>(s.lambda);
    FrameStats st;

    // x-step: work = rho1 (I - eps - A x) + u1, then A^T of it.
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) work_[i] = m::data_residual_term(image_[i], eps_[i], ax_[i], u1_[i], rho1);
    apply_psf_adjoint(p_.psf, work_, work_, w, h, scratch_);
    double step2 = 0;
#pragma omp parallel for schedule(static) reduction(+ : step2)
    for (std::int64_t i = 0; i < n; ++i) {
      const float nx = m::x_update(x_[i], work_[i], z_[i], u2_[i], gamma, rho2);
      step2 += m::squared(nx - x_[i]);
      x_[i] = nx;
    }
    st.step = std::sqrt(step2 / static_cast<double>(n));
    apply_psf(p_.psf, x_, ax_, w, h, scratch_);

    // z-step: prox of R/rho2 at v = x + u2/rho2 (work holds v).
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) work_[i] = m::prox_argument(x_[i], u2_[i], rho2);
    z_step(work_, lambda, rho2);

    // eps-step: P_G(I - A x + u1/rho1).
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) eps_[i] = m::projection_argument(image_[i], ax_[i], u1_[i], rho1);
    DykstraControl control{s.dykstra_tolerance, s.dykstra_max_sweeps, 0, s.dykstra_warm_start && warm_};
    warm_ = true;
    if (s.projection == Projection::exact) {
      st.sweeps = project_exact_cpu(eps_, p_.family, p_.weights, sigma_, control, q_);
    } else {
      control.fixed_sweeps = s.icd_sweeps;
      st.sweeps = project_icd_cpu(eps_, p_.family, p_.weights, sigma_, control, q_);
    }

    // Dual steps and the report's means.
    const float alpha1 = static_cast<float>(s.alpha1), alpha2 = static_cast<float>(s.alpha2);
    double c1 = 0, c2 = 0;
#pragma omp parallel for schedule(static) reduction(+ : c1, c2)
    for (std::int64_t i = 0; i < n; ++i) {
      const m::DualResiduals r =
          m::dual_update(image_[i], eps_[i], ax_[i], x_[i], z_[i], alpha1, alpha2, u1_[i], u2_[i]);
      c1 += m::squared(r.r1);
      c2 += m::squared(r.r2);
    }
    st.c1 = c1 / static_cast<double>(n);
    st.c2 = c2 / static_cast<double>(n);
    return st;
  }

  // z = prox_{R/rho2}(v); v is in `v` (work_).
  void z_step(const std::vector<float>& v, float lambda, float rho2) {
    const std::int64_t n = p_.pixels(), w = p_.width, h = p_.height;
    switch (p_.settings.regularizer) {
      case Regularizer::l2:
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < n; ++i) z_[i] = m::prox_l2(v[i], lambda, rho2);
        return;
      case Regularizer::l1:
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < n; ++i) z_[i] = m::prox_l1(v[i], lambda, rho2);
        return;
      case Regularizer::tv: {
        const float theta = lambda / rho2;
        if (theta <= 0.0f) {
          std::copy(v.begin(), v.end(), z_.begin());
          return;
        }
        // Chambolle: d = div p - v/theta; p <- (p + tau grad d)/(1 + tau |grad d|); z = v - theta div p.
        for (int it = 0; it < p_.settings.tv_iterations; ++it) {
#pragma omp parallel for schedule(static)
          for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < w; ++x)
              z_[y * w + x] = m::tv_dual_argument(px_.data(), py_.data(), w, h, x, y, v[y * w + x], theta);
#pragma omp parallel for schedule(static)
          for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < w; ++x)
              m::tv_dual_update(px_[y * w + x], py_[y * w + x], m::tv_gradient(z_.data(), w, h, x, y));
        }
#pragma omp parallel for schedule(static)
        for (std::int64_t y = 0; y < h; ++y)
          for (std::int64_t x = 0; x < w; ++x)
            z_[y * w + x] = m::tv_primal(px_.data(), py_.data(), w, h, x, y, v[y * w + x], theta);
        return;
      }
    }
  }

  SmreProblem p_;
  int threads_;
  double sigma_ = 1.0;
  bool warm_ = false;  // q holds the previous projection's dual variables
  std::vector<float> image_, x_, z_, eps_, ax_, u1_, u2_, work_, px_, py_, scratch_, q_;
};

}  // namespace

std::unique_ptr<SmreEngine> make_cpu_smre_engine(const SmreProblem& problem, int threads) {
  return std::make_unique<CpuSmreEngine>(problem, threads);
}

}  // namespace nanoscopy
