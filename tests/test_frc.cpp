// frc: the CPU reference against definitions (an image with itself, the
// threshold formulas, a brute-force DFT ring sum), its behaviour on simulated
// pairs with known band limits, localization splitting and rendering, the
// PNG plot, and the CLI end to end with its errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numbers>
#include <random>
#include <set>
#include <sstream>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/frc/frc.hpp"
#include "nanoscopy/frc/frc_math.hpp"
#include "nanoscopy/frc/loc_render.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/plot_png.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

std::vector<float> random_image(std::int64_t w, std::int64_t h, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g(10.0f, 3.0f);
  std::vector<float> v(static_cast<std::size_t>(w * h));
  for (float& x : v) x = g(rng);
  return v;
}

FrcGeometry geometry(std::int64_t w, std::int64_t h) {
  FrcGeometry g;
  g.width = w;
  g.height = h;
  return g;
}

// A random structure: sparse bright points blurred by a Gaussian of sigma px, on a background.
std::vector<float> blurred_structure(std::int64_t n, double sigma, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(static_cast<std::size_t>(n * n), 0.0);
  std::uniform_int_distribution<std::int64_t> at(0, n * n - 1);
  for (int i = 0; i < static_cast<int>(n * n / 20); ++i) v[static_cast<std::size_t>(at(rng))] += 100.0;
  const int r = static_cast<int>(std::ceil(4 * sigma));
  std::vector<double> k(static_cast<std::size_t>(2 * r + 1));
  double ks = 0;
  for (int i = -r; i <= r; ++i) ks += k[static_cast<std::size_t>(i + r)] = std::exp(-0.5 * i * i / (sigma * sigma));
  for (double& x : k) x /= ks;
  std::vector<double> t(v.size(), 0.0);
  for (std::int64_t y = 0; y < n; ++y)
    for (std::int64_t x = 0; x < n; ++x)
      for (int i = -r; i <= r; ++i)
        t[static_cast<std::size_t>(y * n + x)] +=
            k[static_cast<std::size_t>(i + r)] *
            v[static_cast<std::size_t>(y * n + std::clamp<std::int64_t>(x + i, 0, n - 1))];
  std::vector<float> out(v.size());
  for (std::int64_t y = 0; y < n; ++y)
    for (std::int64_t x = 0; x < n; ++x) {
      double s = 0;
      for (int i = -r; i <= r; ++i)
        s += k[static_cast<std::size_t>(i + r)] *
             t[static_cast<std::size_t>(std::clamp<std::int64_t>(y + i, 0, n - 1) * n + x)];
      out[static_cast<std::size_t>(y * n + x)] = static_cast<float>(5.0 + s);
    }
  return out;
}

std::vector<float> crop(const std::vector<float>& v, std::int64_t n, std::int64_t side) {
  std::vector<float> out(static_cast<std::size_t>(side * side));
  for (std::int64_t y = 0; y < side; ++y)
    for (std::int64_t x = 0; x < side; ++x)
      out[static_cast<std::size_t>(y * side + x)] = v[static_cast<std::size_t>(y * n + x)];
  return out;
}

std::vector<float> add_noise(std::vector<float> v, double sigma, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0.0, sigma);
  for (float& x : v) x += static_cast<float>(g(rng));
  return v;
}

void write_tiff(const fs::path& path, const std::vector<float>& pixels, std::int64_t w, std::int64_t h,
                double pixel_size = 0) {
  ImageMeta m;
  m.width = w;
  m.height = h;
  m.frames = static_cast<std::int64_t>(pixels.size()) / (w * h);
  m.type = PixelType::f32;
  m.pixel_size_nm = pixel_size;
  auto out = create_image_writer(path.string(), m);
  out->write(pixels.data(), m.frames);
  out->close();
}

CommandResult frc(const std::string& args) {
  return run_command(shell_quote(app_path("frc")) + " " + args);
}

void check_one_line(const CommandResult& r, int code, const std::string& where, const std::string& what) {
  check_one_line_error(r, "frc", code, where, what);
}

}  // namespace

TEST_CASE("the FRC of an image with itself is 1 at every ring, odd, even and non-square") {
  for (const auto& size : {std::pair<std::int64_t, std::int64_t>{64, 64}, {33, 47}, {50, 21}}) {
    const std::int64_t w = size.first, h = size.second;  // not a structured binding: INFO captures them (Clang 14)
    INFO(w << "x" << h);
    const auto a = random_image(w, h, 7);
    const FrcResult r = compute_frc(a, a, geometry(w, h), FrcThreshold{});
    REQUIRE(static_cast<std::int64_t>(r.curve.size()) == std::min(w, h) / 2 + 1);
    for (const FrcPoint& p : r.curve) CHECK(p.frc == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(r.crossing.status == FrcCrossing::Status::not_reached);
    CHECK(r.crossing.resolution_px == 2.0);
  }
}

TEST_CASE("thresholds follow their formulas and parse every documented spelling") {
  for (std::int64_t n : {1, 8, 100, 12345}) {
    const double s = std::sqrt(static_cast<double>(n));
    CHECK(parse_frc_threshold("1/7").at(n) == doctest::Approx(1.0 / 7.0));
    CHECK(parse_frc_threshold("half-bit").at(n) == doctest::Approx((0.2071 + 1.9102 / s) / (1.2071 + 0.9102 / s)));
    CHECK(parse_frc_threshold("2sigma").at(n) == doctest::Approx(2.0 / std::sqrt(static_cast<double>(n) / 2.0)));
    CHECK(parse_frc_threshold("3sigma").at(n) == doctest::Approx(3.0 / std::sqrt(static_cast<double>(n) / 2.0)));
    CHECK(parse_frc_threshold("2.5-sigma").at(n) == doctest::Approx(2.5 / std::sqrt(static_cast<double>(n) / 2.0)));
    CHECK(parse_frc_threshold("0.5").at(n) == doctest::Approx(0.5));
  }
  CHECK(parse_frc_threshold("HalfBit").kind == FrcThreshold::Kind::half_bit);
  CHECK(parse_frc_threshold("2sigma").name() == "2sigma");
  CHECK(parse_frc_threshold("1/7").name() == "1/7");
  for (const char* bad : {"", "1/8", "sigma", "-2sigma", "1.5", "bits", "0"}) {
    INFO(bad);
    CHECK(expect_error<UsageError>([&] { parse_frc_threshold(bad); }).where() == "--threshold");
  }
}

TEST_CASE("the FFT ring sums equal a brute-force DFT ring sum (24x24, 25x31, 31x25)") {
  for (const auto& size : {std::pair<std::int64_t, std::int64_t>{24, 24}, {25, 31}, {31, 25}}) {
    const std::int64_t w = size.first, h = size.second;  // not a structured binding: INFO captures them (Clang 14)
    INFO(w << "x" << h);
    const auto a = random_image(w, h, 1), b = random_image(w, h, 2);
    const FrcGeometry g = geometry(w, h);
    const auto wx = tukey_window(w, g.tukey_fraction), wy = tukey_window(h, g.tukey_fraction);
    const std::int64_t n = std::min(w, h), last = n / 2;
    std::vector<double> cross(static_cast<std::size_t>(last + 1)), p1 = cross, p2 = cross;
    std::vector<std::int64_t> count(cross.size(), 0);
    std::vector<double> radius_sum(cross.size(), 0.0);
    for (std::int64_t v = 0; v < h; ++v)
      for (std::int64_t u = 0; u < w; ++u) {
        std::complex<double> f1, f2;
        for (std::int64_t y = 0; y < h; ++y)
          for (std::int64_t x = 0; x < w; ++x) {
            const double win = wx[static_cast<std::size_t>(x)] * wy[static_cast<std::size_t>(y)];
            const double phase = -2 * std::numbers::pi *
                                 (static_cast<double>(u * x) / static_cast<double>(w) +
                                  static_cast<double>(v * y) / static_cast<double>(h));
            const std::complex<double> e(std::cos(phase), std::sin(phase));
            f1 += e * (win * a[static_cast<std::size_t>(y * w + x)]);
            f2 += e * (win * b[static_cast<std::size_t>(y * w + x)]);
          }
        // The ring by the floating-point definition (no exact-integer radii occur off the axes here
        // except on square grids, where sqrt of a perfect square is exact).
        const double kx = static_cast<double>(u <= w / 2 ? u : u - w), ky = static_cast<double>(v <= h / 2 ? v : v - h);
        const double radius = static_cast<double>(n) * std::sqrt(kx * kx / double(w * w) + ky * ky / double(h * h));
        const auto r = static_cast<std::int64_t>(std::floor(radius + 1e-12));
        if (r > last) continue;
        const auto i = static_cast<std::size_t>(r);
        cross[i] += (f1 * std::conj(f2)).real();
        p1[i] += std::norm(f1);
        p2[i] += std::norm(f2);
        ++count[i];
        radius_sum[i] += radius;
      }
    auto engine = make_cpu_frc_engine(g);
    const FrcRingSums s = engine->ring_sums(a, b);
    const FrcResult res = frc_from_sums(s, g, FrcThreshold{});
    REQUIRE(s.cross.size() == cross.size());
    for (std::size_t r = 0; r < cross.size(); ++r) {
      INFO("ring " << r);
      CHECK(s.pixels[r] == count[r]);
      CHECK(s.power1[r] == doctest::Approx(p1[r]).epsilon(1e-9));
      CHECK(s.power2[r] == doctest::Approx(p2[r]).epsilon(1e-9));
      CHECK(std::abs(s.cross[r] - cross[r]) <= 1e-9 * std::sqrt(p1[r] * p2[r]));
      CHECK(res.curve[r].frc == doctest::Approx(cross[r] / std::sqrt(p1[r] * p2[r])).epsilon(1e-9));
      // each ring at the mean radius of its coefficients (issue 19)
      const double mean_radius = radius_sum[r] / static_cast<double>(count[r]);
      CHECK(s.radius[r] == doctest::Approx(mean_radius).epsilon(1e-12));
      CHECK(res.curve[r].radius == doctest::Approx(mean_radius).epsilon(1e-12));
      CHECK(res.curve[r].frequency == doctest::Approx(mean_radius / static_cast<double>(n)).epsilon(1e-12));
    }
  }
}

TEST_CASE("ring geometry: integer ring index, pixel counts cover the disc, Tukey window") {
  CHECK(frc_math::ring_index(3, 4, 64, 64) == 5);
  CHECK(frc_math::ring_index(-3, 4, 64, 64) == 5);
  CHECK(frc_math::ring_index(0, 31, 64, 32) == 31);  // N = 32: ky = 31 of H = 32 is radius 31
  CHECK(frc_math::ring_index(31, 0, 64, 32) == 15);  // kx = 31 of W = 64 is radius 15.5
  CHECK(frc_math::isqrt(99) == 9);
  CHECK(frc_math::isqrt(100) == 10);
  CHECK(frc_math::isqrt((1ULL << 62) - 1) == (1ULL << 31) - 1);
  const auto n = frc_ring_pixels(64, 64);
  CHECK(n[0] == 1);
  CHECK(n[1] == 8);  // (±1, 0), (0, ±1), (±1, ±1)
  const auto w = tukey_window(64, 0.125);
  CHECK(w[8] == 1.0);
  CHECK(w[55] == 1.0);
  CHECK(w[0] > 0.0);
  CHECK(w[0] < 0.05);
  CHECK(w[3] == doctest::Approx(w[60]));
  CHECK(tukey_window(10, 0.0) == std::vector<double>(10, 1.0));
}

TEST_CASE("each ring is labelled at the mean radius of its lattice points") {
  // Ring 0 of a square image is the origin alone; ring 1 holds (±1, 0), (0, ±1) at radius 1 and
  // (±1, ±1) at sqrt 2: mean (1 + sqrt 2) / 2.
  const auto radii = frc_ring_radii(64, 64);
  REQUIRE(radii.size() == 33);
  CHECK(radii[0] == 0.0);
  CHECK(radii[1] == doctest::Approx((1 + std::numbers::sqrt2) / 2).epsilon(1e-14));
  // Every ring, by enumerating the integer points of the whole plane in the ring (no FFT layout).
  for (std::int64_t side : {64, 63}) {
    const auto rad = frc_ring_radii(side, side);
    const std::int64_t half = side / 2;
    std::vector<double> sum(rad.size(), 0.0), count(rad.size(), 0.0);
    for (std::int64_t ky = -(side - 1) / 2; ky <= half; ++ky)
      for (std::int64_t kx = -(side - 1) / 2; kx <= half; ++kx) {
        const double rr = std::hypot(static_cast<double>(kx), static_cast<double>(ky));
        std::int64_t r = static_cast<std::int64_t>(rr);
        if (static_cast<double>((r + 1) * (r + 1)) <= static_cast<double>(kx * kx + ky * ky)) ++r;  // exact floor
        if (r > half) continue;
        sum[static_cast<std::size_t>(r)] += rr;
        count[static_cast<std::size_t>(r)] += 1;
      }
    for (std::size_t r = 0; r < rad.size(); ++r) {
      CAPTURE(side);
      CAPTURE(r);
      CHECK(rad[r] == doctest::Approx(sum[r] / count[r]).epsilon(1e-13));
      // about r + 1/2: the lattice puts it a little lower (r + 0.21 at ring 1, r + 0.39 to 0.46 at rings 8..31)
      if (r >= 1 && r + 1 < rad.size()) CHECK(std::abs(rad[r] - (static_cast<double>(r) + 0.5)) < 0.3);
    }
  }
  // Non-square: |k| is scaled to N = min(W, H), so a 64 x 32 image has the rings of a 32 x 32 one in
  // radius, every kx step being half a ring.
  const auto wide = frc_ring_radii(64, 32);
  REQUIRE(wide.size() == 17);
  CHECK(wide[0] == doctest::Approx(1.0 / 3));  // (0, 0) and kx = ±1 at radius 1/2
  // ring 1 (radius sqrt((kx/2)^2 + ky^2) in [1, 2)): ky = 0, kx = ±2, ±3; ky = ±1, kx = 0, ±1, ±2, ±3
  CHECK(wide[1] == doctest::Approx((2 * 1.0 + 2 * 1.5 + 2 * 1.0 + 4 * std::hypot(0.5, 1.0) + 4 * std::hypot(1.0, 1.0) +
                                    4 * std::hypot(1.5, 1.0)) /
                                   18));
}

TEST_CASE("an FRC whose crossing is known: correlation 1 - |k| / (N nu1) crosses 1/7 at 6/7 nu1") {
  // Image a is a delta (F1 = 1 at every frequency); image b has F2(k) = exp(i s(k) theta(|k|)) with
  // cos theta = 1 - |k| / (N nu1) and s an odd sign (b is real). Per coefficient Re F1 F2* = cos theta,
  // so FRC(ring) = mean over the ring of 1 - |k| / (N nu1) = 1 - rbar / (N nu1): a straight line in the
  // mean-radius frequency, which the interpolation follows exactly. It crosses 1/7 at nu1 (1 - 1/7).
  const std::int64_t n = 63;  // odd: no self-conjugate frequency but 0
  const double nu1 = 0.35, nu_c = nu1 * 6.0 / 7.0;
  std::vector<float> a(static_cast<std::size_t>(n * n), 0.0f), b(a.size());
  a[0] = 1.0f;
  std::vector<double> bd(a.size(), 0.0);
  const double two_pi = 2 * std::numbers::pi;
  for (std::int64_t ky = -n / 2; ky <= n / 2; ++ky)
    for (std::int64_t kx = -n / 2; kx <= n / 2; ++kx) {
      const double k = std::hypot(static_cast<double>(kx), static_cast<double>(ky));
      const double c = 1 - k / (static_cast<double>(n) * nu1);
      const double theta = std::acos(std::clamp(c, -1.0, 1.0));
      const double sign = ky != 0 ? (ky > 0 ? 1.0 : -1.0) : (kx > 0 ? 1.0 : (kx < 0 ? -1.0 : 0.0));
      for (std::int64_t y = 0; y < n; ++y)
        for (std::int64_t x = 0; x < n; ++x)
          bd[static_cast<std::size_t>(y * n + x)] +=
              std::cos(two_pi * static_cast<double>(kx * x + ky * y) / static_cast<double>(n) + sign * theta);
    }
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(bd[i] / static_cast<double>(n * n));
  FrcGeometry g;
  g.width = g.height = n;
  g.tukey_fraction = 0.0;
  const FrcResult r = compute_frc(a, b, g, FrcThreshold{});
  for (const FrcPoint& p : r.curve)
    if (p.radius < static_cast<double>(n) * nu1) CHECK(p.frc == doctest::Approx(1 - p.frequency / nu1).epsilon(1e-5));
  REQUIRE(r.crossing.status == FrcCrossing::Status::crossed);
  CHECK(r.crossing.frequency == doctest::Approx(nu_c).epsilon(1e-5));
  CHECK(r.crossing.resolution_px == doctest::Approx(1 / nu_c).epsilon(1e-5));
  // The old label r / N read the same curve about half a ring low: resolution N / r_c, pessimistic by
  // about 0.5 / r_c (here 2.25 % at r_c = 18.5, where the lattice's mean radius is r + 0.42).
  const double old_resolution = static_cast<double>(n) / r.crossing.ring;
  const double shift = old_resolution / r.crossing.resolution_px - 1;
  MESSAGE("crossing at ring " << r.crossing.ring << ", " << r.crossing.frequency << " cycles/px: resolution "
                              << r.crossing.resolution_px << " px (r/N labels: " << old_resolution << " px, +"
                              << 100 * shift << " %, 0.5/r_c = " << 100 * 0.5 / r.crossing.ring << " %)");
  CHECK(shift > 0);
  CHECK(shift == doctest::Approx(0.5 / r.crossing.ring).epsilon(0.25));
}

TEST_CASE("frc_math: window weight and a coefficient's ring terms (shared by the CPU engine and the kernels)") {
  const double wx[] = {0.5, 1.0}, wy[] = {0.25, 1.0};
  CHECK(frc_math::window_weight(wx, wy, 0, 0) == 0.125);
  CHECK(frc_math::window_weight(wx, wy, 1, 0) == 0.25);
  CHECK(frc_math::window_weight(wx, wy, 0, 1) == 0.5);
  // F1 = 1 + 2i, F2 = 3 + 4i, weight 2: Re F1 F2* = 11, |F1|^2 = 5, |F2|^2 = 25.
  const frc_math::RingTerms t = frc_math::ring_terms(1.0, 2.0, 3.0, 4.0, 2.0);
  CHECK(t.cross == 22.0);
  CHECK(t.power1 == 10.0);
  CHECK(t.power2 == 50.0);
  const frc_math::RingTerms u = frc_math::ring_terms(1.0, -1.0, 0.0, 2.0, 1.0);
  CHECK(u.cross == -2.0);  // Re (1 - i)(-2i) = -2
}

TEST_CASE("two noisy realizations of one structure give the same resolution at 256 and 257 px (within a ring)") {
  const std::int64_t big = 300;
  const auto truth = blurred_structure(big, 2.0, 11);
  const auto a = add_noise(truth, 2.0, 21), b = add_noise(truth, 2.0, 22);
  double rings[2] = {0, 0};
  double res[2] = {0, 0};
  int k = 0;
  for (std::int64_t side : {256, 257}) {
    const FrcResult r = compute_frc(crop(a, big, side), crop(b, big, side), geometry(side, side), FrcThreshold{});
    REQUIRE(r.crossing.status == FrcCrossing::Status::crossed);
    rings[k] = r.crossing.ring;
    res[k] = r.crossing.resolution_px;
    MESSAGE(side << "^2: crossing at ring " << r.crossing.ring << ", resolution " << r.crossing.resolution_px << " px");
    ++k;
  }
  // The same frequency is ring r at 256 and r * 257/256 at 257.
  CHECK(std::abs(rings[1] * 256.0 / 257.0 - rings[0]) <= 1.0);
  CHECK(std::abs(res[0] - res[1]) / res[0] < 0.05);
  CHECK(res[0] > 2.5);
  CHECK(res[0] < 20.0);
}

TEST_CASE("a band-limited structure plus independent noise crosses at its band limit") {
  const std::int64_t n = 256, cutoff = 40;
  // f = Re sum over |k| < cutoff of random-phase unit coefficients: band-limited to ring cutoff.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> phase(0.0, 2 * std::numbers::pi);
  std::vector<std::complex<double>> spec(static_cast<std::size_t>(n * n));
  for (std::int64_t v = 0; v < n; ++v)
    for (std::int64_t u = 0; u < n; ++u) {
      const std::int64_t ku = u <= n / 2 ? u : u - n, kv = v <= n / 2 ? v : v - n;
      if (ku * ku + kv * kv < cutoff * cutoff) spec[static_cast<std::size_t>(v * n + u)] = std::polar(1.0, phase(rng));
    }
  std::vector<std::complex<double>> twiddle(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    twiddle[static_cast<std::size_t>(i)] =
        std::polar(1.0, 2 * std::numbers::pi * static_cast<double>(i) / static_cast<double>(n));
  std::vector<std::complex<double>> rows(spec.size());  // G[v][x] = sum_u F[v][u] e^{2 pi i u x / n}
  for (std::int64_t v = 0; v < n; ++v)
    for (std::int64_t x = 0; x < n; ++x) {
      std::complex<double> s;
      for (std::int64_t u = 0; u < n; ++u)
        s += spec[static_cast<std::size_t>(v * n + u)] * twiddle[static_cast<std::size_t>((u * x) % n)];
      rows[static_cast<std::size_t>(v * n + x)] = s;
    }
  std::vector<float> truth(spec.size());
  double sum2 = 0;
  for (std::int64_t y = 0; y < n; ++y)
    for (std::int64_t x = 0; x < n; ++x) {
      std::complex<double> s;
      for (std::int64_t v = 0; v < n; ++v)
        s += rows[static_cast<std::size_t>(v * n + x)] * twiddle[static_cast<std::size_t>((v * y) % n)];
      truth[static_cast<std::size_t>(y * n + x)] = static_cast<float>(s.real());
      sum2 += s.real() * s.real();
    }
  const double rms = std::sqrt(sum2 / static_cast<double>(n * n));
  const auto a = add_noise(truth, 0.3 * rms, 1), b = add_noise(truth, 0.3 * rms, 2);
  // The structure is periodic in the frame, so without a window nothing leaks past the band limit:
  // ring 39 (39 <= |k| < 40) is all signal, ring 40 all noise, and the crossing lies between them.
  FrcGeometry no_window = geometry(n, n);
  no_window.tukey_fraction = 0;
  const FrcResult exact = compute_frc(a, b, no_window, FrcThreshold{});
  REQUIRE(exact.crossing.status == FrcCrossing::Status::crossed);
  CHECK(exact.crossing.ring >= cutoff - 1);
  CHECK(exact.crossing.ring <= cutoff);
  // The default window multiplies the frame by a taper, which convolves the spectrum with the
  // window's own: at this SNR (about 100 per coefficient) a little signal leaks a few rings
  // past the limit, so the crossing moves out by a few rings, never in.
  const FrcResult r = compute_frc(a, b, geometry(n, n), FrcThreshold{});
  REQUIRE(r.crossing.status == FrcCrossing::Status::crossed);
  MESSAGE("band limit ring " << cutoff << ": crossing at ring " << exact.crossing.ring << " without a window, "
                             << r.crossing.ring << " with the Tukey window");
  CHECK(r.crossing.ring > cutoff - 1);
  CHECK(r.crossing.ring < cutoff + 6);
  CHECK(r.curve[20].frc > 0.9);
  CHECK(std::abs(r.curve[80].frc) < 0.2);
  CHECK(r.crossing.resolution_px == doctest::Approx(1.0 / r.crossing.frequency));
}

TEST_CASE("crossing rule: skip ring 0, wait until above, interpolate, flag the other cases") {
  std::vector<FrcPoint> c(6);
  const double frc[] = {0.2, 0.05, 0.9, 0.5, 0.1, 0.0};  // ring 1 below (like a k-sigma start), then above
  // N = 10, rings labelled at radii i + 0.5 except ring 4 at 4.7: the crossing is interpolated in frequency
  for (int i = 0; i < 6; ++i) {
    const double radius = i == 4 ? 4.7 : i + 0.5;
    c[static_cast<std::size_t>(i)] = {i, radius, radius / 10, frc[i], 10, 0.3};
  }
  FrcCrossing x = find_crossing(c);
  CHECK(x.status == FrcCrossing::Status::crossed);
  CHECK(x.ring == doctest::Approx(3 + 0.2 / 0.4));
  CHECK(x.frequency == doctest::Approx(0.35 + 0.5 * (0.47 - 0.35)));
  CHECK(x.resolution_px == doctest::Approx(1 / 0.41));
  for (auto& p : c) p.frc = 0.9;
  CHECK(find_crossing(c).status == FrcCrossing::Status::not_reached);
  CHECK(find_crossing(c).resolution_px == 2.0);
  for (auto& p : c) p.frc = 0.1;
  CHECK(find_crossing(c).status == FrcCrossing::Status::never_above);
}

TEST_CASE("localizations: histograms count what they should, time blocks split whole blocks") {
  std::vector<Localization> locs;
  for (std::int64_t f = 0; f < 100; ++f)
    for (int i = 0; i < 3; ++i) {
      Localization l;
      l.frame = f;
      l.x = 1.0 + i;  // px; centre of pixel 1 at 1: (1 + 0.5) * 100 nm = 150 nm -> rendered px 15 of 10 nm
      l.y = 2.0;
      locs.push_back(l);
    }
  LocRenderSettings s;
  s.pixel_size_nm = 100;
  s.render_px_nm = 10;
  s.time_blocks = 10;
  s.seed = 3;
  s.width_px = 8;
  s.height_px = 4;
  const auto img = render_histogram(locs, s, 80, 40);
  CHECK(img[25 * 80 + 15] == 100.0f);
  CHECK(img[25 * 80 + 25] == 100.0f);
  CHECK(img[25 * 80 + 35] == 100.0f);
  const LocRenderedPair p = render_time_block_halves(locs, s, "locs");
  CHECK(p.width == 80);
  CHECK(p.height == 40);
  CHECK(p.count_a + p.count_b == 300);
  CHECK(p.count_a == 150);  // 5 blocks of 10 frames x 3 localizations
  CHECK(p.blocks_a.size() == 5);
  const LocRenderedPair again = render_time_block_halves(locs, s, "locs");
  CHECK(again.blocks_a == p.blocks_a);
  s.seed = 4;
  std::set<std::vector<int>> assignments;
  for (std::uint64_t seed = 1; seed < 6; ++seed) {
    s.seed = seed;
    assignments.insert(render_time_block_halves(locs, s, "locs").blocks_a);
  }
  CHECK(assignments.size() > 1);
  s.time_blocks = 7;
  CHECK(expect_error<UsageError>([&] { render_time_block_halves(locs, s, "locs"); }).where() == "--time-blocks");
  s.time_blocks = 200;
  CHECK(expect_error<InputError>([&] { render_time_block_halves(locs, s, "locs"); }).where() == "locs");
}

TEST_CASE("the PNG plot: size, white background, coloured series, nice ticks") {
  PlotSpec spec;
  spec.title = "test plot";
  spec.x_label = "x (1/nm)";
  spec.y_label = "y";
  PlotSeries s;
  s.label = "line";
  s.x = {0, 1, 2, 3};
  s.y = {0, 1, 0.5, 0.25};
  s.color = {0, 0, 255};
  spec.series = {s};
  spec.markers = {{1.5, "marker", {255, 0, 0}}};
  const RgbImage im = render_plot(spec);
  CHECK(im.width == 900);
  CHECK(im.height == 560);
  CHECK(im.at(2, 2).r == 255);
  std::int64_t blue = 0, red = 0;
  for (int y = 0; y < im.height; ++y)
    for (int x = 0; x < im.width; ++x) {
      const Rgb c = im.at(x, y);
      blue += c.r == 0 && c.g == 0 && c.b == 255;
      red += c.r == 255 && c.g == 0 && c.b == 0;
    }
  CHECK(blue > 500);
  CHECK(red > 300);
  CHECK(nice_ticks(0, 1) == std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0});
  TempDir dir;
  write_plot_png((dir / "p.png").string(), spec);
  auto r = open_stack((dir / "p.png").string());
  CHECK(r->info().width == 900);
  CHECK(r->info().height == 560);
  CHECK(expect_error<OutputError>([&] { write_plot_png((dir / "missing" / "p.png").string(), spec); })
            .where()
            .find("missing") != std::string::npos);
}

TEST_CASE("frc A.tif B.tif writes JSON, CSV and PNG that read back") {
  TempDir dir;
  const std::int64_t big = 140, side = 128;
  const auto truth = blurred_structure(big, 1.5, 3);
  write_tiff(dir / "a.tif", crop(add_noise(truth, 2.0, 1), big, side), side, side);
  write_tiff(dir / "b.tif", crop(add_noise(truth, 2.0, 2), big, side), side, side);
  const auto r =
      frc(shell_quote((dir / "a.tif").string()) + " " + shell_quote((dir / "b.tif").string()) +
          " --quiet --device cpu --pixel-size 100 --json " + shell_quote((dir / "r.json").string()) + " --curve " +
          shell_quote((dir / "c.csv").string()) + " --plot " + shell_quote((dir / "p.png").string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "threshold:   1/7"));
  CHECK(contains(r.output, "resolution:"));
  CHECK(contains(r.output, " nm (100 nm/px)"));
  const auto j = nlohmann::json::parse(read_file(dir / "r.json"));
  CHECK(j["threshold"] == "1/7");
  CHECK(j["status"] == "crossed");
  CHECK(j["side"] == 128);
  CHECK(j["curve"].size() == 65);
  const double px = j["resolution_px"].get<double>();
  CHECK(j["resolution_nm"].get<double>() == doctest::Approx(100 * px));
  CHECK(px == doctest::Approx(1.0 / j["crossing_frequency_per_px"].get<double>()));
  CHECK(j["curve"][10]["frequency_per_px"].get<double>() ==
        doctest::Approx(j["curve"][10]["mean_radius"].get<double>() / 128.0));
  // The CLI's number is the library's.
  auto ra = open_stack((dir / "a.tif").string()), rb = open_stack((dir / "b.tif").string());
  std::vector<float> a(side * side), b(side * side);
  ra->read_float(0, 1, a.data());
  rb->read_float(0, 1, b.data());
  CHECK(compute_frc(a, b, geometry(side, side), FrcThreshold{}).crossing.resolution_px == doctest::Approx(px));
  std::istringstream csv(read_file(dir / "c.csv"));
  std::string line;
  std::getline(csv, line);
  CHECK(line == "ring,mean_radius,frequency_per_px,frc,pixels,threshold");
  int rows = 0;
  while (std::getline(csv, line)) ++rows;
  CHECK(rows == 65);
  auto png = open_stack((dir / "p.png").string());
  CHECK(png->info().width == 900);

  // half-bit and 2sigma run too; a multi-page file without --page uses page 0.
  std::vector<float> two = a;
  two.insert(two.end(), b.begin(), b.end());
  write_tiff(dir / "ab.tif", two, side, side);
  const auto hb = frc(shell_quote((dir / "ab.tif").string()) + " " + shell_quote((dir / "a.tif").string()) +
                      " --quiet --threshold half-bit");
  CHECK(hb.exit_code == 0);
  CHECK(contains(hb.output, "not reached"));  // page 0 of ab.tif is a.tif itself
  const auto p1 = frc(shell_quote((dir / "ab.tif").string()) + " " + shell_quote((dir / "ab.tif").string()) +
                      " --quiet --page 1 --threshold 2sigma");
  CHECK(p1.exit_code == 0);
  CHECK(contains(p1.output, "threshold:   2sigma"));
}

TEST_CASE("frc --split and localization files") {
  TempDir dir;
  const std::int64_t side = 64, frames = 8;
  const auto truth = blurred_structure(side, 1.5, 9);
  std::vector<float> stack;
  for (std::int64_t f = 0; f < frames; ++f) {
    const auto noisy = add_noise(truth, 3.0, 100 + static_cast<std::uint64_t>(f));
    stack.insert(stack.end(), noisy.begin(), noisy.end());
  }
  write_tiff(dir / "s.tif", stack, side, side, 65);
  const auto oe = frc(shell_quote((dir / "s.tif").string()) + " --quiet --split odd-even --json " +
                      shell_quote((dir / "s.json").string()));
  INFO(oe.output);
  CHECK(oe.exit_code == 0);
  CHECK(contains(oe.output, "4 even + 4 odd"));
  const auto js = nlohmann::json::parse(read_file(dir / "s.json"));
  CHECK(js["pixel_size_nm"].get<double>() == doctest::Approx(65));  // from the TIFF
  const auto halves = frc(shell_quote((dir / "s.tif").string()) + " --quiet --split halves --frames 2:8");
  CHECK(halves.exit_code == 0);
  CHECK(contains(halves.output, "frames 2:8"));
  CHECK(contains(halves.output, "3 + 3"));

  // Localizations of two bright lines, 200 frames.
  std::mt19937_64 rng(1);
  std::normal_distribution<double> jitter(0.0, 0.1);
  std::vector<Localization> locs;
  for (std::int64_t f = 0; f < 200; ++f)
    for (int i = 0; i < 20; ++i) {
      Localization l;
      l.frame = f;
      l.x = 5 + 0.3 * i + jitter(rng);
      l.y = (i % 2 ? 10.0 : 20.0) + jitter(rng);
      l.photons = 1000;
      l.sigma = 1;
      l.lpx = l.lpy = 0.1;
      locs.push_back(l);
    }
  Camera cam;
  cam.pixel_size_nm = 100;
  LocWriterContext ctx;
  ctx.camera = cam;
  ctx.width = 32;
  ctx.height = 32;
  ctx.frames = 200;
  write_localizations((dir / "lc.csv").string(), "", ctx, locs);
  write_localizations((dir / "l.hdf5").string(), "", ctx, locs);
  const auto lc = frc(shell_quote((dir / "lc.csv").string()) + " --quiet --render-px 20 --time-blocks 10 --json " +
                      shell_quote((dir / "lc.json").string()));
  INFO(lc.output);
  CHECK(lc.exit_code == 0);
  const auto lh = frc(shell_quote((dir / "l.hdf5").string()) + " --quiet --render-px 20 --time-blocks 10 --json " +
                      shell_quote((dir / "lh.json").string()));
  INFO(lh.output);
  CHECK(lh.exit_code == 0);
  const auto jc = nlohmann::json::parse(read_file(dir / "lc.json")),
             jh = nlohmann::json::parse(read_file(dir / "lh.json"));
  CHECK(jc["mode"] == "localizations");
  CHECK(jh["pixel_size_nm"].get<double>() == 20);
  CHECK(jh["width"] == 160);  // 32 px x 100 nm / 20 nm (from the YAML)
  CHECK(contains(lc.output, "localizations (ThunderSTORM CSV"));
  CHECK(contains(lh.output, "localizations (Picasso HDF5"));
  CHECK(contains(lh.output, "in 10 time blocks"));
  CHECK(jh["status"] != "never above");
  // The same field from the CSV, whose .yaml gives the camera frame, as from the HDF5; and the same curve.
  CHECK(jc["width"] == 160);
  CHECK(jc["resolution_nm"] == jh["resolution_nm"]);
  CHECK(contains(lc.output, "field 32x32 px from lc.csv.yaml"));
  // Without the .yaml: the localizations' extent, said so; --field (with the pixel size) gives the frame back.
  fs::remove(dir / "lc.csv.yaml");
  const auto extent = frc(shell_quote((dir / "lc.csv").string()) + " --quiet --render-px 20 --time-blocks 10 --json " +
                          shell_quote((dir / "le.json").string()));
  CHECK(extent.exit_code == 0);
  CHECK(contains(extent.output, "from the localizations' extent"));
  CHECK(nlohmann::json::parse(read_file(dir / "le.json"))["width"] < 160);
  const auto given = frc(shell_quote((dir / "lc.csv").string()) + " --quiet --render-px 20 --time-blocks 10 --field 32x32 "
                         "--pixel-size 100 --json " + shell_quote((dir / "lf.json").string()));
  CHECK(given.exit_code == 0);
  CHECK(contains(given.output, "field 32x32 px from --field"));
  CHECK(nlohmann::json::parse(read_file(dir / "lf.json"))["width"] == 160);
  const auto bad = frc(shell_quote((dir / "lc.csv").string()) + " --quiet --field 32by32 --pixel-size 100");
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.output, "is not WxH"));
}

TEST_CASE("frc bad input: one line, a distinct exit code, no output file") {
  TempDir dir;
  write_tiff(dir / "a.tif", random_image(32, 32, 1), 32, 32);
  write_tiff(dir / "b.tif", random_image(33, 32, 2), 33, 32);
  write_tiff(dir / "one.tif", random_image(32, 32, 3), 32, 32);
  write_file(dir / "noframe.csv", "\"id\",\"x [nm]\",\"y [nm]\"\n1,100,100\n");
  const std::string a = shell_quote((dir / "a.tif").string()), b = shell_quote((dir / "b.tif").string());
  const std::string json = " --json " + shell_quote((dir / "out.json").string());

  check_one_line(frc(a + " " + b + json), 3, "a.tif, " + (dir / "b.tif").string(), "32x32 and 33x32");
  check_one_line(frc(a + " " + a + " --threshold 1/8" + json), 2, "--threshold", "unknown FRC threshold");
  check_one_line(frc(a + " " + a + " --page 1" + json), 3, "a.tif", "--page 1 is out of range");
  check_one_line(frc(shell_quote((dir / "one.tif").string()) + " --split odd-even" + json), 3, "one.tif",
                 "at least 2 frames");
  check_one_line(frc(a + json), 2, "command line", "--split");
  check_one_line(frc(shell_quote((dir / "noframe.csv").string()) + json), 3, "noframe.csv", "frame");
  check_one_line(frc(a + " " + a + " --split halves" + json), 2, "--split", "two images");
  CHECK_FALSE(fs::exists(dir / "out.json"));
  for (const auto& e : fs::directory_iterator(dir.path())) CHECK(e.path().extension() != ".json");
}
