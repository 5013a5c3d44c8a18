// SMRE's pieces against ground truth that needs no other implementation: the
// paper's weights, exact quantiles, brute-force projections, adjointness and
// the Anscombe transform's unbiasedness.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <numeric>
#include <random>

#include "nanoscopy/smre/dykstra.hpp"
#include "nanoscopy/smre/noise.hpp"
#include "nanoscopy/smre/psf.hpp"
#include "nanoscopy/smre/smre_math.hpp"
#include "nanoscopy/smre/weights.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;

namespace {

std::vector<float> random_field(std::size_t n, double sd, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, static_cast<float>(sd));
  std::vector<float> v(n);
  for (float& x : v) x = g(rng);
  return v;
}

SetFamily exact_family(std::int64_t w, std::int64_t h, int depth) {
  SetFamily f;
  f.kind = Projection::exact;
  f.mr_depth = depth;
  f.width = w;
  f.height = h;
  return f;
}

Weights closed_form(const SetFamily& f, double alpha = 0.9) {
  WeightOptions o;
  o.method = WeightMethod::closed_form;
  o.coverage = alpha;
  return compute_weights(f, o);
}

}  // namespace

TEST_CASE("the closed-form weights reproduce the reference values on a 1024^2 image at alpha 0.9") {
  const double expected[] = {0.0181658, 0.0207498, 0.0155408, 0.00760004, 0.002742, 0.000825881};
  const double pixels[] = {1, 4, 16, 64, 256, 1024};
  for (int k = 0; k < 6; ++k) {
    INFO("set of " << pixels[k] << " pixels");
    CHECK(closed_form_weight(pixels[k], 1024.0 * 1024.0, 0.9) == doctest::Approx(expected[k]).epsilon(2e-6));
  }
  // Through the ICD family on that image: edges 32 .. 1.
  SetFamily icd;
  icd.kind = Projection::icd;
  icd.width = icd.height = 1024;
  const Weights w = closed_form(icd);
  REQUIRE(w.edges == std::vector<int>{32, 16, 8, 4, 2, 1});
  for (int k = 0; k < 6; ++k) CHECK(w.c[5 - k] == doctest::Approx(expected[k]).epsilon(2e-6));
}

TEST_CASE("normal_quantile matches tabulated values, also deep in the tail") {
  CHECK(normal_quantile(0.5) == doctest::Approx(0.0));
  CHECK(normal_quantile(0.975) == doctest::Approx(1.959963984540054).epsilon(1e-12));
  CHECK(normal_quantile(0.025) == doctest::Approx(-1.959963984540054).epsilon(1e-12));
  CHECK(normal_quantile(1 - 1e-9) == doctest::Approx(5.997807015007686).epsilon(1e-7));
  CHECK(normal_quantile(1e-12) == doctest::Approx(-7.034483825301131).epsilon(1e-10));
}

TEST_CASE("Monte Carlo quantile of squares of one pixel equals the exact order-statistic quantile") {
  // For edge-1 sets, T = eps^2 and max_i T_i^(1/4) <= t  <=>  all |eps_i| <= t^2, so
  // P = (2 Phi(t^2) - 1)^N: the exact alpha-quantile is known in closed form.
  const std::int64_t w = 64, h = 64;
  const double alpha = 0.9, n = static_cast<double>(w * h);
  const double t = std::sqrt(normal_quantile((1 + std::pow(alpha, 1 / n)) / 2));
  const double q_exact = (t - std::pow(0.5, 0.25)) / std::sqrt(1.0 / 8.0);
  WeightOptions o;
  o.method = WeightMethod::monte_carlo;
  o.coverage = alpha;
  o.samples = 4000;
  o.use_cache = false;
  const Weights mc = compute_weights(exact_family(w, h, 1), o);
  REQUIRE(mc.q.size() == 1);
  CHECK(mc.q[0] == doctest::Approx(q_exact).epsilon(0.02));
  // Seeded: the same quantile again.
  CHECK(compute_weights(exact_family(w, h, 1), o).q[0] == mc.q[0]);
  // And the closed form, which for one scale of independent sets is this very formula
  // up to the fourth-root approximation, is close.
  CHECK(mc.c[0] == doctest::Approx(closed_form(exact_family(w, h, 1)).c[0]).epsilon(0.1));
}

TEST_CASE("Monte Carlo weights are cached per family, size, alpha, samples and seed") {
  test::TempDir dir;
  ::setenv("XDG_CACHE_HOME", dir.path().c_str(), 1);
  WeightOptions o;
  o.samples = 50;
  const SetFamily f = exact_family(64, 32, 4);
  const Weights first = compute_weights(f, o);
  CHECK_FALSE(first.from_cache);
  const Weights again = compute_weights(f, o);
  CHECK(again.from_cache);
  CHECK(again.q == first.q);
  CHECK(again.c == first.c);
  o.coverage = 0.5;  // another alpha: computed anew, and a smaller quantile
  const Weights other = compute_weights(f, o);
  CHECK_FALSE(other.from_cache);
  CHECK(other.q[0] < first.q[0]);
  // Larger sets get smaller weights (their sums are larger).
  for (std::size_t k = 1; k < first.c.size(); ++k) CHECK(first.c[k - 1] < first.c[k]);
  ::unsetenv("XDG_CACHE_HOME");
}

TEST_CASE("projection onto one square: inside unchanged, outside scaled onto the boundary") {
  const std::int64_t w = 8;
  std::vector<float> eps(64, 0.1f);
  auto inside = eps;
  CHECK(project_square(inside, w, 2, 3, 3, 0.5, 1.0) == 1.0f);
  CHECK(inside == eps);
  std::vector<float> big = random_field(64, 3.0, 7);
  const auto before = big;
  const double c = 0.2, sigma = 1.5;
  const float f = project_square(big, w, 1, 2, 4, c, sigma);
  CHECK(f < 1.0f);
  double sum = 0;
  for (int y = 2; y < 6; ++y)
    for (int x = 1; x < 5; ++x) {
      sum += big[y * w + x] * big[y * w + x];
      CHECK(big[y * w + x] == doctest::Approx(f * before[y * w + x]));
    }
  CHECK(c * sum == doctest::Approx(sigma * sigma).epsilon(1e-5));
  CHECK(big[0] == before[0]);  // outside the square: untouched
}

// The projection onto the intersection by an independent method: the dual.
// With multipliers l_s >= 0, eps_i(l) = w_i / (1 + 2 sum_{s ni i} l_s c_s) and the
// dual is maximised by projected gradient ascent (gradient c_s sum eps^2 - sigma^2).
std::vector<float> brute_force_projection(const std::vector<float>& w0, std::int64_t w, std::int64_t h,
                                          const SetFamily& f, const Weights& wt, double sigma) {
  struct Set {
    std::vector<std::int64_t> pixels;
    double c;
  };
  std::vector<Set> sets;
  for (int e : f.edges())
    f.for_each_square(e, [&](std::int64_t x0, std::int64_t y0) {
      Set s{{}, wt.c_for_edge(e)};
      for (int dy = 0; dy < e; ++dy)
        for (int dx = 0; dx < e; ++dx) s.pixels.push_back((y0 + dy) * w + x0 + dx);
      sets.push_back(std::move(s));
    });
  std::vector<double> l(sets.size(), 0.0), denom(static_cast<std::size_t>(w * h)), eps(denom.size());
  const double step = 0.5;
  for (int it = 0; it < 300000; ++it) {
    std::fill(denom.begin(), denom.end(), 1.0);
    for (std::size_t k = 0; k < sets.size(); ++k)
      for (auto i : sets[k].pixels) denom[i] += 2 * l[k] * sets[k].c;
    for (std::size_t i = 0; i < eps.size(); ++i) eps[i] = w0[i] / denom[i];
    double worst = 0;
    for (std::size_t k = 0; k < sets.size(); ++k) {
      double sum = 0;
      for (auto i : sets[k].pixels) sum += eps[i] * eps[i];
      const double g = sets[k].c * sum - sigma * sigma;
      l[k] = std::max(0.0, l[k] + step * g);
      if (l[k] > 0 || g > 0) worst = std::max(worst, std::fabs(g));
    }
    if (worst < 1e-10) break;
  }
  return std::vector<float>(eps.begin(), eps.end());
}

TEST_CASE("exact Dykstra converges to the projection onto the intersection (brute force by the dual)") {
  for (auto [w, h, depth, seed] : {std::tuple{8, 8, 3, 1u}, std::tuple{9, 7, 4, 2u}, std::tuple{6, 6, 6, 3u}}) {
    // A string, not the bindings: INFO captures what it names, and Clang 14 cannot capture a structured binding.
    const std::string what = std::to_string(w) + "x" + std::to_string(h) + " MRdepth " + std::to_string(depth);
    INFO(what);
    const SetFamily f = exact_family(w, h, depth);
    const Weights wt = closed_form(f);
    const double sigma = 1.0;
    const auto start = random_field(static_cast<std::size_t>(w * h), 1.6, seed);
    auto eps = start;
    std::vector<float> q;
    DykstraControl control;
    control.tolerance = 1e-9;
    control.max_sweeps = 20000;
    const int sweeps = project_exact_cpu(eps, f, wt, sigma, control, q);
    CHECK(sweeps > 1);
    const auto truth = brute_force_projection(start, w, h, f, wt, sigma);
    double dist = 0, norm = 0, moved = 0;
    for (std::size_t i = 0; i < eps.size(); ++i) {
      dist += (eps[i] - truth[i]) * (eps[i] - truth[i]);
      norm += truth[i] * truth[i];
      moved += (start[i] - truth[i]) * (start[i] - truth[i]);
    }
    CHECK(moved > 0.01 * norm);  // the constraints are active: not a trivial case
    CHECK(std::sqrt(dist / norm) < 1e-4);
    CHECK(max_constraint_ratio(eps, f, wt, sigma) <= 1.0 + 1e-5);
  }
}

TEST_CASE("ICD: every tile of every pass is projected onto its own sets; the last pass's sets hold") {
  SetFamily f;
  f.kind = Projection::icd;
  f.width = 96;
  f.height = 64;
  const Weights wt = closed_form(f);
  auto eps = random_field(static_cast<std::size_t>(f.width * f.height), 2.0, 11);
  DykstraControl control;
  control.tolerance = 1e-7;
  control.max_sweeps = 5000;
  std::vector<float> q;
  const int sweeps = project_icd_cpu(eps, f, wt, 1.0, control, q);
  CHECK(sweeps > 1);
  // The last pass (offset 16, squares of edge 16 and 32) is met exactly.
  for (std::int64_t ty = 16; ty + 32 <= f.height; ty += 32)
    for (std::int64_t tx = 16; tx + 32 <= f.width; tx += 32)
      for (int e : {16, 32})
        for (int sy = 0; sy < 32; sy += e)
          for (int sx = 0; sx < 32; sx += e) {
            double sum = 0;
            for (int dy = 0; dy < e; ++dy)
              for (int dx = 0; dx < e; ++dx) sum += std::pow(eps[(ty + sy + dy) * f.width + tx + sx + dx], 2);
            CHECK(wt.c_for_edge(e) * sum <= 1.0 + 1e-4);
          }
  // One sweep per tile when asked (the paper's text).
  auto once = random_field(static_cast<std::size_t>(f.width * f.height), 2.0, 11);
  control.fixed_sweeps = 1;
  CHECK(project_icd_cpu(once, f, wt, 1.0, control, q) == 1);
}

TEST_CASE("A and A^T are adjoint: <Ax, y> = <x, A^T y>, and A keeps a constant interior constant") {
  for (auto [w, h, sigma] : {std::tuple{64, 64, 3.0}, std::tuple{96, 33, 1.3}, std::tuple{37, 70, 4.0}}) {
    const PsfKernel k = make_psf_kernel(sigma);
    CHECK(std::accumulate(k.taps.begin(), k.taps.end(), 0.0) == doctest::Approx(1.0).epsilon(1e-6));
    const auto x = random_field(static_cast<std::size_t>(w * h), 1.0, 5), y = random_field(x.size(), 1.0, 6);
    std::vector<float> ax(x.size()), aty(x.size()), scratch;
    apply_psf(k, x, ax, w, h, scratch);
    apply_psf_adjoint(k, y, aty, w, h, scratch);
    double lhs = 0, rhs = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      lhs += static_cast<double>(ax[i]) * y[i];
      rhs += static_cast<double>(x[i]) * aty[i];
    }
    CHECK(lhs == doctest::Approx(rhs).epsilon(1e-5));
  }
  std::vector<float> ones(64 * 64, 1.0f), out(ones.size()), scratch;
  apply_psf(make_psf_kernel(2.0), ones, out, 64, 64, scratch);
  CHECK(out[32 * 64 + 32] == doctest::Approx(1.0f).epsilon(1e-5));
  CHECK(out[0] < 0.5f);  // zero boundary on the padded frame
}

TEST_CASE("reflection padding: the tile grid, the margin, and crop(pad(x)) == x") {
  const Padding p = plan_padding(50, 20, 16);
  CHECK(p.padded_width == 96);
  CHECK(p.padded_height == 64);
  CHECK(p.left == 16);
  std::vector<float> frame(50 * 20);
  std::iota(frame.begin(), frame.end(), 0.0f);
  std::vector<float> padded(static_cast<std::size_t>(p.padded_width * p.padded_height)), back(frame.size());
  pad_reflect(frame, p, padded);
  CHECK(padded[16 * 96 + 15] == frame[1]);        // x = -1 reflects to x = 1
  CHECK(padded[16 * 96 + 16 + 50] == frame[48]);  // x = 50 reflects to 48
  CHECK(padded[15 * 96 + 16] == frame[50]);       // y = -1 reflects to y = 1
  crop(padded, p, back);
  CHECK(back == frame);
}

TEST_CASE("Anscombe: unbiased inverse of the mean transform of Poisson data, and a round trip") {
  std::mt19937 rng(3);
  for (double lambda : {0.5, 2.0, 5.0, 20.0, 100.0}) {
    std::poisson_distribution<int> p(lambda);
    double mean = 0;
    const int n = 400000;
    for (int i = 0; i < n; ++i) mean += smre_math::anscombe_forward(p(rng));
    mean /= n;
    INFO("lambda " << lambda);
    CHECK(smre_math::anscombe_inverse(mean) == doctest::Approx(lambda).epsilon(lambda < 1 ? 0.05 : 0.01));
  }
  // The algebraic inverse is y^2/4 - 3/8; the unbiased one is 1/4 above it for
  // large counts (the bias of the forward transform).
  std::vector<float> v{1000.0f, 5000.0f, 20000.0f};
  const auto before = v;
  anscombe_forward(v);
  anscombe_inverse(v);
  for (std::size_t i = 0; i < v.size(); ++i) CHECK(v[i] == doctest::Approx(before[i] + 0.25f).epsilon(1e-4));
  CHECK(smre_math::anscombe_inverse(std::sqrt(1.5)) == doctest::Approx(0.0).epsilon(1e-12));
}

TEST_CASE("smre_math: the ADMM steps' per-pixel lines on pinned inputs (shared by the CPU engine and the kernels)") {
  namespace m = smre_math;
  // Values exact in float, so every result is exact.
  CHECK(m::prox_argument(1.5f, 0.5f, 2.0f) == 1.75f);               // x + u2/rho2
  CHECK(m::projection_argument(10.0f, 4.0f, 1.0f, 0.5f) == 8.0f);  // I - A x + u1/rho1
  float u1 = 1.0f, u2 = -1.0f;
  const m::DualResiduals r = m::dual_update(10.0f, 1.0f, 6.0f, 3.0f, 1.0f, 0.5f, 2.0f, u1, u2);
  CHECK(r.r1 == 3.0f);  // I - eps - A x
  CHECK(r.r2 == 2.0f);  // x - z
  CHECK(u1 == 2.5f);    // u1 + alpha1 r1
  CHECK(u2 == 3.0f);    // u2 + alpha2 r2
  CHECK(m::squared(-3.0f) == 9.0);
  CHECK(m::squared(1e20f) == doctest::Approx(1e40).epsilon(1e-6));  // squared in double: no float overflow
  // TV on a 2 x 2 field: div p at (1, 1) = -px(0, 1) - py(1, 0) = -4, at (0, 0) = px + py = 1.5.
  const float px[] = {1.0f, 2.0f, 3.0f, 4.0f}, py[] = {0.5f, 1.0f, 1.5f, 2.0f};
  CHECK(m::tv_dual_argument(px, py, 2, 2, 1, 1, 2.0f, 0.5f) == -8.0f);  // div p - v/theta
  CHECK(m::tv_primal(px, py, 2, 2, 1, 1, 2.0f, 0.5f) == 4.0f);          // v - theta div p
  CHECK(m::tv_primal(px, py, 2, 2, 0, 0, 1.0f, 2.0f) == -2.0f);
  // Dykstra: eps = f y, q = eps - y; a factor of 1 leaves q exactly 0 (the CUDA kernels rely on it).
  const m::DykstraPixel d = m::dykstra_pixel(3.0f, 0.5f);
  CHECK(d.eps == 1.5f);
  CHECK(d.q == -1.5f);
  const m::DykstraPixel one = m::dykstra_pixel(0.1f, 1.0f);
  CHECK(one.eps == 0.1f);
  CHECK(one.q == 0.0f);
}

TEST_CASE("the noise estimate recovers sigma under smooth structure") {
  const std::int64_t w = 256, h = 256;
  std::vector<float> f(static_cast<std::size_t>(w * h));
  std::mt19937 rng(9);
  for (double sigma : {1.0, 3.0, 10.0}) {
    std::normal_distribution<float> g(0.0f, static_cast<float>(sigma));
    for (std::int64_t y = 0; y < h; ++y)
      for (std::int64_t x = 0; x < w; ++x)
        f[y * w + x] = static_cast<float>(100 + 80 * std::sin(static_cast<double>(x) / 15.0) * std::cos(static_cast<double>(y) / 20.0)) + g(rng);
    CHECK(estimate_noise_sigma(f, w, h) == doctest::Approx(sigma).epsilon(0.05));
  }
}
