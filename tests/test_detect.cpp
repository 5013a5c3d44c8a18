// Spot detection (CPU reference) against simulated movies with known truth,
// brute-force filters, and hand-made frames (edges, NaN, saturation, sizes).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/loc/detect/detect.hpp"
#include "nanoscopy/loc/detect/detect_math.hpp"
#include "nanoscopy/loc/detect/engine.hpp"
#include "nanoscopy/sim/movie.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using nanoscopy::test::contains;
using nanoscopy::test::expect_error;

namespace {

struct Movie {
  std::vector<float> frames;
  std::int64_t count = 0;
  int width = 0, height = 0;
  std::vector<EmitterTruth> truth;
};

Movie simulate(const MovieSettings& m) {
  nanoscopy::test::TempDir dir;
  const std::string path = (dir / "movie.tif").string();
  Movie out;
  out.truth = simulate_movie(m, path);
  auto reader = open_stack(path);
  out.count = reader->info().frames;
  out.width = static_cast<int>(reader->info().width);
  out.height = static_cast<int>(reader->info().height);
  out.frames.resize(static_cast<std::size_t>(out.count * out.width * out.height));
  reader->read_float(0, out.count, out.frames.data());
  return out;
}

// A frame of constant background plus pixel-integrated Gaussian spots, Poisson noise.
struct Spot {
  double x, y, photons;
};
std::vector<float> spot_frame(int width, int height, const std::vector<Spot>& spots, double background,
                              std::uint64_t seed, double sigma = 1.3) {
  std::mt19937_64 rng(seed);
  std::vector<float> f(static_cast<std::size_t>(width * height));
  const auto integral = [&](int i, double mu) {
    const double s = std::sqrt(2.0) * sigma;
    return 0.5 * (std::erf((i - mu + 0.5) / s) - std::erf((i - mu - 0.5) / s));
  };
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      double e = background;
      for (const Spot& s : spots) e += s.photons * integral(x, s.x) * integral(y, s.y);
      f[static_cast<std::size_t>(y * width + x)] = static_cast<float>(std::poisson_distribution<std::int64_t>(e)(rng));
    }
  return f;
}

double distance(const Candidate& c, double x, double y) {
  return std::hypot(c.x - x, c.y - y);
}

// Direct 2D evaluation in double of the filter detect.hpp describes.
std::vector<double> brute_force_dog(const std::vector<float>& frame, int width, int height, double s1, double s2) {
  float lowest = std::numeric_limits<float>::infinity();
  for (float v : frame) lowest = std::min(lowest, v);
  const auto kernel = [](double s) {
    const int r = static_cast<int>(std::ceil(3 * s - 1e-9));
    std::vector<double> w(static_cast<std::size_t>(2 * r + 1));
    double sum = 0;
    for (int k = -r; k <= r; ++k) sum += w[static_cast<std::size_t>(k + r)] = std::exp(-0.5 * k * k / (s * s));
    for (double& v : w) v /= sum;
    return w;
  };
  const auto w1 = kernel(s1), w2 = kernel(s2);
  const auto smooth = [&](const std::vector<double>& w) {
    const int r = static_cast<int>(w.size() / 2);
    std::vector<double> out(frame.size());
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) {
        double acc = 0;
        for (int j = -r; j <= r; ++j)
          for (int i = -r; i <= r; ++i)
            acc += w[static_cast<std::size_t>(i + r)] * w[static_cast<std::size_t>(j + r)] *
                   (frame[static_cast<std::size_t>(detect_detail::reflect(y + j, height) * width +
                                                   detect_detail::reflect(x + i, width))] -
                    lowest);
        out[static_cast<std::size_t>(y * width + x)] = acc;
      }
    return out;
  };
  const auto a = smooth(w1), b = smooth(w2);
  std::vector<double> d(frame.size());
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = a[i] - b[i];
  return d;
}

}  // namespace

TEST_CASE("settings and frame sizes are checked") {
  DetectSettings s;
  s.box = 8;
  CHECK(contains(expect_error<UsageError>([&] { validate_detect_settings(s); }).message(), "odd"));
  s.box = 33;
  CHECK_THROWS_AS(validate_detect_settings(s), UsageError);
  s = {};
  s.dog_sigma2 = 0.5;
  CHECK_THROWS_AS(validate_detect_settings(s), UsageError);
  s = {};
  s.threshold = std::nan("");
  CHECK_THROWS_AS(validate_detect_settings(s), UsageError);
  s = {};
  CHECK_NOTHROW(validate_detect_settings(s));

  std::vector<float> small(5 * 6, 1.f);
  std::vector<Candidate> out;
  const auto e = expect_error<InputError>([&] { detect_cpu(small.data(), 0, 1, 5, 6, s, 1, out); });
  CAPTURE(e.message());
  CHECK(contains(e.message(), "5×6"));
  CHECK(contains(e.message(), "7×7"));
  CHECK(e.where().empty());  // the caller names the file
  // Exactly the box fits.
  std::vector<float> exact(7 * 7, 1.f);
  CHECK_NOTHROW(detect_cpu(exact.data(), 0, 1, 7, 7, s, 1, out));
  CHECK(out.empty());
}

TEST_CASE("the separable DoG equals a direct 2D evaluation; constant frames filter to exactly 0") {
  const int w = 23, h = 17;  // odd sizes, smaller than twice the wide kernel: repeated reflection
  std::vector<float> frame = spot_frame(w, h, {{3.2, 4.7, 900}, {20.5, 15.1, 500}}, 30, 7);
  DetectSettings s;
  std::vector<float> fast(frame.size());
  dog_filter_frame(frame.data(), w, h, s, fast.data());
  const auto slow = brute_force_dog(frame, w, h, s.dog_sigma1, s.dog_sigma2);
  const auto norm = dog_noise_normalization(w, h, s);
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < fast.size(); ++i) {
    worst = std::max(worst, std::abs(fast[i] - slow[i] * norm[i]));
    scale = std::max(scale, std::abs(slow[i]));
  }
  CHECK(scale > 10);
  CHECK(worst < 1e-5 * scale);

  // A 3-px-wide frame with the 17-tap kernel: still defined (reflection), no crash.
  std::vector<float> thin(3 * 40);
  for (std::size_t i = 0; i < thin.size(); ++i) thin[i] = static_cast<float>((i * 37) % 11);
  std::vector<float> thin_out(thin.size());
  dog_filter_frame(thin.data(), 3, 40, s, thin_out.data());
  const auto thin_slow = brute_force_dog(thin, 3, 40, s.dog_sigma1, s.dog_sigma2);
  const auto thin_norm = dog_noise_normalization(3, 40, s);
  for (std::size_t i = 0; i < thin.size(); ++i)
    CHECK(thin_out[i] == doctest::Approx(thin_slow[i] * thin_norm[i]).epsilon(1e-4).scale(1));

  std::vector<float> flat(static_cast<std::size_t>(w * h), 1234.5f), flat_out(flat.size());
  dog_filter_frame(flat.data(), w, h, s, flat_out.data());
  CHECK(std::all_of(flat_out.begin(), flat_out.end(), [](float v) { return v == 0.f; }));
  std::vector<Candidate> out;
  detect_cpu(flat.data(), 0, 1, w, h, s, 1, out);
  CHECK(out.empty());
}

TEST_CASE("after the edge normalization white noise has the same sd at the corner, the edge and inside") {
  const int w = 20, h = 18, frames = 4000;
  DetectSettings s;
  const auto norm = dog_noise_normalization(w, h, s);
  CHECK(norm[static_cast<std::size_t>(8 * w + 10)] == 1.f);  // 8 px (the wide kernel's radius) from every edge
  CHECK(norm[0] < 0.8f);                                     // the corner's noise is damped
  std::mt19937_64 rng(17);
  std::normal_distribution<float> g(100.f, 3.f);
  std::vector<float> frame(static_cast<std::size_t>(w * h)), out(frame.size());
  const std::size_t probes[] = {0, 5, static_cast<std::size_t>(7 * w), static_cast<std::size_t>(8 * w + 10),
                                static_cast<std::size_t>(h * w - 1)};
  double sum2[5] = {0, 0, 0, 0, 0}, sum[5] = {0, 0, 0, 0, 0};
  for (int f = 0; f < frames; ++f) {
    for (float& v : frame) v = g(rng);
    frame[1] = 0.f;  // the same minimum in every frame: the filter's offset is then the same
    dog_filter_frame(frame.data(), w, h, s, out.data());
    for (int k = 0; k < 5; ++k) {
      sum[k] += out[probes[k]];
      sum2[k] += static_cast<double>(out[probes[k]]) * out[probes[k]];
    }
  }
  double sd[5];
  for (int k = 0; k < 5; ++k) sd[k] = std::sqrt(sum2[k] / frames - (sum[k] / frames) * (sum[k] / frames));
  for (int k = 0; k < 5; ++k) {
    CAPTURE(k);
    CHECK(sd[k] == doctest::Approx(sd[3]).epsilon(0.06));
  }
}

TEST_CASE("robust noise sd: 1.4826·MAD of the finite values") {
  std::mt19937_64 rng(3);
  std::normal_distribution<float> g(10.f, 2.f);
  std::vector<float> v(200000);
  for (float& x : v) x = g(rng);
  for (int i = 0; i < 1000; ++i) v[static_cast<std::size_t>(i * 97)] = std::nanf("");
  v[5] = std::numeric_limits<float>::infinity();
  for (int i = 0; i < 2000; ++i) v[static_cast<std::size_t>(i * 89 + 1)] = 1e6f;  // 1 % outliers barely move it
  CHECK(robust_noise_sd(v.data(), static_cast<std::int64_t>(v.size())) == doctest::Approx(2.0).epsilon(0.03));
  const float exact[] = {1, 2, 3, 4, 100};  // median 3, deviations 2 1 0 1 97 → MAD 1
  CHECK(robust_noise_sd(exact, 5) == doctest::Approx(1.4826));
  // Exactly the lower medians of a sort, with ties, signs and both zeros.
  std::uniform_int_distribution<int> small(-40, 40);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<float> u(static_cast<std::size_t>(1 + trial * 517));
    for (float& x : u) x = static_cast<float>(small(rng)) * (trial % 2 ? 0.37f : 1e-3f);
    if (u.size() > 3) u[1] = -0.f;
    std::vector<float> sorted = u;
    std::sort(sorted.begin(), sorted.end());
    const float med = sorted[(sorted.size() - 1) / 2];
    for (float& x : sorted) x = std::fabs(x - med);
    std::sort(sorted.begin(), sorted.end());
    CHECK(robust_noise_sd(u.data(), static_cast<std::int64_t>(u.size())) ==
          static_cast<float>(1.4826 * sorted[(sorted.size() - 1) / 2]));
  }
  const float none[] = {std::nanf(""), std::nanf("")};
  CHECK(std::isnan(robust_noise_sd(none, 2)));
}

TEST_CASE("simulated movie: bright isolated emitters are found within 1 px, few false positives") {
  MovieSettings m;
  m.frames = 100;
  m.width = 128;
  m.height = 96;
  m.emitters = 60;
  m.on_fraction = 0.25;
  m.photons = 1500;
  m.background = 20;
  m.seed = 11;
  const Movie movie = simulate(m);
  REQUIRE(movie.count == m.frames);
  DetectSettings s;
  std::vector<Candidate> found;
  detect_cpu(movie.frames.data(), 0, movie.count, movie.width, movie.height, s, 2, found);

  // Sorted by (frame, y, x), more than box/2 apart within a frame.
  CHECK(std::is_sorted(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
    return a.frame != b.frame ? a.frame < b.frame : a.y != b.y ? a.y < b.y : a.x < b.x;
  }));
  for (std::size_t i = 0; i + 1 < found.size(); ++i)
    for (std::size_t j = i + 1; j < found.size() && found[j].frame == found[i].frame; ++j)
      CHECK(std::max(std::abs(found[i].x - found[j].x), std::abs(found[i].y - found[j].y)) > s.box / 2);

  std::vector<std::vector<const EmitterTruth*>> by_frame(static_cast<std::size_t>(m.frames));
  for (const auto& t : movie.truth) by_frame[static_cast<std::size_t>(t.frame)].push_back(&t);
  std::vector<std::vector<const Candidate*>> cand_by_frame(static_cast<std::size_t>(m.frames));
  for (const auto& c : found) cand_by_frame[static_cast<std::size_t>(c.frame)].push_back(&c);

  std::int64_t isolated = 0, recalled = 0;
  for (std::int64_t f = 0; f < m.frames; ++f) {
    const auto& ts = by_frame[static_cast<std::size_t>(f)];
    for (const EmitterTruth* t : ts) {
      bool alone = true;
      for (const EmitterTruth* u : ts)
        if (u != t && std::hypot(u->x - t->x, u->y - t->y) < 8) alone = false;
      if (!alone) continue;
      ++isolated;
      for (const Candidate* c : cand_by_frame[static_cast<std::size_t>(f)])
        if (distance(*c, t->x, t->y) <= 1.0) {
          ++recalled;
          CHECK(c->net_gradient > 0);
          CHECK(c->score > s.threshold);
          break;
        }
    }
  }
  std::int64_t false_positives = 0;
  for (const Candidate& c : found) {
    bool near = false;
    for (const EmitterTruth* t : by_frame[static_cast<std::size_t>(c.frame)])
      near = near || distance(c, t->x, t->y) <= 2.0;
    false_positives += near ? 0 : 1;
  }
  MESSAGE("isolated emitters " << isolated << ", recalled " << recalled << "; candidates " << found.size()
                               << ", false positives " << false_positives);
  REQUIRE(isolated > 300);
  CHECK(static_cast<double>(recalled) >= 0.95 * static_cast<double>(isolated));
  CHECK(static_cast<double>(false_positives) <= 0.05 * static_cast<double>(found.size()));

  // The detector interface gives the same; 1 thread gives the same as 2.
  std::vector<Candidate> again, serial;
  make_cpu_detect_engine(s, 2)->detect(movie.frames.data(), 0, movie.count, movie.width, movie.height, again);
  detect_cpu(movie.frames.data(), 0, movie.count, movie.width, movie.height, s, 1, serial);
  REQUIRE(again.size() == found.size());
  REQUIRE(serial.size() == found.size());
  for (std::size_t i = 0; i < found.size(); ++i) {
    CHECK(again[i].x == found[i].x);
    CHECK(serial[i].frame == found[i].frame);
    CHECK(serial[i].score == found[i].score);
    CHECK(serial[i].net_gradient == found[i].net_gradient);
  }
}

TEST_CASE("frames of background only give (almost) no candidates; constant frames none") {
  MovieSettings m;
  m.frames = 40;
  m.width = 128;
  m.height = 128;
  m.emitters = 0;
  m.background = 20;
  m.seed = 5;
  const Movie movie = simulate(m);
  std::vector<Candidate> found;
  // Filtered Poisson noise is slightly skewed: its tail beyond 5 sd is ~2.5× the
  // Gaussian one, about 1 false candidate per 10^6 px at the default threshold
  // (measured: 6 in 400 frames of 128² px). Expected here ≈ 0.6.
  detect_cpu(movie.frames.data(), 0, movie.count, movie.width, movie.height, DetectSettings{}, 2, found);
  MESSAGE(found.size() << " candidates in " << movie.count << " frames of noise");
  CHECK(found.size() <= 3);
  DetectSettings strict;
  strict.threshold = 8;
  detect_cpu(movie.frames.data(), 0, movie.count, movie.width, movie.height, strict, 2, found);
  CHECK(found.empty());
  // All-zero frames: exactly none.
  std::vector<float> zeros(static_cast<std::size_t>(3 * 32 * 32), 0.f);
  detect_cpu(zeros.data(), 0, 3, 32, 32, DetectSettings{}, 2, found);
  CHECK(found.empty());
}

TEST_CASE("a spot 1 px from the edge is found and its ROI is shifted inside the frame") {
  const int w = 48, h = 40;
  const std::vector<Spot> spots{{1.0, 20.3, 1500}, {46.2, 1.0, 1500}, {24.0, 38.8, 1500}, {0.2, 0.1, 1500}};
  const std::vector<float> frame = spot_frame(w, h, spots, 20, 9);
  std::vector<Candidate> found;
  DetectSettings s;
  detect_cpu(frame.data(), 7, 1, w, h, s, 1, found);
  CHECK(found.size() == spots.size());
  const auto rois = cut_rois<float>(frame.data(), 7, 1, w, h, found, s.box);
  for (const Spot& sp : spots) {
    CAPTURE(sp.x);
    CAPTURE(sp.y);
    // In a corner the mirrored images of the spot pull the filtered maximum inwards by up to 1 px.
    const double tolerance = sp.x < 0.5 && sp.y < 0.5 ? 1.5 : 1.0;
    const auto it = std::find_if(found.begin(), found.end(),
                                 [&](const Candidate& c) { return distance(c, sp.x, sp.y) <= tolerance; });
    REQUIRE(it != found.end());
    CHECK(it->frame == 7);
    const RoiOrigin o = rois.origins[static_cast<std::size_t>(it - found.begin())];
    CHECK(o.x0 >= 0);
    CHECK(o.y0 >= 0);
    CHECK(o.x0 + s.box <= w);
    CHECK(o.y0 + s.box <= h);
    CHECK(it->x >= o.x0);
    CHECK(it->x < o.x0 + s.box);
    CHECK(it->y >= o.y0);
    CHECK(it->y < o.y0 + s.box);
  }
  // border = 3 drops every maximum within 3 px of the edge: all four spots.
  s.border = 3;
  detect_cpu(frame.data(), 7, 1, w, h, s, 1, found);
  CHECK(found.empty());
}

TEST_CASE("NaN pixels silence their neighbourhood and never crash; saturated spots give one candidate") {
  const int w = 64, h = 48;
  std::vector<float> frame = spot_frame(w, h, {{12, 12, 1500}, {50, 30, 1500}, {30.4, 30.2, 1500}}, 20, 21);
  // NaN block touching the spot at (30, 30)
  for (int y = 26; y < 29; ++y)
    for (int x = 33; x < 36; ++x) frame[static_cast<std::size_t>(y * w + x)] = std::nanf("");
  // a saturated (clipped) spot: a plateau of equal raw values
  for (int y = 10; y < 15; ++y)
    for (int x = 48; x < 53; ++x) frame[static_cast<std::size_t>(y * w + x)] = 65535.f;
  std::vector<Candidate> found;
  const DetectSettings s;
  detect_cpu(frame.data(), 0, 1, w, h, s, 1, found);
  const auto near = [&](double x, double y) {
    return std::count_if(found.begin(), found.end(), [&](const Candidate& c) { return distance(c, x, y) <= 3; });
  };
  CHECK(near(12, 12) == 1);
  CHECK(near(50, 30) == 1);
  CHECK(near(50, 12) == 1);      // the saturated plateau
  CHECK(near(30.4, 30.2) == 0);  // next to NaN
  const auto rois = cut_rois<float>(frame.data(), 0, 1, w, h, found, s.box);
  for (float v : rois.pixels) CHECK(std::isfinite(v));
  for (const Candidate& c : found) {
    CHECK(std::isfinite(c.score));
    CHECK(std::isfinite(c.net_gradient));
  }

  // A frame of NaN only, and one with an infinity.
  std::vector<float> nan_frame(static_cast<std::size_t>(w * h), std::nanf(""));
  detect_cpu(nan_frame.data(), 0, 1, w, h, s, 1, found);
  CHECK(found.empty());
  frame[static_cast<std::size_t>(5 * w + 5)] = std::numeric_limits<float>::infinity();
  CHECK_NOTHROW(detect_cpu(frame.data(), 0, 1, w, h, s, 1, found));
  CHECK(near(5, 5) == 0);
}

TEST_CASE("cut_rois puts every pixel at its place, for float and uint16, ROIs shifted inside at the edges") {
  const int w = 40, h = 30, frames = 3;
  std::vector<float> f32(static_cast<std::size_t>(frames * w * h));
  std::vector<std::uint16_t> u16(f32.size());
  for (std::size_t i = 0; i < f32.size(); ++i) {
    f32[i] = static_cast<float>(i) + 0.25f;
    u16[i] = static_cast<std::uint16_t>(i);  // (frame·h + y)·w + x < 65536
  }
  const std::vector<Candidate> cands{
      {100, 0, 0, 1, 0}, {101, 39, 29, 1, 0}, {102, 20, 15, 1, 0}, {100, 1, 28, 1, 0}, {102, 38, 2, 1, 0}};
  for (int box : {3, 7, 29}) {
    CAPTURE(box);
    const auto a = cut_rois<float>(f32.data(), 100, frames, w, h, cands, box);
    const auto b = cut_rois<std::uint16_t>(u16.data(), 100, frames, w, h, cands, box);
    REQUIRE(a.pixels.size() == cands.size() * static_cast<std::size_t>(box * box));
    REQUIRE(b.pixels.size() == a.pixels.size());
    for (std::size_t k = 0; k < cands.size(); ++k) {
      const RoiOrigin o = a.origins[k];
      CHECK(o.x0 == b.origins[k].x0);
      CHECK(o.y0 == b.origins[k].y0);
      CHECK(o.x0 == std::clamp(cands[k].x - box / 2, 0, w - box));
      CHECK(o.y0 == std::clamp(cands[k].y - box / 2, 0, h - box));
      for (int j = 0; j < box; ++j)
        for (int i = 0; i < box; ++i) {
          const std::size_t at = k * static_cast<std::size_t>(box * box) + static_cast<std::size_t>(j * box + i);
          const auto expected = static_cast<std::uint16_t>(((cands[k].frame - 100) * h + o.y0 + j) * w + o.x0 + i);
          CHECK(b.pixels[at] == expected);
          CHECK(a.pixels[at] == static_cast<float>(expected) + 0.25f);
        }
    }
  }
  const std::vector<Candidate> outside{{103, 1, 1, 1, 0}};
  CHECK_THROWS_AS(cut_rois<float>(f32.data(), 100, frames, w, h, outside, 7), UsageError);
  CHECK_THROWS_AS(cut_rois<float>(f32.data(), 100, frames, 5, 5, cands, 7), InputError);
}

TEST_CASE("throughput on 256×256 frames (reported)") {
  MovieSettings m;
  m.frames = 200;
  m.width = 256;
  m.height = 256;
  m.emitters = 300;
  m.on_fraction = 0.07;  // ~20 spots per frame, as in the reference sheet's Picasso figure
  m.seed = 2;
  const Movie movie = simulate(m);
  std::vector<Candidate> found;
  for (int threads : {1, 2, 0}) {  // 0: every hardware thread
    detect_cpu(movie.frames.data(), 0, movie.count, 256, 256, DetectSettings{}, threads, found);  // warm-up
    const auto t0 = std::chrono::steady_clock::now();
    detect_cpu(movie.frames.data(), 0, movie.count, 256, 256, DetectSettings{}, threads, found);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    MESSAGE((threads ? std::to_string(threads) : std::string("all"))
            << " thread(s): " << static_cast<double>(movie.count) / s << " frames/s, "
            << static_cast<double>(found.size()) / static_cast<double>(movie.count) << " candidates/frame");
  }
  CHECK(!found.empty());
}

TEST_CASE("--min-net-gradient: exactly the candidates whose net gradient exceeds it, as Picasso's identify keeps") {
  MovieSettings m;
  m.frames = 20;
  m.width = 64;
  m.height = 64;
  m.emitters = 30;
  m.on_fraction = 0.3;
  m.photons = 1500;
  m.background = 20;
  m.seed = 5;
  const Movie movie = simulate(m);
  DetectSettings s;
  std::vector<Candidate> all, kept;
  detect_cpu(movie.frames.data(), 0, movie.count, movie.width, movie.height, s, 2, all);
  REQUIRE(all.size() > 20);
  // A threshold in the middle of the candidates' net gradients (camera counts, as Picasso's).
  std::vector<float> ng;
  for (const auto& c : all) ng.push_back(c.net_gradient);
  std::nth_element(ng.begin(), ng.begin() + static_cast<std::ptrdiff_t>(ng.size() / 2), ng.end());
  s.min_net_gradient = ng[ng.size() / 2];
  detect_cpu(movie.frames.data(), 0, movie.count, movie.width, movie.height, s, 2, kept);
  std::vector<Candidate> want;
  for (const auto& c : all)
    if (static_cast<double>(c.net_gradient) > s.min_net_gradient) want.push_back(c);  // strictly, as Picasso
  CHECK(kept.size() < all.size());
  REQUIRE(kept.size() == want.size());
  for (std::size_t i = 0; i < kept.size(); ++i) {
    CHECK(kept[i].frame == want[i].frame);
    CHECK(kept[i].x == want[i].x);
    CHECK(kept[i].y == want[i].y);
    CHECK(kept[i].net_gradient == want[i].net_gradient);
  }
  // 0 is off: every candidate, a negative net gradient included; a negative minimum is refused.
  s.min_net_gradient = 0;
  detect_cpu(movie.frames.data(), 0, movie.count, movie.width, movie.height, s, 2, kept);
  CHECK(kept.size() == all.size());
  s.min_net_gradient = -1;
  CHECK_THROWS_AS(validate_detect_settings(s), UsageError);
  // The float rule (no FP64 in the detection kernel) is the double one: ng > minimum exactly when ng > the
  // largest float at or below it, for a minimum that is a float and one that is not.
  for (const double minimum : {1000.0, 1000.0 + 1e-9, 5000.3, 1e-3}) {
    const float below = detect_detail::net_gradient_floor(minimum);
    CHECK(static_cast<double>(below) <= minimum);
    for (float ng = std::nextafter(below, 0.0f), k = 0; k < 4; ++k, ng = std::nextafter(ng, INFINITY))
      CHECK(detect_detail::passes_net_gradient(ng, below) == (static_cast<double>(ng) > minimum));
  }
}
