// The CPU spot fitter against truth that needs no other implementation:
// finite differences of the closed forms, noiseless spots, the paper's
// simulated batches (accuracy of Table 1), odd ROI shapes and broken ROIs.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/device.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/fit/engine.hpp"
#include "nanoscopy/fit/estimators/lsq.hpp"
#include "nanoscopy/fit/model_list.hpp"
#include "nanoscopy/fit/simulate_spots.hpp"

using namespace nanoscopy;

namespace {

std::vector<FitResult> fit_cpu(const SimulatedSpots& s, const FitSettings& st, bool u16, int threads = 0,
                               const SpotGuess* initial = nullptr) {
  std::vector<FitResult> out(static_cast<std::size_t>(s.count));
  make_cpu_fit_engine(st, threads)->fit(s.batch(u16 ? PixelType::u16 : PixelType::f32, initial), out);
  return out;
}

FitResult fit_one(const std::vector<float>& pixels, int w, int h, const FitSettings& st = {},
                  const SpotGuess* guess = nullptr) {
  RoiBatch b;
  b.pixels = pixels.data();
  b.type = PixelType::f32;
  b.count = 1;
  b.width = w;
  b.height = h;
  b.initial = guess;
  FitResult r;
  make_cpu_fit_engine(st, 1)->fit(b, std::span<FitResult>(&r, 1));
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// No NaN behind a converged status; every status a defined one.
void check_flagged(const FitResult& r) {
  CHECK(static_cast<int>(r.status) <= static_cast<int>(FitStatus::invalid_roi));
  if (r.status != FitStatus::invalid_roi && r.status != FitStatus::nan) {
    CHECK(std::isfinite(r.x));
    CHECK(std::isfinite(r.y));
    CHECK(std::isfinite(r.sigma));
  }
  if (converged(r.status) || r.status == FitStatus::max_iterations) {
    CHECK(std::isfinite(r.amplitude));
    CHECK(std::isfinite(r.background));
    CHECK(std::isfinite(r.chi2));
  }
}

// A listed model's axis terms, the model picked at run time: these tests loop over ShapeModel.
struct AxisModel {
  ShapeModel model;
  double sigma;
};
AxisModel make_axis_model(ShapeModel model, double sigma) {
  return AxisModel{model, sigma};
}
fit_detail::AxisTerm<double> axis_term(const AxisModel& am, double u) {
  fit_detail::AxisTerm<double> t{};
  if (!fit_detail::dispatch_model(am.model, [&]<class M>(M) { t = M::term(M::make_axis(am.sigma), u); }))
    throw std::logic_error("no listed model has shape " + to_string(am.model));
  return t;
}

// The model at p through the closed forms (for finite differences); also
// checks the separable sums against the sums taken pixel by pixel.
fit_detail::Evaluation<double, 3> evaluate(const std::vector<double>& g, int w, int h, ShapeModel model, const double p[3]) {
  using namespace fit_detail;
  const AxisModel am = make_axis_model(model, p[2]);
  AxisSums<double> xs, ys;
  clear(xs);
  clear(ys);
  for (int c = 0; c < w; ++c) accumulate(xs, axis_term(am, c - p[0]));
  for (int r = 0; r < h; ++r) accumulate(ys, axis_term(am, r - p[1]));
  IsotropicDataSums<double> data;
  clear(data);
  double direct[18] = {};
  double sum = 0, sum2 = 0;
  for (int r = 0; r < h; ++r)
    for (int c = 0; c < w; ++c) {
      const double v = g[r * w + c];
      const AxisTerm<double> X = axis_term(am, c - p[0]), Y = axis_term(am, r - p[1]);
      accumulate(data, v, X, Y);
      const double f = X.v * Y.v, d[3] = {X.dc * Y.v, X.v * Y.dc, X.ds * Y.v + X.v * Y.ds};
      const double terms[18] = {f,           f * f,       f * v,       d[0],        d[1],        d[2],
                                f * d[0],    f * d[1],    f * d[2],    v * d[0],    v * d[1],    v * d[2],
                                d[0] * d[0], d[0] * d[1], d[0] * d[2], d[1] * d[1], d[1] * d[2], d[2] * d[2]};
      for (int i = 0; i < 18; ++i) direct[i] += terms[i];
      sum += v;
      sum2 += v * v;
    }
  const Sums<double, 3> s = combine(xs, ys, data);
  const double separable[18] = {s.f,     s.ff,    s.fg,    s.d[0],  s.d[1],  s.d[2],  s.fd[0], s.fd[1], s.fd[2],
                                s.gd[0], s.gd[1], s.gd[2], s.dd[0], s.dd[1], s.dd[2], s.dd[3], s.dd[4], s.dd[5]};
  for (int i = 0; i < 18; ++i) CHECK(separable[i] == doctest::Approx(direct[i]).epsilon(1e-12).scale(1e-9));
  Evaluation<double, 3> e{};
  REQUIRE(lsq_assemble(s, RoiConstants<double>{static_cast<double>(w * h), sum, sum2}, e));
  return e;
}

}  // namespace

TEST_CASE("axis terms: derivatives match finite differences, the integrated profile sums to one") {
  using namespace fit_detail;
  for (ShapeModel model : {ShapeModel::sampled, ShapeModel::integrated}) {
    CAPTURE(to_string(model));
    for (double sigma : {0.4, 1.3, 3.0}) {
      const double eps = 1e-6;
      const AxisModel am = make_axis_model(model, sigma);
      const AxisModel am_p = make_axis_model(model, sigma + eps), am_m = make_axis_model(model, sigma - eps);
      for (double u : {-4.2, -1.0, -0.3, 0.0, 0.5, 2.7}) {
        const AxisTerm t = axis_term(am, u);
        const double dc = -(axis_term(am, u + eps).v - axis_term(am, u - eps).v) / (2 * eps);  // ∂/∂centre = −∂/∂u
        const double ds = (axis_term(am_p, u).v - axis_term(am_m, u).v) / (2 * eps);
        CHECK(t.dc == doctest::Approx(dc).epsilon(1e-6).scale(1.0));
        CHECK(t.ds == doctest::Approx(ds).epsilon(1e-6).scale(1.0));
      }
    }
    if (model == ShapeModel::integrated) {
      double total = 0;
      const AxisModel am = make_axis_model(model, 1.7);
      for (int c = -40; c <= 40; ++c) total += axis_term(am, c - 0.37).v;
      CHECK(total == doctest::Approx(1.0).epsilon(1e-12));
    }
  }
}

TEST_CASE("the sampled model's recurrence equals the direct terms, centre inside or outside") {
  using namespace fit_detail;
  for (double sigma : {0.3, 1.4, 5.0})
    for (double centre : {-7.3, -0.5, 0.0, 3.49, 3.5, 8.2, 40.0}) {
      const int n = 13;
      const AxisModel am = make_axis_model(ShapeModel::sampled, sigma);
      double v[n], dc[n], ds[n];
      Gauss2d::fill_terms(Gauss2d::make_axis(sigma), centre, n, v, dc, ds);
      for (int c = 0; c < n; ++c) {
        const AxisTerm t = axis_term(am, c - centre);
        CHECK(v[c] == doctest::Approx(t.v).epsilon(1e-11).scale(1e-300));
        CHECK(dc[c] == doctest::Approx(t.dc).epsilon(1e-11).scale(1e-300));
        CHECK(ds[c] == doctest::Approx(t.ds).epsilon(1e-11).scale(1e-300));
      }
    }
}

TEST_CASE("closed forms: α̂, β̂ minimize χ², the gradient and JᵀJ match finite differences") {
  SpotRecipe recipe;
  recipe.width = 7;
  recipe.height = 8;
  const auto spots = simulate_spots(recipe, 3, 7);
  for (ShapeModel model : {ShapeModel::sampled, ShapeModel::integrated}) {
    for (std::int64_t k = 0; k < spots.count; ++k) {
      CAPTURE(k);
      const int n = spots.width * spots.height;
      std::vector<double> g(spots.pixels.begin() + k * n, spots.pixels.begin() + (k + 1) * n);
      const double p[3] = {spots.truth[k].x + 0.3, spots.truth[k].y - 0.2, spots.truth[k].sigma * 1.1};
      const auto e = evaluate(g, spots.width, spots.height, model, p);
      // α̂, β̂ are the least-squares amplitudes: perturbing them raises χ².
      const auto am = make_axis_model(model, p[2]);
      auto chi2_ab = [&](double a, double b) {
        double c2 = 0;
        for (int r = 0; r < spots.height; ++r)
          for (int c = 0; c < spots.width; ++c) {
            const double f = axis_term(am, c - p[0]).v * axis_term(am, r - p[1]).v;
            c2 += (a * f + b - g[r * spots.width + c]) * (a * f + b - g[r * spots.width + c]);
          }
        return c2;
      };
      CHECK(e.chi2 == doctest::Approx(chi2_ab(e.alpha, e.beta)).epsilon(1e-10));
      CHECK(chi2_ab(e.alpha * 1.001, e.beta) > e.chi2);
      CHECK(chi2_ab(e.alpha, e.beta + 0.01) > e.chi2);
      // Jᵀ(g − h) = −½ ∇χ² of the reduced χ² (eqs. 8, 9).
      const double eps = 1e-5;
      double grad_fd[3];
      for (int j = 0; j < 3; ++j) {
        double pp[3] = {p[0], p[1], p[2]}, pm[3] = {p[0], p[1], p[2]};
        pp[j] += eps;
        pm[j] -= eps;
        grad_fd[j] = -0.5 *
                     (evaluate(g, spots.width, spots.height, model, pp).chi2 -
                      evaluate(g, spots.width, spots.height, model, pm).chi2) /
                     (2 * eps);
        CHECK(e.grad[j] == doctest::Approx(grad_fd[j]).epsilon(1e-5).scale(1.0));
      }
      // JᵀJ: J_ij = ∂h_i/∂p_j by finite differences of the model image.
      auto model_image = [&](const double* q) {
        const auto ev = evaluate(g, spots.width, spots.height, model, q);
        const auto m = make_axis_model(model, q[2]);
        std::vector<double> hv(static_cast<std::size_t>(n));
        for (int r = 0; r < spots.height; ++r)
          for (int c = 0; c < spots.width; ++c)
            hv[r * spots.width + c] = ev.alpha * axis_term(m, c - q[0]).v * axis_term(m, r - q[1]).v + ev.beta;
        return hv;
      };
      std::vector<std::vector<double>> J(3);
      for (int j = 0; j < 3; ++j) {
        double pp[3] = {p[0], p[1], p[2]}, pm[3] = {p[0], p[1], p[2]};
        pp[j] += eps;
        pm[j] -= eps;
        const auto hp = model_image(pp), hm = model_image(pm);
        for (int i = 0; i < n; ++i) J[j].push_back((hp[i] - hm[i]) / (2 * eps));
      }
      int idx = 0;
      for (int j = 0; j < 3; ++j)
        for (int m = j; m < 3; ++m, ++idx) {
          double jtj = 0;
          for (int i = 0; i < n; ++i) jtj += J[j][i] * J[m][i];
          CHECK(e.h[idx] == doctest::Approx(jtj).epsilon(1e-5).scale(1.0));
        }
    }
  }
}

TEST_CASE("noiseless spots are recovered exactly by both models") {
  for (ShapeModel model : {ShapeModel::sampled, ShapeModel::integrated}) {
    CAPTURE(to_string(model));
    SpotRecipe recipe;
    recipe.noise = false;
    recipe.model = model;
    recipe.signal = 2000;
    recipe.background = 500;
    const auto spots = simulate_spots(recipe, 200, 11);
    FitSettings st;
    st.model = model;
    const auto out = fit_cpu(spots, st, false);
    for (std::int64_t k = 0; k < spots.count; ++k) {
      const auto& t = spots.truth[k];
      const auto& r = out[k];
      CAPTURE(k);
      CHECK(converged(r.status));
      CHECK(std::abs(r.x - t.x) < 1e-4);
      CHECK(std::abs(r.y - t.y) < 1e-4);
      CHECK(std::abs(r.sigma - t.sigma) < 1e-4);
      CHECK(std::abs(r.amplitude - t.amplitude) < 1e-4 * t.amplitude);
      CHECK(std::abs(r.background - t.background) < 1e-4 * t.amplitude);
      CHECK(r.iterations <= 10);
    }
  }
}

TEST_CASE("the paper's 9×9 400:40 batch: Table 1 accuracy, unbiased σ, ≥ 99.9 % converged") {
  SpotRecipe recipe;  // 9×9, 400 signal, 40 background, σ ~ U[1, 2]
  const std::int64_t count = 100000;
  const auto spots = simulate_spots(recipe, count, 2024);
  FitSettings st;
  const auto start = std::chrono::steady_clock::now();
  const auto out = fit_cpu(spots, st, true);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto threads = select_device(DeviceRequest::parse("cpu"), true).cpu_threads;
  MESSAGE("CPU 9×9 uint16: " << count / seconds << " fits/s on " << threads << " threads (" << count / seconds / threads
                             << " per thread)");

  std::vector<double> pos_err, sigma_err;
  double sigma_rel_bias = 0, iterations = 0;
  std::int64_t ok = 0;
  int per_status[8] = {};
  for (std::int64_t k = 0; k < count; ++k) {
    const auto& r = out[k];
    const auto& t = spots.truth[k];
    ++per_status[static_cast<int>(r.status)];
    check_flagged(r);
    if (!converged(r.status)) continue;
    ++ok;
    pos_err.push_back(std::abs(r.x - t.x) / t.sigma);
    pos_err.push_back(std::abs(r.y - t.y) / t.sigma);
    sigma_err.push_back(std::abs(r.sigma - t.sigma) / t.sigma);
    sigma_rel_bias += (r.sigma - t.sigma) / t.sigma;
    iterations += r.iterations;
  }
  sigma_rel_bias /= static_cast<double>(ok);
  iterations /= static_cast<double>(ok);
  const double med_pos = median(pos_err), med_sigma = median(sigma_err);
  MESSAGE("median |x̂−x|/σ " << med_pos << " (paper 0.0464), median |σ̂−σ|/σ " << med_sigma << " (paper 0.0420), σ bias "
                            << sigma_rel_bias * 100 << " %, mean iterations " << iterations << ", converged " << ok
                            << "/" << count);
  for (int s = 0; s < 8; ++s)
    if (per_status[s]) MESSAGE(to_string(static_cast<FitStatus>(s)) << ": " << per_status[s]);
  CHECK(ok >= count * 999 / 1000);
  CHECK(med_pos > 0.035);
  CHECK(med_pos < 0.06);
  CHECK(med_sigma > 0.03);
  CHECK(med_sigma < 0.06);
  CHECK(std::abs(sigma_rel_bias) < 0.015);
  CHECK(iterations < 8);
}

TEST_CASE("results do not depend on threads, batch slicing or pixel type for integer data") {
  SpotRecipe recipe;
  recipe.width = 11;
  recipe.height = 7;
  const auto spots = simulate_spots(recipe, 3000, 5);
  FitSettings st;
  const auto a = fit_cpu(spots, st, true, 1);
  const auto b = fit_cpu(spots, st, true, 2);
  const auto c = fit_cpu(spots, st, false, 2);
  // The second half alone.
  SimulatedSpots half = spots;
  half.count = spots.count / 2;
  const std::size_t n = static_cast<std::size_t>(spots.width * spots.height);
  half.pixels_u16.assign(spots.pixels_u16.begin() + half.count * n, spots.pixels_u16.end());
  const auto d = fit_cpu(half, st, true, 2);
  for (std::int64_t k = 0; k < spots.count; ++k) {
    CHECK(std::memcmp(&a[k], &b[k], sizeof(FitResult)) == 0);
    CHECK(std::memcmp(&a[k], &c[k], sizeof(FitResult)) == 0);
    if (k >= half.count) CHECK(std::memcmp(&a[k], &d[k - half.count], sizeof(FitResult)) == 0);
  }
}

TEST_CASE("ROIs of other shapes: one pixel wide or tall, 5×11, 32×32, 1×1024") {
  struct Shape {
    int w, h;
    double signal, background;
  };
  for (const Shape s : {Shape{1, 9, 400, 40}, Shape{9, 1, 400, 40}, Shape{5, 11, 400, 40}, Shape{32, 32, 4000, 1024},
                        Shape{7, 7, 400, 40}, Shape{13, 13, 400, 40}}) {
    CAPTURE(s.w);
    CAPTURE(s.h);
    SpotRecipe recipe;
    recipe.width = s.w;
    recipe.height = s.h;
    recipe.signal = s.signal;
    recipe.background = s.background;
    const auto spots = simulate_spots(recipe, 2000, 99);
    for (ShapeModel model : {ShapeModel::sampled, ShapeModel::integrated}) {
      FitSettings st;
      st.model = model;
      const auto out = fit_cpu(spots, st, true);
      std::vector<double> err_x, err_y;
      std::int64_t ok = 0;
      for (std::int64_t k = 0; k < spots.count; ++k) {
        check_flagged(out[k]);
        if (!converged(out[k].status)) continue;
        ++ok;
        err_x.push_back(std::abs(out[k].x - spots.truth[k].x) / spots.truth[k].sigma);
        err_y.push_back(std::abs(out[k].y - spots.truth[k].y) / spots.truth[k].sigma);
        // A one-pixel-wide ROI carries no x information: x stays on the column.
        if (s.w == 1) CHECK(out[k].x == 0.0f);
        if (s.h == 1) CHECK(out[k].y == 0.0f);
      }
      // Nine pixels in a line leave σ, α and β weakly determined: a few fits run out of iterations.
      CHECK(ok >= spots.count * (s.w == 1 || s.h == 1 ? 95 : 99) / 100);
      if (s.w > 1) CHECK(median(err_x) < 0.12);
      if (s.h > 1) CHECK(median(err_y) < 0.12);
    }
  }
  // The largest ROI, a single row of 1024 pixels.
  SpotRecipe row;
  row.width = 1024;
  row.height = 1;
  row.signal = 2000;
  row.background = 1024;
  const auto spots = simulate_spots(row, 20, 3);
  const auto out = fit_cpu(spots, FitSettings{}, true);
  for (std::int64_t k = 0; k < spots.count; ++k) {
    CHECK(converged(out[k].status));
    CHECK(std::abs(out[k].x - spots.truth[k].x) < 0.5);
  }
}

TEST_CASE("degenerate ROIs end with a status, never a crash or a NaN reported as converged") {
  const int w = 9, h = 9;
  SUBCASE("constant") {
    const auto r = fit_one(std::vector<float>(w * h, 7.0f), w, h);
    CHECK(r.status == FitStatus::invalid_roi);
    CHECK(std::isnan(r.x));
  }
  SUBCASE("all zero") {
    CHECK(fit_one(std::vector<float>(w * h, 0.0f), w, h).status == FitStatus::invalid_roi);
  }
  SUBCASE("one bright pixel") {
    std::vector<float> g(w * h, 3.0f);
    g[4 * w + 4] = 500.0f;
    const auto r = fit_one(g, w, h);
    check_flagged(r);
    // The best "spot" is the pixel itself: σ shrinks until it crosses min_sigma.
    CHECK(r.status == FitStatus::left_roi);
    CHECK(r.sigma <= FitSettings{}.min_sigma);
  }
  SUBCASE("one bright pixel on the border") {
    std::vector<float> g(w * h, 3.0f);
    g[0] = 500.0f;
    check_flagged(fit_one(g, w, h));
  }
  SUBCASE("NaN and infinite pixels") {
    SpotRecipe recipe;
    auto spots = simulate_spots(recipe, 1, 1);
    spots.pixels[40] = std::numeric_limits<float>::quiet_NaN();
    CHECK(fit_one(spots.pixels, w, h).status == FitStatus::invalid_roi);
    spots.pixels[40] = std::numeric_limits<float>::infinity();
    CHECK(fit_one(spots.pixels, w, h).status == FitStatus::invalid_roi);
  }
  SUBCASE("spot far outside: only a tail and noise in the ROI") {
    SpotRecipe tail;
    tail.signal = 4000;
    tail.width = 27;  // wide enough that columns 18..26 hold the 9-wide ROI
    tail.height = 9;
    tail.centre_sd = 0;
    const auto big = simulate_spots(tail, 50, 8);  // centre at (13, 4) of a 27-wide ROI
    int left = 0;
    for (std::int64_t k = 0; k < big.count; ++k) {
      std::vector<float> g(w * h);
      for (int r = 0; r < h; ++r)
        for (int c = 0; c < w; ++c)
          g[r * w + c] = big.pixels[k * 27 * 9 + r * 27 + (c + 18)];  // x = c + 18 → centre −5
      const auto res = fit_one(g, w, h);
      check_flagged(res);
      if (res.status == FitStatus::left_roi) ++left;
      if (converged(res.status)) {
        CHECK(res.x >= -0.5f);  // a converged fit lies inside the ROI
      }
    }
    MESSAGE("spot 5 px outside: " << left << "/50 ended as left_roi");
  }
  SUBCASE("guesses: outside, non-finite, σ ≤ 0, the truth") {
    SpotRecipe recipe;
    const auto spots = simulate_spots(recipe, 1, 4);
    SpotGuess g{12.0f, 4.0f, 1.5f};
    CHECK(fit_one(spots.pixels, w, h, {}, &g).status == FitStatus::left_roi);
    g = SpotGuess{std::numeric_limits<float>::quiet_NaN(), 4.0f, 1.5f};
    CHECK(fit_one(spots.pixels, w, h, {}, &g).status == FitStatus::nan);
    g = SpotGuess{4.0f, 4.0f, 0.0f};
    CHECK(fit_one(spots.pixels, w, h, {}, &g).status == FitStatus::left_roi);
    const auto& t = spots.truth[0];
    g = SpotGuess{static_cast<float>(t.x), static_cast<float>(t.y), static_cast<float>(t.sigma)};
    const auto r = fit_one(spots.pixels, w, h, {}, &g);
    CHECK(converged(r.status));
    CHECK(std::abs(r.x - t.x) < 0.5);
  }
  SUBCASE("max_error and max_iterations stop the fit") {
    SpotRecipe recipe;
    const auto spots = simulate_spots(recipe, 1, 4);
    FitSettings st;
    st.max_error = 1e12;
    auto r = fit_one(spots.pixels, w, h, st);
    CHECK(r.status == FitStatus::converged_max_error);
    CHECK(r.iterations == 0);
    st = FitSettings{};
    st.max_iterations = 1;
    st.min_delta = 0;
    st.min_step = 0;
    r = fit_one(spots.pixels, w, h, st);
    CHECK(r.status == FitStatus::max_iterations);
    CHECK(r.iterations == 1);
  }
}

TEST_CASE("bad batches are usage errors; an empty batch is fine") {
  auto backend = make_cpu_fit_engine(FitSettings{}, 1);
  std::vector<float> pixels(2048, 1.0f);
  std::vector<FitResult> out(1);
  RoiBatch b;
  b.pixels = pixels.data();
  b.type = PixelType::f32;
  b.count = 1;
  b.width = 33;
  b.height = 32;
  CHECK_THROWS_AS(backend->fit(b, out), UsageError);
  b.width = 0;
  CHECK_THROWS_AS(backend->fit(b, out), UsageError);
  b.width = 4;
  b.height = 4;
  b.type = PixelType::f64;
  CHECK_THROWS_AS(backend->fit(b, out), UsageError);
  b.type = PixelType::f32;
  std::vector<FitResult> wrong(2);
  CHECK_THROWS_AS(backend->fit(b, wrong), UsageError);
  b.count = 0;
  b.pixels = nullptr;
  CHECK_NOTHROW(backend->fit(b, std::span<FitResult>()));
  CHECK(make_fit_engine(select_device(DeviceRequest::parse("cpu"), true), FitSettings{})->name().rfind("cpu", 0) == 0);
}
