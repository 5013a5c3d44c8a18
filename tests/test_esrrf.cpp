// sofi esrrf: the published pieces against analytic answers (Catmull-Rom,
// Robert's cross, the radial gradient convergence of one Gaussian spot), the
// temporal analyses on constructed stacks, sliding windows, chunking, the
// SQUIRREL fit on a known blur, QnR, and the tool as a user runs it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/sofi/esrrf.hpp"
#include "nanoscopy/sofi/esrrf_cli.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
using esrrf_math::Temporal;
namespace fs = std::filesystem;

namespace {

std::string q(const fs::path& p) { return shell_quote(p.string()); }

// A Gaussian spot of std `s` centred at (cx, cy) (pixel k centred at k + 1/2), amplitude a, plus b.
std::vector<float> spot(std::int64_t w, std::int64_t h, double cx, double cy, double s, double a = 1000,
                        double b = 0) {
  std::vector<float> im(static_cast<std::size_t>(w * h));
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x) {
      const double dx = x + 0.5 - cx, dy = y + 0.5 - cy;
      im[static_cast<std::size_t>(y * w + x)] = static_cast<float>(b + a * std::exp(-(dx * dx + dy * dy) / (2 * s * s)));
    }
  return im;
}

void write_stack(const fs::path& path, std::int64_t w, std::int64_t h, const std::vector<std::vector<float>>& frames) {
  ImageMeta meta;
  meta.width = w;
  meta.height = h;
  meta.frames = static_cast<std::int64_t>(frames.size());
  meta.type = PixelType::f32;
  meta.pixel_size_nm = 100;
  auto writer = create_image_writer(path.string(), meta);
  for (const auto& f : frames) writer->write(f.data(), 1);
  writer->close();
}

std::vector<float> read_page(const fs::path& path, std::int64_t k, StackInfo* info = nullptr) {
  auto reader = open_stack(path.string());
  if (info) *info = reader->info();
  std::vector<float> v(static_cast<std::size_t>(reader->info().pixels_per_frame()));
  reader->read_float(k, 1, v.data());
  return v;
}

// Blinking random spots on a background: a small stack with fluctuations.
std::vector<std::vector<float>> blinking(std::int64_t w, std::int64_t h, int frames, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(2.0, static_cast<double>(w) - 2.0);
  std::vector<std::pair<double, double>> emitters;
  for (int i = 0; i < 8; ++i) emitters.emplace_back(u(rng), u(rng) * static_cast<double>(h) / static_cast<double>(w));
  std::bernoulli_distribution on(0.4);
  std::vector<std::vector<float>> out;
  for (int f = 0; f < frames; ++f) {
    std::vector<float> im(static_cast<std::size_t>(w * h), 100.0f);
    for (const auto& [x, y] : emitters) {
      if (!on(rng)) continue;
      const auto s = spot(w, h, x, y, 1.3, 800);
      for (std::size_t i = 0; i < im.size(); ++i) im[i] += s[i];
    }
    std::normal_distribution<double> noise(0.0, 5.0);
    for (auto& v : im) v += static_cast<float>(noise(rng));
    out.push_back(std::move(im));
  }
  return out;
}

// The images of a run over a stack file on the CPU engine.
std::vector<std::vector<float>> run_file(const fs::path& path, const EsrrfSettings& s,
                                         const std::vector<EsrrfSlot>& tps, std::int64_t chunk,
                                         bool macro = true) {
  auto reader = open_stack(path.string());
  const auto& info = reader->info();
  auto engine = make_cpu_esrrf_engine({info.width, info.height, esrrf_slots_needed(tps, chunk)}, s, chunk, 2);
  EsrrfRunInput in;
  in.reader = reader.get();
  in.read_threads = 1;
  in.chunk_frames = chunk;
  in.time_points = tps;
  in.macro_pixel_correction = macro;
  in.quiet = true;
  std::vector<std::vector<float>> images(tps.size());
  std::vector<std::size_t> order;
  run_esrrf(*engine, s, in, [&](EsrrfTimePoint& tp) {
    order.push_back(tp.index);
    images[tp.index] = tp.image;
  });
  CHECK(order.size() == tps.size());
  CHECK(std::is_sorted(order.begin(), order.end()));
  return images;
}

}  // namespace

TEST_CASE("Catmull-Rom: pixel centres reproduced, linear ramps exact, NanoPyx's sampling positions") {
  const std::int64_t w = 6, h = 5;
  std::vector<float> im(static_cast<std::size_t>(w * h));
  for (std::int64_t i = 0; i < w * h; ++i) im[static_cast<std::size_t>(i)] = static_cast<float>((i * 37) % 11);
  const int m = 2;
  const auto out = cr_magnify(im.data(), w, h, m);
  // Output pixel i samples i / M: odd i = 2 n + 1 lands on the centre of pixel n.
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x)
      CHECK(out[static_cast<std::size_t>((2 * y + 1) * w * m + 2 * x + 1)] ==
            doctest::Approx(im[static_cast<std::size_t>(y * w + x)]).epsilon(1e-6));
  // A ramp 3x + 2y (centres at k + 1/2) is reproduced exactly away from the border.
  const std::int64_t W = 12, H = 10;
  const int M = 5;
  std::vector<float> ramp(static_cast<std::size_t>(W * H));
  for (std::int64_t y = 0; y < H; ++y)
    for (std::int64_t x = 0; x < W; ++x) ramp[static_cast<std::size_t>(y * W + x)] = static_cast<float>(3 * (x + 0.5) + 2 * (y + 0.5));
  const auto big = cr_magnify(ramp.data(), W, H, M);
  for (std::int64_t y = 3 * M; y < (H - 3) * M; ++y)
    for (std::int64_t x = 3 * M; x < (W - 3) * M; ++x)
      CHECK(big[static_cast<std::size_t>(y * W * M + x)] ==
            doctest::Approx(3.0 * x / M + 2.0 * y / M).epsilon(1e-5));
  // Outside the image: 0.
  CHECK(esrrf_math::cr_interpolate(im.data(), h, w, -0.1f, 1.0f) == 0.0f);
  CHECK(esrrf_math::cr_interpolate(im.data(), h, w, 1.0f, static_cast<float>(w)) == 0.0f);
}

TEST_CASE("Robert's cross of a plane and the half-pixel gradient lattice") {
  const std::int64_t w = 9, h = 7;
  std::vector<float> plane(static_cast<std::size_t>(w * h));
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x) plane[static_cast<std::size_t>(y * w + x)] = static_cast<float>(1.5 * x - 0.5 * y + 4);
  for (std::int64_t y = 1; y < h; ++y)
    for (std::int64_t x = 1; x < w; ++x) {
      float gc = 0, gr = 0;
      esrrf_math::roberts_cross(plane.data(), w, y, x, &gc, &gr);
      CHECK(gc == doctest::Approx(3.0));   // 2 x d/dx
      CHECK(gr == doctest::Approx(-1.0));  // 2 x d/dy
    }
  // Lattice: even indices are the gradient pixels themselves (read where the corner-centred gradient lies),
  // odd ones the (-1, 9, 9, -1) / 16 midpoints.
  std::vector<float> im(static_cast<std::size_t>(w * h));
  std::mt19937 rng(3);
  for (auto& v : im) v = static_cast<float>(rng() % 100);
  std::vector<float> g2c, g2r;
  esrrf_lattices(im.data(), w, h, 5, g2c, g2r);
  std::vector<float> gc(im.size()), gr(im.size());
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x)
      esrrf_math::roberts_cross(im.data(), w, y, x, &gc[static_cast<std::size_t>(y * w + x)], &gr[static_cast<std::size_t>(y * w + x)]);
  const std::int64_t lw = 2 * w + 1;
  for (std::int64_t y = 2; y < h - 2; ++y)
    for (std::int64_t x = 2; x < w - 2; ++x) {
      CHECK(g2c[static_cast<std::size_t>(2 * y * lw + 2 * x)] == doctest::Approx(gc[static_cast<std::size_t>(y * w + x)]));
      const auto at = [&](std::int64_t yy, std::int64_t xx) { return static_cast<double>(gr[static_cast<std::size_t>(yy * w + xx)]); };
      const double mid = (-at(y, x - 1) + 9 * at(y, x) + 9 * at(y, x + 1) - at(y, x + 2)) / 16.0;  // column 2x+1, row 2y
      CHECK(g2r[static_cast<std::size_t>(2 * y * lw + 2 * x + 1)] == doctest::Approx(mid).epsilon(1e-5));
    }
}

TEST_CASE("RGC of one Gaussian spot: its peak, its value and its shape") {
  // A spot centred on pixel (12, 12), centre p = 12.5 in NanoPyx's coordinates.
  const std::int64_t n = 25;
  const int m = 5;
  const auto im = spot(n, n, 12.5, 12.5, 1.5);
  EsrrfSettings s;
  s.magnification = m;
  s.radius = 1.5;
  s.sensitivity = 1;
  s.intensity_weighting = false;
  const auto rgc = esrrf_rgc_map(im.data(), n, n, s);
  const std::int64_t nm = n * m;
  const auto peak = std::max_element(rgc.begin(), rgc.end()) - rgc.begin();
  // Derived: every gradient of a round spot points at its centre p = 12.5, which is the centre of output
  // pixel 62 ((62 + 1/2) / 5 = 12.5): there Dk = 1 for every lattice point (G x r = 0), so RGC = 1 (the
  // interpolated lattice keeps it just below), and nowhere else is it as high.
  CHECK(peak % nm == 62);
  CHECK(peak / nm == 62);
  CHECK(rgc[static_cast<std::size_t>(peak)] > 0.97f);
  CHECK(rgc[static_cast<std::size_t>(peak)] <= 1.0f);
  // Symmetric about the centre (x <-> y exactly; left <-> right up to the lattice's phase pattern, a few per cent),
  // and falling away from it.
  for (std::int64_t d = 1; d < 12; ++d) {
    const float a = rgc[static_cast<std::size_t>(62 * nm + 62 - d)], b = rgc[static_cast<std::size_t>(62 * nm + 62 + d)];
    CHECK(a == doctest::Approx(b).epsilon(0.03));
    CHECK(rgc[static_cast<std::size_t>((62 - d) * nm + 62)] == doctest::Approx(a).epsilon(1e-5));
  }
  for (std::int64_t d = 1; d < 8; ++d)
    CHECK(rgc[static_cast<std::size_t>(62 * nm + 62 - d)] < rgc[static_cast<std::size_t>(62 * nm + 62 - d + 1)]);
  {
    // A spot on the pixel corner p = 12 converges between output pixels 59 and 60 ((59.5 + 1/2) / 5 = 12).
    const auto corner = spot(n, n, 12.0, 12.0, 1.5);
    const auto r = esrrf_rgc_map(corner.data(), n, n, s);
    const auto k = std::max_element(r.begin(), r.end()) - r.begin();
    CHECK((k % nm == 59 || k % nm == 60));
    CHECK((k / nm == 59 || k / nm == 60));
    CHECK(r[static_cast<std::size_t>(k)] > 0.8f);
  }
  // Far from the spot the gradients point past the pixel: low convergence; the margin floor(R M) = 7 is 0.
  CHECK(rgc[static_cast<std::size_t>(20 * nm + 20)] < 0.25f * rgc[static_cast<std::size_t>(peak)]);
  CHECK(rgc[static_cast<std::size_t>(6 * nm + 60)] == 0.0f);
  CHECK(rgc[static_cast<std::size_t>(7 * nm + 60)] != 0.0f);
  // Sensitivity 2 squares it; intensity weighting multiplies by the magnified frame.
  EsrrfSettings s2 = s;
  s2.sensitivity = 2;
  const auto rgc2 = esrrf_rgc_map(im.data(), n, n, s2);
  CHECK(rgc2[static_cast<std::size_t>(peak)] == doctest::Approx(rgc[static_cast<std::size_t>(peak)] * rgc[static_cast<std::size_t>(peak)]).epsilon(1e-5));
  EsrrfSettings sw = s;
  sw.intensity_weighting = true;
  const auto weighted = esrrf_rgc_map(im.data(), n, n, sw);
  const auto mag = cr_magnify(im.data(), n, n, m);
  for (std::size_t i = 0; i < rgc.size(); i += 37)
    CHECK(weighted[i] == doctest::Approx(rgc[i] * mag[i]).epsilon(1e-5));
  // Radius 1 narrows the convergence peak.
  EsrrfSettings s1 = s;
  s1.radius = 1.0;
  const auto narrow = esrrf_rgc_map(im.data(), n, n, s1);
  auto width_at_half = [&](const std::vector<float>& r) {
    int count = 0;
    const float top = *std::max_element(r.begin(), r.end());
    for (std::int64_t x = 0; x < nm; ++x) count += r[static_cast<std::size_t>(62 * nm + x)] > 0.5f * top;
    return count;
  };
  CHECK(width_at_half(narrow) <= width_at_half(rgc));
}

TEST_CASE("temporal sums: AVG, VAR and TAC2 as NanoPyx defines them") {
  const std::vector<float> x{3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
  esrrf_math::TemporalState st{};
  for (std::size_t i = 0; i < x.size(); ++i) esrrf_math::temporal_add(st, x[i], i == 0);
  double mean = 0;
  for (float v : x) mean += v;
  mean /= static_cast<double>(x.size());
  double var = 0, tac = 0;
  for (std::size_t i = 0; i < x.size(); ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= static_cast<double>(x.size());
  for (std::size_t i = 0; i + 1 < x.size(); ++i) tac += (x[i] - mean) * (x[i + 1] - mean);
  tac /= static_cast<double>(x.size() - 1);
  const auto n = static_cast<std::int64_t>(x.size());
  CHECK(esrrf_math::temporal_value(st, n, Temporal::avg) == doctest::Approx(mean).epsilon(1e-6));
  CHECK(esrrf_math::temporal_value(st, n, Temporal::var) == doctest::Approx(var).epsilon(1e-6));
  CHECK(esrrf_math::temporal_value(st, n, Temporal::tac2) == doctest::Approx(tac).epsilon(1e-6));
}

TEST_CASE("AVG, VAR and TAC2 of an alternating stack: (a + b) / 2, ((a - b) / 2)^2, -((a - b) / 2)^2") {
  TempDir dir;
  const std::int64_t w = 14, h = 12;
  const auto a = spot(w, h, 6.2, 5.7, 1.4, 900, 50), b = spot(w, h, 8.1, 6.4, 1.4, 500, 50);
  std::vector<std::vector<float>> frames;
  for (int i = 0; i < 8; ++i) frames.push_back(i % 2 ? b : a);
  write_stack(dir / "alt.tif", w, h, frames);
  EsrrfSettings s;
  s.magnification = 3;
  const auto ra = esrrf_rgc_map(a.data(), w, h, s), rb = esrrf_rgc_map(b.data(), w, h, s);
  double top = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) top = std::max({top, static_cast<double>(ra[i]), static_cast<double>(rb[i])});
  REQUIRE(top > 0);
  for (const Temporal t : {Temporal::avg, Temporal::var, Temporal::tac2}) {
    s.temporal = t;
    const auto img = run_file(dir / "alt.tif", s, {{0, 8, 1}}, 3, false).front();
    double worst = 0, scale = 0;
    for (std::size_t i = 0; i < ra.size(); ++i) {
      const double d = (static_cast<double>(ra[i]) - rb[i]) / 2;
      const double want = t == Temporal::avg ? (static_cast<double>(ra[i]) + rb[i]) / 2 : t == Temporal::var ? d * d : -d * d;
      worst = std::max(worst, std::abs(img[i] - want));
      scale = std::max(scale, std::abs(want));
    }
    CAPTURE(static_cast<int>(t));
    REQUIRE(scale > 0);
    CHECK(worst <= 1e-4 * scale);
  }
}

TEST_CASE("time points: count and order of windows, sliding and cut") {
  auto starts = [](const std::vector<EsrrfSlot>& v) {
    std::vector<std::int64_t> out;
    for (const auto& t : v) out.push_back(t.begin), out.push_back(t.end);
    return out;
  };
  CHECK(starts(esrrf_time_points(0, 10, 0, 0)) == std::vector<std::int64_t>{0, 10});
  CHECK(starts(esrrf_time_points(0, 10, 3, 0)) == std::vector<std::int64_t>{0, 3, 3, 6, 6, 9, 9, 10});  // NanoPyx: ceil
  CHECK(starts(esrrf_time_points(0, 10, 4, 2)) == std::vector<std::int64_t>{0, 4, 2, 6, 4, 8, 6, 10});
  CHECK(starts(esrrf_time_points(5, 16, 4, 2)) == std::vector<std::int64_t>{5, 9, 7, 11, 9, 13, 11, 15, 13, 16});
  CHECK(starts(esrrf_time_points(0, 10, 20, 0)) == std::vector<std::int64_t>{0, 10});
  CHECK(esrrf_slots_needed(esrrf_time_points(0, 100, 10, 2), 7) >= 5);
  CHECK(esrrf_slots_needed(esrrf_time_points(0, 100, 10, 0), 64) == 1);
}

TEST_CASE("chunked = unchunked exactly, for one image and for a sliding window") {
  TempDir dir;
  const std::int64_t w = 16, h = 13;
  write_stack(dir / "b.tif", w, h, blinking(w, h, 23, 7));
  EsrrfSettings s;
  s.magnification = 4;
  s.temporal = Temporal::tac2;
  for (const auto& tps : {esrrf_time_points(0, 23, 0, 0), esrrf_time_points(0, 23, 6, 4), esrrf_time_points(2, 21, 5, 0)}) {
    const auto whole = run_file(dir / "b.tif", s, tps, 64);
    for (const std::int64_t chunk : {1, 3, 5}) {
      const auto parts = run_file(dir / "b.tif", s, tps, chunk);
      REQUIRE(parts.size() == whole.size());
      for (std::size_t k = 0; k < whole.size(); ++k) CHECK(parts[k] == whole[k]);
    }
  }
  // A sliding window's time point is the run over its frames alone.
  const auto series = run_file(dir / "b.tif", s, esrrf_time_points(0, 23, 6, 4), 5);
  const auto third = run_file(dir / "b.tif", s, {{8, 14, 1}}, 64);
  CHECK(series[2] == third[0]);
}

TEST_CASE("macro-pixel correction flattens a phase pattern and keeps the image mean") {
  const int m = 3;
  const std::int64_t wm = 12, hm = 9;
  std::vector<float> im(static_cast<std::size_t>(wm * hm));
  double mean = 0;
  for (std::int64_t y = 0; y < hm; ++y)
    for (std::int64_t x = 0; x < wm; ++x) {
      im[static_cast<std::size_t>(y * wm + x)] = static_cast<float>(10 * (1 + (x % m)) * (1 + 0.5 * (y % m)));
      mean += im[static_cast<std::size_t>(y * wm + x)];
    }
  mean /= static_cast<double>(im.size());
  macro_pixel_correct(im, wm, hm, m);
  for (const float v : im) CHECK(v == doctest::Approx(mean).epsilon(1e-5));
}

TEST_CASE("SQUIRREL: a known blur and intensity match are found") {
  const std::int64_t w = 40, h = 36;
  std::vector<float> sr(static_cast<std::size_t>(w * h), 0.0f);
  std::mt19937 rng(11);
  for (int i = 0; i < 25; ++i) sr[static_cast<std::size_t>((rng() % (h - 8) + 4) * w + rng() % (w - 8) + 4)] = 100.0f + static_cast<float>(rng() % 50);
  const double sigma = 1.2;  // inside the fit's range, up to 4 / 2.35482 M = 1.70 at M = 1
  auto ref = gaussian_blur(sr, w, h, sigma);
  for (auto& v : ref) v = 3.0f * v + 5.0f;
  const auto em = squirrel_error_map(ref, w, h, sr, 1);
  CHECK(em.sigma == doctest::Approx(sigma).epsilon(0.01));
  CHECK(em.alpha == doctest::Approx(3.0).epsilon(0.01));
  CHECK(em.beta == doctest::Approx(5.0).epsilon(0.01));
  CHECK(em.rsp > 0.9999);
  CHECK(em.rse < 0.01);
  CHECK(*std::max_element(em.map.begin(), em.map.end()) < 0.05f);
  // scipy's gaussian_filter: a constant stays constant (mirrored edges), the sum is kept inside.
  std::vector<float> flat(static_cast<std::size_t>(w * h), 7.0f);
  for (const float v : gaussian_blur(flat, w, h, 3.3)) CHECK(v == doctest::Approx(7.0f));
}

TEST_CASE("QnR: the logistic FRC score across a sweep and the harmonic mean") {
  const std::vector<double> res{2.0, 3.0, 4.0, std::nan("")};
  const auto n = logistic_resolution(res);
  CHECK(n[0] == doctest::Approx(0.925));
  CHECK(n[2] == doctest::Approx(0.075));
  CHECK(n[1] == doctest::Approx(0.5));
  CHECK(std::isnan(n[3]));
  const std::vector<double> rsp{0.9, 0.8, 0.95, 0.99};
  const auto qnr = qnr_scores(rsp, res);
  CHECK(qnr[0] == doctest::Approx(2 * 0.9 * 0.925 / (0.9 + 0.925)));
  CHECK(std::isnan(qnr[3]));
  CHECK(logistic_resolution(std::vector<double>{5.0, 5.0})[0] == doctest::Approx(0.5));
}

TEST_CASE("--sweep is parsed as ranges with steps") {
  EsrrfSettings s;
  const auto spec = parse_esrrf_sweep("radius=1:2:0.25,sensitivity=1:4", s);
  CHECK(spec.radii == std::vector<double>{1, 1.25, 1.5, 1.75, 2});
  CHECK(spec.sensitivities == std::vector<double>{1, 2, 3, 4});
  CHECK(parse_esrrf_sweep("sensitivity=2", s).radii == std::vector<double>{1.5});
  CHECK_THROWS_AS(parse_esrrf_sweep("radius=1:x", s), UsageError);
  CHECK_THROWS_AS(parse_esrrf_sweep("magnification=1:2", s), UsageError);
  CHECK_THROWS_AS(parse_esrrf_sweep("radius=2:1", s), UsageError);
}

TEST_CASE("sofi esrrf as a user runs it: image, preview, pixel size, time series, error map, sweep") {
  TempDir dir;
  const std::int64_t w = 20, h = 18;
  write_stack(dir / "blink.tif", w, h, blinking(w, h, 30, 5));
  auto r = run_tool("sofi", "esrrf " + q(dir / "blink.tif") + " -o " + q(dir / "e.tif") + " -m 3 -q");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  StackInfo info;
  const auto img = read_page(dir / "e.tif", 0, &info);
  CHECK(info.width == 60);
  CHECK(info.height == 54);
  CHECK(info.frames == 1);
  CHECK(info.pixel_size_nm == doctest::Approx(100.0 / 3));
  CHECK(fs::exists(dir / "e.png"));
  CHECK(*std::max_element(img.begin(), img.end()) > 0);
  // The same image from the library.
  EsrrfSettings s;
  s.magnification = 3;
  CHECK(run_file(dir / "blink.tif", s, {{0, 30, 1}}, 64).front() == img);
  // HDF5: the same image and pixel size.
  r = run_tool("sofi", "esrrf " + q(dir / "blink.tif") + " -o " + q(dir / "e.h5") + " -m 3 -q");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  StackInfo hinfo;
  CHECK(read_page(dir / "e.h5", 0, &hinfo) == img);
  CHECK(hinfo.pixel_size_nm == doctest::Approx(100.0 / 3));
  CHECK(fs::exists(dir / "e.png"));

  // A sliding window: pages in order, each the run over its own frames.
  r = run_tool("sofi", "esrrf " + q(dir / "blink.tif") + " -o " + q(dir / "t.tif") +
                           " -m 2 --frames-per-timepoint 10 --step 5 --temporal var -q");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  StackInfo tinfo;
  read_page(dir / "t.tif", 0, &tinfo);
  CHECK(tinfo.frames == 5);
  r = run_tool("sofi", "esrrf " + q(dir / "blink.tif") + " -o " + q(dir / "t3.tif") +
                           " -m 2 --frames 10:20 --temporal var -q");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(read_page(dir / "t.tif", 2) == read_page(dir / "t3.tif", 0));

  // Error map and sweep.
  r = run_tool("sofi", "esrrf " + q(dir / "blink.tif") + " -o " + q(dir / "s.tif") +
                           " -m 2 --error-map --sweep radius=1:2:0.5,sensitivity=1:2");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("<- best") != std::string::npos);
  CHECK(r.output.find("RSP") != std::string::npos);
  CHECK(fs::exists(dir / "s_errormap.tif"));
  CHECK(fs::exists(dir / "s_errormap.png"));
  std::ifstream csv(dir / "s_sweep.csv");
  std::string line;
  int lines = 0, best = 0;
  while (std::getline(csv, line)) ++lines, best += line.size() > 2 && line.substr(line.size() - 2) == ",1";
  CHECK(lines == 7);  // header + 3 radii x 2 sensitivities
  CHECK(best == 1);
}

TEST_CASE("sofi esrrf: bad input is one line naming the file, and nothing is left behind") {
  TempDir dir;
  auto one_line = [](const CommandResult& r, const std::string& fragment) {
    CAPTURE(r.output);
    CHECK(r.exit_code != 0);
    CHECK(r.output.find(fragment) != std::string::npos);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  };
  one_line(run_tool("sofi", "esrrf " + q(dir / "missing.tif") + " -o " + q(dir / "o.tif")), "missing.tif");
  {
    std::ofstream bad(dir / "bad.tif");
    bad << "not a tiff";
  }
  one_line(run_tool("sofi", "esrrf " + q(dir / "bad.tif") + " -o " + q(dir / "o.tif")), "bad.tif");
  write_stack(dir / "one.tif", 10, 10, {spot(10, 10, 5, 5, 1.3)});
  one_line(run_tool("sofi", "esrrf " + q(dir / "one.tif") + " -o " + q(dir / "o.tif") + " --temporal var"), "one.tif");
  one_line(run_tool("sofi", "esrrf " + q(dir / "one.tif") + " -o " + q(dir / "o.png")), "o.png");
  one_line(run_tool("sofi", "esrrf " + q(dir / "one.tif") + " -o " + q(dir / "o.tif") + " --sweep radius=a"), "--sweep");
  one_line(run_tool("sofi", "esrrf " + q(dir / "one.tif") + " -o " + q(dir / "o.tif") + " --step 3"), "--step");
  one_line(run_tool("sofi", "esrrf " + q(dir / "one.tif") + " -o " + q(dir / "o.tif") + " -m 0"), "magnification");
  std::vector<std::vector<float>> nan_frames{spot(10, 10, 5, 5, 1.3), spot(10, 10, 5, 5, 1.3)};
  nan_frames[1][17] = std::nanf("");
  write_stack(dir / "nan.tif", 10, 10, nan_frames);
  one_line(run_tool("sofi", "esrrf " + q(dir / "nan.tif") + " -o " + q(dir / "o.tif")), "nan.tif frame 1");
  CHECK_FALSE(fs::exists(dir / "o.tif"));
  CHECK_FALSE(fs::exists(dir / "o.png"));
  for (const auto& e : fs::directory_iterator(dir.path())) CHECK(e.path().filename().string().rfind("o.", 0) != 0);
}

TEST_CASE("sofi esrrf: parameter files round trip") {
  TempDir dir;
  auto r = run_tool("sofi", "esrrf --print-params -m 3 --radius 2 --temporal tac2");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("subsection eSRRF") != std::string::npos);
  {
    std::ofstream prm(dir / "e.prm");
    prm << r.output;
  }
  r = run_tool("sofi", "esrrf --params " + q(dir / "e.prm") + " --print-params");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("set magnification") != std::string::npos);
  CHECK(r.output.find("= 3") != std::string::npos);
  CHECK(r.output.find("= tac2") != std::string::npos);
  write_stack(dir / "b.tif", 12, 12, blinking(12, 12, 6, 2));
  r = run_tool("sofi", "esrrf " + q(dir / "b.tif") + " -o " + q(dir / "p.tif") + " --params " + q(dir / "e.prm") + " -q");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  StackInfo info;
  read_page(dir / "p.tif", 0, &info);
  CHECK(info.width == 36);
  // The same as the options.
  r = run_tool("sofi", "esrrf " + q(dir / "b.tif") + " -o " + q(dir / "o.tif") + " -m 3 --radius 2 --temporal tac2 -q");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(read_page(dir / "p.tif", 0) == read_page(dir / "o.tif", 0));
}

TEST_CASE("sofi esrrf --partial parts and sofi merge: the image of one run (AVG, VAR, TAC2, sliding window)") {
  TempDir dir;
  const std::int64_t w = 16, h = 14;
  write_stack(dir / "blink.tif", w, h, blinking(w, h, 30, 9));
  const std::string stack = q(dir / "blink.tif");
  for (const std::string extra : {"--temporal avg", "--temporal var", "--temporal tac2",
                                  "--temporal tac2 --frames-per-timepoint 10 --step 4"}) {
    CAPTURE(extra);
    const std::string opts = " -m 2 -q " + extra;
    auto r = run_tool("sofi", "esrrf " + stack + " -o " + q(dir / "one.tif") + opts);
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    // Cuts inside time points (7, 19) and on no boundary; parts given out of order.
    const char* ranges[] = {"0:7", "7:19", "19:30"};
    for (int i = 0; i < 3; ++i) {
      r = run_tool("sofi", "esrrf " + stack + " --frames " + ranges[i] + " --partial " +
                               q(dir / ("p" + std::to_string(i) + ".h5")) + opts);
      REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    }
    r = run_tool("sofi", "merge " + q(dir / "p2.h5") + " " + q(dir / "p0.h5") + " " + q(dir / "p1.h5") + " -o " +
                             q(dir / "merged.tif") + " -q");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    StackInfo a, b;
    read_page(dir / "one.tif", 0, &a);
    read_page(dir / "merged.tif", 0, &b);
    REQUIRE(a.frames == b.frames);
    CHECK(b.pixel_size_nm == doctest::Approx(a.pixel_size_nm));
    for (std::int64_t page = 0; page < a.frames; ++page) {
      const auto one = read_page(dir / "one.tif", page), merged = read_page(dir / "merged.tif", page);
      REQUIRE(one.size() == merged.size());
      float peak = 0, diff = 0;
      for (std::size_t i = 0; i < one.size(); ++i)
        peak = std::max(peak, std::abs(one[i])), diff = std::max(diff, std::abs(one[i] - merged[i]));
      CHECK(peak > 0);
      CHECK(diff <= 1e-5f * peak);
    }
  }
  // A missing part, and parts made with other settings: one line naming the file, no output.
  auto r = run_tool("sofi", "merge " + q(dir / "p0.h5") + " " + q(dir / "p2.h5") + " -o " + q(dir / "gap.tif") + " -q");
  CHECK(r.exit_code != 0);
  CHECK(r.output.find("p2.h5") != std::string::npos);
  CHECK(r.output.find("in no part") != std::string::npos);
  CHECK(!fs::exists(dir / "gap.tif"));
  r = run_tool("sofi", "esrrf " + stack + " --frames 0:7 --partial " + q(dir / "other.h5") + " -m 3 -q");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = run_tool("sofi", "merge " + q(dir / "other.h5") + " " + q(dir / "p1.h5") + " " + q(dir / "p2.h5") + " -o " +
                           q(dir / "mixed.tif") + " -q");
  CHECK(r.exit_code != 0);
  CHECK(r.output.find("other eSRRF settings") != std::string::npos);
  CHECK(!fs::exists(dir / "mixed.tif"));
}
