// SOFI math and streaming: golden values, brute-force joint cumulants, the
// emitter model, Poisson noise, chunking and merge invariance, cross-cumulants.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <span>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/sofi/cumulant_math.hpp"
#include "nanoscopy/sofi/merge.hpp"
#include "nanoscopy/sofi/runner.hpp"

using namespace nanoscopy;

namespace {

// A float32 stack held in memory.
class MemoryStack final : public StackReader {
 public:
  MemoryStack(std::int64_t w, std::int64_t h, std::vector<float> pixels) : pixels_(std::move(pixels)) {
    info_.width = w;
    info_.height = h;
    info_.frames = static_cast<std::int64_t>(pixels_.size()) / (w * h);
    info_.type = PixelType::f32;
    info_.path = "memory";
  }
  void read_raw(std::int64_t first, std::int64_t count, void* dst) override {
    const auto n = info_.pixels_per_frame();
    std::copy_n(pixels_.begin() + first * n, count * n, static_cast<float*>(dst));
  }

 private:
  std::vector<float> pixels_;
};

struct Run {
  SofiProblem plan;
  SofiAccumulation acc;
};

Run run(MemoryStack& stack, const SofiProblemOptions& options, std::int64_t block, std::int64_t chunk = 64,
        std::int64_t begin = 0, std::int64_t end = -1) {
  Run r{make_sofi_problem(stack.info().width, stack.info().height, options), {}};
  auto engine = make_cpu_sofi_engine(r.plan, chunk + r.plan.max_lag, 2);
  SofiRunInput in;
  in.reader = &stack;
  in.sequence = {0, 1, stack.info().frames};
  in.begin = begin;
  in.end = end < 0 ? stack.info().frames : end;
  in.block = block;
  in.quiet = true;
  r.acc = run_sofi(r.plan, *engine, in);
  return r;
}

SofiImages images(const Run& r) { return finish_images(r.plan, r.acc.finished); }

// Joint cumulant by its definition: the sum over set partitions of
// (-1)^(|pi|-1) (|pi|-1)! prod_B E[prod_{i in B} X_i], with moments taken as means over `n` samples;
// with `centred`, the X_i are taken as centred (on the block mean, by the caller): partitions with a
// singleton block are left out (Dertinger 2009, bSOFI, pysofi; problem.hpp).
double brute_cumulant(const std::vector<std::vector<double>>& x, bool centred = false) {
  const int order = static_cast<int>(x.size());
  const std::size_t n = x[0].size();
  auto moment = [&](const std::vector<int>& block) {
    double s = 0;
    for (std::size_t t = 0; t < n; ++t) {
      double p = 1;
      for (int i : block) p *= x[static_cast<std::size_t>(i)][t];
      s += p;
    }
    return s / static_cast<double>(n);
  };
  double total = 0;
  std::vector<std::vector<int>> blocks;
  std::function<void(int)> partitions = [&](int i) {
    if (i == order) {
      if (centred && std::any_of(blocks.begin(), blocks.end(), [](const auto& b) { return b.size() == 1; })) return;
      double term = 1;
      for (auto& b : blocks) term *= moment(b);
      const double k = static_cast<double>(blocks.size());
      total += ((blocks.size() % 2) ? 1.0 : -1.0) * std::tgamma(k) * term;
      return;
    }
    for (std::size_t b = 0; b < blocks.size(); ++b) {  // by index: the recursion grows `blocks`
      blocks[b].push_back(i);
      partitions(i + 1);
      blocks[b].pop_back();
    }
    blocks.push_back({i});
    partitions(i + 1);
    blocks.pop_back();
  };
  partitions(0);
  return total;
}

}  // namespace

TEST_CASE("joint_cumulant: pysofi golden values for the series 0, 0, 0, 5, 5") {
  MemoryStack stack(1, 1, {0, 0, 0, 5, 5});
  SofiProblemOptions o;
  o.orders = {2, 3, 4};
  o.lags = {0, 0, 0, 0};
  o.allow_repeated_lags = true;
  o.moments = true;
  auto m = images(run(stack, o, 5));
  CHECK(m.planes[0][0] == doctest::Approx(6));
  CHECK(m.planes[1][0] == doctest::Approx(6));
  CHECK(m.planes[2][0] == doctest::Approx(42));
  CHECK(m.mean[0] == doctest::Approx(2));
  o.moments = false;
  auto k = images(run(stack, o, 5));
  CHECK(k.planes[0][0] == doctest::Approx(6));
  CHECK(k.planes[1][0] == doctest::Approx(6));
  CHECK(k.planes[2][0] == doctest::Approx(-66));
}

TEST_CASE("block_frame_total: K n + the block's sum of F - K (shared by the CPU engine and the kernels)") {
  CHECK(sofi_math::block_frame_total(2.5f, 4.0, 1.0) == 11.0);
  CHECK(sofi_math::block_frame_total(0.0f, 7.0, -3.25) == -3.25);
  CHECK(sofi_math::block_frame_total(100.0f, 3.0, 0.5) == 300.5);
}

TEST_CASE("joint_cumulant matches the closed forms of notes 5 for zero lag") {
  // kappa4 = mu4 - 3 mu2^2, kappa5 = mu5 - 10 mu2 mu3, kappa6 = mu6 - 15 mu2 mu4 - 10 mu3^2 + 30 mu2^3
  const double mu[7] = {1, 0, 1.7, -0.4, 9.1, 2.3, 40.2};
  double m[64], kappa[64];
  for (int n = 2; n <= 6; ++n) {
    for (int u = 0; u < (1 << n); ++u) m[u] = mu[__builtin_popcount(static_cast<unsigned>(u))];
    const double k = sofi_math::joint_cumulant(m, n, kappa);
    double expect = 0;
    if (n == 2) expect = mu[2];
    if (n == 3) expect = mu[3];
    if (n == 4) expect = mu[4] - 3 * mu[2] * mu[2];
    if (n == 5) expect = mu[5] - 10 * mu[2] * mu[3];
    if (n == 6) expect = mu[6] - 15 * mu[2] * mu[4] - 10 * mu[3] * mu[3] + 30 * std::pow(mu[2], 3);
    CHECK(k == doctest::Approx(expect).epsilon(1e-12));
  }
}

namespace {

// The estimator by its definition, in double, straight from the frames (problem.hpp):
// per block [b0, b1), X_i(t) = F(t + l_i) - <F>_block (the mean over all b1 - b0 frames)
// for t in the order's own window [b0, b1 - max_i l_i), cumulant over the partitions
// without singletons (or, with `moments`, the mean of prod X_i); blocks averaged.
double brute_estimate(const std::vector<float>& px, std::int64_t pixels, std::int64_t p, std::int64_t frames,
                      std::int64_t block, std::span<const int> lags, bool moments = false) {
  const int window = *std::max_element(lags.begin(), lags.end());
  const std::int64_t blocks = frames / block;
  double sum = 0;
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t b0 = b * block, b1 = b + 1 == blocks ? frames : b0 + block;
    double mean = 0;
    for (std::int64_t t = b0; t < b1; ++t) mean += px[static_cast<std::size_t>(t * pixels + p)];
    mean /= static_cast<double>(b1 - b0);
    std::vector<std::vector<double>> x(lags.size());
    for (std::size_t i = 0; i < lags.size(); ++i)
      for (std::int64_t t = b0; t + window < b1; ++t)
        x[i].push_back(px[static_cast<std::size_t>((t + lags[i]) * pixels + p)] - mean);
    if (moments) {
      double m = 0;
      for (std::size_t t = 0; t < x[0].size(); ++t) {
        double prod = 1;
        for (const auto& xi : x) prod *= xi[t];
        m += prod;
      }
      sum += m / static_cast<double>(x[0].size());
    } else {
      sum += brute_cumulant(x, true);
    }
  }
  return sum / static_cast<double>(blocks);
}

}  // namespace

TEST_CASE("orders 2-6 with distinct lags equal the block-mean-centred cumulant, brute force in double") {
  // Lags 0, 2, 3, 7, 8, 11: order n's window leaves its own largest lag (2, 3, 7, 8, 11) at the block's end.
  std::mt19937_64 rng(7);
  std::gamma_distribution<double> gamma(2.0, 40.0);
  const std::int64_t w = 3, h = 2, frames = 250;
  std::vector<float> px(static_cast<std::size_t>(w * h * frames));
  for (auto& v : px) v = static_cast<float>(100 + gamma(rng));
  MemoryStack stack(w, h, px);
  SofiProblemOptions o;
  o.orders = {2, 3, 4, 5, 6};
  o.lags = {0, 2, 3, 7, 8, 11};
  const std::int64_t block = 120;  // 2 blocks, the last of 130
  for (bool moments : {false, true}) {
    o.moments = moments;
    auto img = images(run(stack, o, block, 17));
    for (std::int64_t p = 0; p < w * h; ++p)
      for (int oi = 0; oi < 5; ++oi) {
        const int n = oi + 2;
        const double expect =
            brute_estimate(px, w * h, p, frames, block, std::span<const int>(o.lags).first(static_cast<std::size_t>(n)), moments);
        CAPTURE(moments);
        CAPTURE(n);
        CAPTURE(p);
        CHECK(img.planes[static_cast<std::size_t>(oi)][static_cast<std::size_t>(p)] ==
              doctest::Approx(expect).epsilon(1e-6));  // float output of double sums
      }
  }
}

// Pixels that blink independently (on/off flipped with probability `flip` per frame, `on(p)` photons when
// on) over Poisson noise of mean `noise`, frame-major.
template <class On>
std::vector<float> blinking_pixels(std::int64_t pixels, std::int64_t frames, std::uint64_t seed, int noise, double flip,
                                   On on) {
  std::mt19937_64 rng(seed);
  std::poisson_distribution<int> poisson(noise);
  std::bernoulli_distribution flips(flip);
  std::vector<float> px(static_cast<std::size_t>(pixels * frames));
  std::vector<bool> state(static_cast<std::size_t>(pixels));
  for (std::int64_t t = 0; t < frames; ++t)
    for (std::int64_t p = 0; p < pixels; ++p) {
      if (flips(rng)) state[static_cast<std::size_t>(p)] = !state[static_cast<std::size_t>(p)];
      px[static_cast<std::size_t>(t * pixels + p)] =
          static_cast<float>(poisson(rng) + (state[static_cast<std::size_t>(p)] ? on(p) : 0));
    }
  return px;
}

TEST_CASE("orders 3 and 4 with the default lags equal the block-mean-centred cumulant on a blinking stack") {
  // Default lags 0..3; the blinking makes the third and fourth cumulants large, and the
  // window mean differs from the block mean: the earlier estimator (each factor on its
  // window's mean, one window for all orders) missed this by up to several per cent.
  const std::int64_t w = 4, h = 3, frames = 300, block = 100;
  const std::vector<float> px = blinking_pixels(w * h, frames, 21, 60, 0.1, [](std::int64_t p) { return 400 + 10 * p; });
  MemoryStack stack(w, h, px);
  SofiProblemOptions o;
  o.orders = {2, 3, 4};
  const auto img = images(run(stack, o, block, 23));
  const std::vector<int> lags = {0, 1, 2, 3};
  for (std::int64_t p = 0; p < w * h; ++p)
    for (int n = 2; n <= 4; ++n) {
      const double expect =
          brute_estimate(px, w * h, p, frames, block, std::span<const int>(lags).first(static_cast<std::size_t>(n)));
      CAPTURE(n);
      CAPTURE(p);
      CHECK(img.planes[static_cast<std::size_t>(n - 2)][static_cast<std::size_t>(p)] ==
            doctest::Approx(expect).epsilon(1e-6));
    }
}

TEST_CASE("an order's image is bit-identical whether it is asked for alone or with other orders") {
  const std::int64_t w = 6, h = 5, frames = 430, block = 140;  // 3 blocks, the last of 150
  const std::vector<float> px = blinking_pixels(w * h, frames, 17, 150, 0.2, [](std::int64_t) { return 800; });
  MemoryStack stack(w, h, px);
  struct Ask {
    std::vector<int> lags;
    bool cross, moments;
  };
  for (const Ask& ask : {Ask{{}, false, false}, Ask{{0, 2, 5, 7, 9, 10}, false, false}, Ask{{}, false, true},
                         Ask{{}, true, false}}) {
    const std::vector<int> all = ask.cross ? std::vector<int>{2, 3, 4} : std::vector<int>{2, 3, 4, 5, 6};
    SofiProblemOptions together;
    together.orders = all;
    together.lags = ask.lags;
    together.cross = ask.cross;
    together.moments = ask.moments;
    // (the same chunk steps: sums are grouped per chunk, as sofi groups them for any orders)
    for (std::int64_t chunk : {37, 500}) {
      const auto with_others = images(run(stack, together, block, chunk));
      for (std::size_t i = 0; i < all.size(); ++i) {
        SofiProblemOptions alone = together;
        alone.orders = {all[i]};
        if (!ask.lags.empty()) alone.lags.resize(static_cast<std::size_t>(all[i]));  // only its own lags
        const auto single = images(run(stack, alone, block, chunk));
        CAPTURE(ask.cross);
        CAPTURE(ask.moments);
        CAPTURE(ask.lags.size());
        CAPTURE(all[i]);
        CAPTURE(chunk);
        CHECK(single.planes[0] == with_others.planes[i]);
      }
      // and a different companion: orders 2 and 3 alone equal orders 2 and 3 among 2..6
      SofiProblemOptions pair = together;
      pair.orders = {2, 3};
      if (!ask.lags.empty()) pair.lags.resize(3);
      const auto two = images(run(stack, pair, block, chunk));
      CHECK(two.planes[0] == with_others.planes[0]);
      CHECK(two.planes[1] == with_others.planes[1]);
    }
  }
}

TEST_CASE("a single blinking emitter follows the emitter model w_n(rho)") {
  // Independent on/off per frame (zero lag, test-only repeated lags), no noise:
  // AC_n(r) = U(r)^n eps^n w_n(rho).
  const double rho = 0.3, eps = 10.0, sigma = 1.2;
  const std::int64_t w = 5, h = 5, frames = 400000;
  std::mt19937_64 rng(3);
  std::bernoulli_distribution on(rho);
  std::vector<float> px(static_cast<std::size_t>(w * h * frames));
  auto psf = [&](std::int64_t ix, std::int64_t iy) {
    const double x = static_cast<double>(ix) - 2.0, y = static_cast<double>(iy) - 2.0;
    return std::exp(-(x * x + y * y) / (2 * sigma * sigma));
  };
  for (std::int64_t t = 0; t < frames; ++t) {
    const bool s = on(rng);
    for (std::int64_t y = 0; y < h; ++y)
      for (std::int64_t x = 0; x < w; ++x) px[static_cast<std::size_t>(t * w * h + y * w + x)] = s ? static_cast<float>(eps * psf(x, y)) : 0.0f;
  }
  MemoryStack stack(w, h, px);
  SofiProblemOptions o;
  o.orders = {2, 3, 4, 5, 6};
  o.lags = {0, 0, 0, 0, 0, 0};
  o.allow_repeated_lags = true;
  auto img = images(run(stack, o, frames, 4096));
  const double r = rho, q = 1 - rho;
  const double wn[7] = {0, 0, r * q, r * q * (1 - 2 * r), r * q * (1 - 6 * r + 6 * r * r),
                        r * q * (1 - 2 * r) * (1 - 12 * r + 12 * r * r),
                        r * q * (1 - 30 * r + 150 * r * r - 240 * r * r * r + 120 * r * r * r * r)};
  for (int n = 2; n <= 6; ++n)
    for (std::int64_t y = 0; y < h; ++y)
      for (std::int64_t x = 1; x < w; x += 2) {
        const double expect = std::pow(eps * psf(x, y), n) * wn[n];
        const double scale = std::pow(eps * psf(x, y), n) * r * q;  // the size of the statistical error
        CAPTURE(n);
        CHECK(std::abs(img.planes[static_cast<std::size_t>(n - 2)][static_cast<std::size_t>(y * w + x)] - expect) <
              0.03 * scale);
      }
}

TEST_CASE("Poisson noise alone: zero-lag cumulants equal lambda, lagged ones vanish") {
  const double lambda = 200;
  const std::int64_t w = 4, h = 4, frames = 60000;
  std::mt19937_64 rng(11);
  std::poisson_distribution<int> poisson(lambda);
  std::vector<float> px(static_cast<std::size_t>(w * h * frames));
  for (auto& v : px) v = static_cast<float>(poisson(rng));
  MemoryStack stack(w, h, px);
  SofiProblemOptions zero;
  zero.orders = {2, 3};
  zero.lags = {0, 0, 0};
  zero.allow_repeated_lags = true;
  auto z = images(run(stack, zero, 6000, 1000));
  SofiProblemOptions lagged;
  lagged.orders = {2, 3, 4};
  auto l = images(run(stack, lagged, 6000, 1000));
  for (std::int64_t p = 0; p < w * h; ++p) {
    CHECK(z.planes[0][static_cast<std::size_t>(p)] == doctest::Approx(lambda).epsilon(0.03));
    // third cumulant: standard error sqrt(6 lambda^3 / N) = 28
    CHECK(std::abs(z.planes[1][static_cast<std::size_t>(p)] - lambda) < 5 * std::sqrt(6 * std::pow(lambda, 3) / 60000.0));
    // standard errors: sqrt(lambda^n / N) with N = 60000 -> 0.8, 11, 170
    CHECK(std::abs(l.planes[0][static_cast<std::size_t>(p)]) < 5 * std::sqrt(std::pow(lambda, 2) / 60000.0));
    CHECK(std::abs(l.planes[1][static_cast<std::size_t>(p)]) < 5 * std::sqrt(std::pow(lambda, 3) / 60000.0));
    CHECK(std::abs(l.planes[2][static_cast<std::size_t>(p)]) < 5 * std::sqrt(3 * std::pow(lambda, 4) / 60000.0));
  }
}

namespace {
std::vector<float> random_blinking(std::int64_t w, std::int64_t h, std::int64_t frames, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::poisson_distribution<int> noise(150);
  std::bernoulli_distribution flip(0.2);
  std::vector<float> px(static_cast<std::size_t>(w * h * frames));
  std::vector<bool> state(static_cast<std::size_t>(w * h));
  for (std::int64_t t = 0; t < frames; ++t)
    for (std::int64_t p = 0; p < w * h; ++p) {
      if (flip(rng)) state[static_cast<std::size_t>(p)] = !state[static_cast<std::size_t>(p)];
      px[static_cast<std::size_t>(t * w * h + p)] = static_cast<float>(noise(rng) + (state[static_cast<std::size_t>(p)] ? 800 : 0));
    }
  return px;
}

double max_rel_diff(const SofiImages& a, const SofiImages& b) {
  double worst = 0;
  for (std::size_t p = 0; p < a.planes.size(); ++p) {
    double scale = 0;
    for (float v : a.planes[p]) scale = std::max(scale, std::abs(static_cast<double>(v)));
    for (std::size_t i = 0; i < a.planes[p].size(); ++i)
      worst = std::max(worst, std::abs(static_cast<double>(a.planes[p][i]) - b.planes[p][i]) / scale);
  }
  return worst;
}
}  // namespace

TEST_CASE("the result does not depend on the chunking, and partial runs merge to the same image in any order") {
  const std::int64_t w = 9, h = 7, frames = 1030, block = 200;  // 5 blocks, the last of 230
  MemoryStack stack(w, h, random_blinking(w, h, frames, 5));
  SofiProblemOptions o;
  o.orders = {2, 3, 4, 5, 6};
  const auto whole = run(stack, o, block, 500);
  const auto ref = images(whole);
  CHECK(ref.blocks == 5);
  CHECK(ref.frames == frames);
  for (std::int64_t chunk : {7, 64, 333}) CHECK(max_rel_diff(ref, images(run(stack, o, block, chunk))) < 1e-9);

  // partial ranges cutting blocks (and cutting a block's last max_lag frames off)
  const std::vector<std::int64_t> cuts = {0, 150, 398, 599, 601, 1030};
  std::vector<Run> parts;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) parts.push_back(run(stack, o, block, 64, cuts[i], cuts[i + 1]));
  for (auto order : {std::vector<int>{0, 1, 2, 3, 4}, std::vector<int>{4, 2, 0, 3, 1}}) {
    SofiAccumulation total;
    total.finished.reset(whole.plan);
    for (int i : order) {
      auto copy = parts[static_cast<std::size_t>(i)].acc;
      merge_accumulation(total, std::move(copy), "part " + std::to_string(i));
    }
    close_open_blocks(whole.plan, SofiBlocks{frames, block}, total, "merge", 2);
    CHECK(max_rel_diff(ref, finish_images(whole.plan, total.finished)) < 1e-9);
  }
  // a missing range is reported
  SofiAccumulation gap;
  gap.finished.reset(whole.plan);
  for (std::size_t i : {0u, 1u, 3u, 4u}) {
    auto copy = parts[i].acc;
    merge_accumulation(gap, std::move(copy), "part");
  }
  CHECK_THROWS_AS(close_open_blocks(whole.plan, SofiBlocks{frames, block}, gap, "merge", 2), InputError);
}

TEST_CASE("cross-cumulants of one blinking emitter sit on the finer grid with the distance factor") {
  // A sampled Gaussian PSF makes U(r1) U(r2) = U^2(centroid) exp(-|r1-r2|^2 / (4 sigma^2)) exact,
  // so the corrected cross-cumulant equals U^n(virtual pixel) eps^n w_n (zero lag: independent frames).
  const double rho = 0.4, eps = 20.0, sigma = 1.4, ex = 4.3, ey = 3.6;
  const std::int64_t w = 9, h = 8, frames = 200000;
  auto psf = [&](double x, double y) { return std::exp(-((x - ex) * (x - ex) + (y - ey) * (y - ey)) / (2 * sigma * sigma)); };
  std::mt19937_64 rng(13);
  std::bernoulli_distribution on(rho);
  std::vector<float> px(static_cast<std::size_t>(w * h * frames));
  for (std::int64_t t = 0; t < frames; ++t) {
    const bool s = on(rng);
    for (std::int64_t y = 0; y < h; ++y)
      for (std::int64_t x = 0; x < w; ++x)
        px[static_cast<std::size_t>(t * w * h + y * w + x)] = s ? static_cast<float>(eps * psf(static_cast<double>(x), static_cast<double>(y))) : 0.0f;
  }
  MemoryStack stack(w, h, px);
  SofiProblemOptions o;
  o.orders = {2, 3};
  o.cross = true;
  o.psf_sigma = sigma;
  const auto r = run(stack, o, frames, 8192);
  const auto img = images(r);
  const double wn[4] = {0, 0, rho * (1 - rho), rho * (1 - rho) * (1 - 2 * rho)};
  for (int oi = 0; oi < 2; ++oi) {
    const int n = oi + 2;
    const std::int64_t W = w * n;
    CHECK(r.plan.plane_width(oi) == W);
    for (std::int64_t Y = 2 * n; Y < (h - 2) * n; ++Y)
      for (std::int64_t X = 2 * n; X < (w - 2) * n; ++X) {
        const double vx = static_cast<double>(X) / n, vy = static_cast<double>(Y) / n;
        const double expect = std::pow(eps * psf(vx, vy), n) * wn[n];
        CAPTURE(n);
        CAPTURE(X);
        CAPTURE(Y);
        CHECK(std::abs(img.planes[static_cast<std::size_t>(oi)][static_cast<std::size_t>(Y * W + X)] - expect) <
              0.02 * std::pow(eps, n) * rho * (1 - rho) + 1e-6);
      }
  }
}

TEST_CASE("plan validation: orders, lags, blocks") {
  SofiProblemOptions o;
  o.orders = {9};
  CHECK_THROWS_AS(make_sofi_problem(8, 8, o), UsageError);
  o.orders = {1};
  CHECK_THROWS_AS(make_sofi_problem(8, 8, o), UsageError);
  o.orders = {2, 3};
  o.lags = {0, 1, 1};
  CHECK_THROWS_AS(make_sofi_problem(8, 8, o), UsageError);
  o.lags = {0, 1};
  CHECK_THROWS_AS(make_sofi_problem(8, 8, o), UsageError);  // order 3 needs 3 lags
  o.lags = {};
  o.cross = true;
  o.orders = {5};
  CHECK_THROWS_AS(make_sofi_problem(8, 8, o), UsageError);
  CHECK_THROWS_AS(check_blocks(SofiBlocks{100, 500}, 3, "s.tif"), InputError);
  CHECK_THROWS_AS(check_blocks(SofiBlocks{1000, 3}, 3, "s.tif"), UsageError);
  // default lags: order n sums the 2^n - 1 non-empty subsets of its lags 0..n-1 over its own
  // window (block end - (n - 1)): 3 + 7 + 15 terms for orders 2..4
  SofiProblemOptions d;
  const auto plan = make_sofi_problem(8, 8, d);
  CHECK(plan.terms.size() == 25);
  CHECK(plan.max_lag == 3);
  CHECK(plan.min_window == 1);
  for (const auto& c : plan.combos) CHECK(c.window == c.order - 1);
  // cross-cumulants: zero lag, every order over the whole block
  SofiProblemOptions x;
  x.cross = true;
  const auto cross = make_sofi_problem(8, 8, x);
  CHECK(cross.max_lag == 0);
  CHECK(cross.min_window == 0);
}
