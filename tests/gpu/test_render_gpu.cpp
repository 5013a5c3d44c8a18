// The CUDA render engine (kernels/render) against the CPU reference, on random
// localizations with varied precisions (some below the half-pixel floor, some
// wide), positions on pixel edges, points outside the field, and z. The CPU
// sums each share in double; the GPU forms the shares in float (erf/erfc on the
// tail side, render_math.hpp) and adds them with float atomics in any order.
// Stated tolerances:
//   - histogram: the density equal exactly (integers in float, below 2^24), the
//     z sums within 1e-5 of 500 nm × the pixel's count (float sums of z ∈ ±500
//     nm cancel, so the sum itself is no scale);
//   - Gaussian and the z colour: the integral within 1e-5 relative; every
//     pixel within 1e-3 relative of the CPU's value, or 1e-6 of the image's
//     largest value absolute for the faint tails (where a float share keeps
//     fewer digits);
//   - the z colour's RGB planes within 2e-3 absolute (of 1);
//   - streamed (many add() calls, through buffer() or the caller's memory)
//     equals one call, and the engine's output does not depend on the chunking
//     beyond the float tolerance above.
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/device.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/loc/render.hpp"

using namespace nanoscopy;

namespace {

// Camera-pixel positions over the width × height field and half a pixel beyond (some fall outside).
std::vector<Localization> random_locs(std::size_t count, double width_px, double height_px, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> px(-1.0, width_px + 0.5), py(-1.0, height_px + 0.5), lp(0.01, 0.4),
      z(-500.0, 500.0), u(0, 1);
  std::vector<Localization> locs(count);
  for (Localization& l : locs) {
    l.x = px(rng);
    l.y = py(rng);
    if (u(rng) < 0.05) l.x = std::round(l.x * 10.0) / 10.0 - 0.5;  // on a rendered pixel's edge (10 per camera px)
    l.lpx = lp(rng);
    l.lpy = u(rng) < 0.5 ? l.lpx : lp(rng);
    l.z = z(rng);
  }
  return locs;
}

struct Compared {
  double integral_cpu = 0, integral_gpu = 0;
  double worst = 0;  // max over pixels of |g − c| / max(|c|, floor)
};

Compared compare(const std::vector<float>& c, const std::vector<float>& g, double floor_fraction) {
  REQUIRE(c.size() == g.size());
  Compared r;
  float top = 0;
  for (float v : c) top = std::max(top, std::abs(v));
  const double floor = floor_fraction * top;
  for (std::size_t i = 0; i < c.size(); ++i) {
    r.integral_cpu += c[i];
    r.integral_gpu += g[i];
    r.worst = std::max(r.worst, std::abs(static_cast<double>(g[i]) - c[i]) / std::max<double>(std::abs(c[i]), floor));
  }
  return r;
}

// z sums cancel (z in ±500 nm), so a pixel's float rounding is judged against its scale Σ share·|z| ≤
// 500 nm × its density, not against the (possibly near-zero) sum itself.
double worst_z(const RenderedImage& c, const RenderedImage& g) {
  REQUIRE(c.z_sum.size() == g.z_sum.size());
  REQUIRE(c.pixels.size() == c.z_sum.size());
  float top = 0;
  for (float v : c.pixels) top = std::max(top, v);
  double worst = 0;
  for (std::size_t i = 0; i < c.z_sum.size(); ++i) {
    const double scale = std::max(500.0 * c.pixels[i], 500.0 * 1e-6 * top);
    worst = std::max(worst, std::abs(static_cast<double>(g.z_sum[i]) - c.z_sum[i]) / scale);
  }
  return worst;
}

RenderedImage render_on(const Device& device, std::span<const Localization> locs, const RenderSettings& s,
                        std::size_t chunk) {
  Renderer r(s, make_render_engine(device, render_geometry(s)));
  for (std::size_t first = 0; first < locs.size(); first += chunk)
    r.add(locs.subspan(first, std::min(chunk, locs.size() - first)));
  return r.finish();
}

RenderSettings settings(RenderMode mode, bool color_z) {
  RenderSettings s;
  s.camera_px_nm = 100;
  s.pixel_nm = 10;
  s.field_width_px = 60;  // 600 x 400 rendered pixels
  s.field_height_px = 40;
  s.mode = mode;
  s.color_z = color_z;
  return s;
}

}  // namespace

TEST_CASE("CUDA render equals the CPU render: histogram, Gaussian, z sums") {
  const Device gpu = select_device(DeviceRequest::parse("cuda"), true);
  const Device cpu = Device{};
  const auto locs = random_locs(300000, 60, 40, 7);
  for (const RenderMode mode : {RenderMode::histogram, RenderMode::gaussian})
    for (const bool z : {false, true}) {
      INFO((mode == RenderMode::histogram ? "histogram" : "gaussian") << (z ? " + z" : ""));
      const RenderSettings s = settings(mode, z);
      const RenderedImage c = render_on(cpu, locs, s, locs.size());
      const RenderedImage g = render_on(gpu, locs, s, locs.size());
      CHECK(g.rendered == c.rendered);
      CHECK(c.rendered > 250000);
      CHECK(c.rendered < static_cast<std::int64_t>(locs.size()));  // some fall outside
      if (mode == RenderMode::histogram) {
        CHECK(g.pixels == c.pixels);
        if (z) CHECK(worst_z(c, g) <= 1e-5);
        continue;
      }
      const Compared d = compare(c.pixels, g.pixels, 1e-6);
      MESSAGE("density: integral CPU " << d.integral_cpu << ", GPU " << d.integral_gpu << ", worst pixel " << d.worst);
      CHECK(d.integral_gpu == doctest::Approx(d.integral_cpu).epsilon(1e-5));
      CHECK(d.worst <= 1e-3);
      if (z) {
        const double zw = worst_z(c, g);
        MESSAGE("z sums: worst pixel " << zw << " of 500 nm × its density");
        CHECK(zw <= 1e-3);
        const RgbPlanes rc = color_by_z(c), rg = color_by_z(g);
        CHECK(rg.z_low == doctest::Approx(rc.z_low).epsilon(1e-4));
        CHECK(rg.z_high == doctest::Approx(rc.z_high).epsilon(1e-4));
        double worst_rgb = 0;
        for (std::size_t i = 0; i < rc.red.size(); ++i)
          worst_rgb = std::max({worst_rgb, std::abs(static_cast<double>(rg.red[i]) - rc.red[i]),
                                std::abs(static_cast<double>(rg.green[i]) - rc.green[i]),
                                std::abs(static_cast<double>(rg.blue[i]) - rc.blue[i])});
        MESSAGE("z colour: worst RGB difference " << worst_rgb);
        CHECK(worst_rgb <= 2e-3);
      }
    }
}

TEST_CASE("CUDA render: streamed chunks equal one shot; the caller's memory equals the engine's buffers") {
  const Device gpu = select_device(DeviceRequest::parse("cuda"), true);
  const auto locs = random_locs(200000, 60, 40, 11);
  const RenderSettings s = settings(RenderMode::gaussian, true);
  const RenderedImage once = render_on(gpu, locs, s, locs.size());
  for (const std::size_t chunk : {std::size_t{1}, std::size_t{997}, std::size_t{65536}}) {
    INFO("chunks of " << chunk);
    // Chunks of 1 on 200,000 localizations would take long through the Renderer: the first 3,000 only.
    const std::span<const Localization> part = chunk == 1 ? std::span(locs).first(3000) : std::span(locs);
    const RenderedImage streamed = render_on(gpu, part, s, chunk);
    const RenderedImage reference = chunk == 1 ? render_on(gpu, part, s, part.size()) : once;
    CHECK(streamed.rendered == reference.rendered);
    CHECK(compare(reference.pixels, streamed.pixels, 1e-6).worst <= 1e-3);
    CHECK(worst_z(reference, streamed) <= 1e-3);
  }
  // Points from the caller's own memory (staged by the engine) equal points written into its buffers.
  auto a = make_render_engine(gpu, render_geometry(s));
  auto b = make_render_engine(gpu, render_geometry(s));
  std::vector<render_math::RenderPoint> mine = {{10.5f, 20.25f, 1.0f, 2.0f, 5.0f}, {599.9f, 399.9f, 0.5f, 0.5f, -3.0f},
                                                {-1.0f, 3.0f, 1.0f, 1.0f, 0.0f}, {300.0f, 200.0f, 30.0f, 30.0f, 1.0f}};
  a->add(mine);
  auto room = b->buffer(mine.size());
  std::copy(mine.begin(), mine.end(), room.begin());
  b->add(room);
  const auto n = static_cast<std::size_t>(s.field_width_px * s.field_height_px * 100);
  std::vector<float> da(n), za(n), db(n), zb(n);
  a->read(da, za);
  b->read(db, zb);
  CHECK(da == db);
  CHECK(za == zb);
  const double total = std::accumulate(da.begin(), da.end(), 0.0);
  // The outside point is left out; the corner one (0.1 px inside both edges, σ 0.5) keeps Φ(0.2)² of itself.
  const double corner = std::pow(0.5 * std::erfc(-0.2 / std::sqrt(2.0)), 2);
  CHECK(total == doctest::Approx(2.0 + corner).epsilon(2e-3));
}
