// fit2d render (loc/render.hpp): known points rendered — the integral is the
// number of localizations (histogram and Gaussian, away from the edges), each
// lands on the pixel its position names, the Gaussian's width follows the
// precision; the TIFF carries the rendered pixel size, the PNG preview exists;
// bad input is one line. Streaming: the chunked readers give the rows of the
// one-shot reader, and a picture accumulated chunk by chunk equals the one-shot
// picture. The z colour: the colour map's ends, a pixel's hue from its mean z,
// the 3-page TIFF and the RGB PNG.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/loc/render.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;

namespace {

Localization at(double x, double y, double lp) {
  Localization l;
  l.x = x;
  l.y = y;
  l.lpx = l.lpy = lp;
  l.photons = 1000;
  l.sigma = 1.3;
  return l;
}

double total(const RenderedImage& r) { return std::accumulate(r.pixels.begin(), r.pixels.end(), 0.0); }

}  // namespace

TEST_CASE("render: known points land where they should, with their integral and width") {
  // Camera px of 100 nm, a 20 × 10 px field, rendered at 10 nm: 200 × 100 pixels.
  RenderSettings s;
  s.camera_px_nm = 100;
  s.pixel_nm = 10;
  s.field_width_px = 20;
  s.field_height_px = 10;
  // (x + 0.5)·100 nm: x = 4.5 px → 500 nm → rendered pixel 50; y = 2.05 px → 255 nm → pixel 25.
  const std::vector<Localization> locs = {at(4.5, 2.05, 0.2), at(12.0, 6.0, 0.3), at(30.0, 3.0, 0.2)};
  s.mode = RenderMode::histogram;
  const auto h = render_localizations(locs, s);
  CHECK(h.width == 200);
  CHECK(h.height == 100);
  CHECK(h.rendered == 2);  // the third is outside the field
  CHECK(total(h) == doctest::Approx(2));
  CHECK(h.pixels[25 * 200 + 50] == 1);
  CHECK(h.pixels[static_cast<std::size_t>(std::floor(6.5 * 10) * 200 + std::floor(12.5 * 10))] == 1);

  s.mode = RenderMode::gaussian;
  const auto g = render_localizations(locs, s);
  CHECK(total(g) == doctest::Approx(2).epsilon(1e-4));  // far from the edges: the whole unit each
  // The first point's centre of mass and spread (σ = 0.2 px = 20 nm = 2 rendered pixels).
  double m = 0, mx = 0, mxx = 0;
  for (std::int64_t j = 0; j < 50; ++j)
    for (std::int64_t i = 0; i < 100; ++i) {
      const double v = g.pixels[static_cast<std::size_t>(j * 200 + i)];
      m += v;
      mx += v * (i + 0.5);
      mxx += v * (i + 0.5) * (i + 0.5);
    }
  CHECK(m == doctest::Approx(1).epsilon(1e-4));
  CHECK(mx / m == doctest::Approx(50.0).epsilon(1e-3));
  const double sd = std::sqrt(mxx / m - (mx / m) * (mx / m));
  CHECK(sd == doctest::Approx(std::sqrt(4.0 + 1.0 / 12)).epsilon(0.02));  // σ² plus a pixel's 1/12

  double bar = 0;
  const auto preview = preview_with_scale_bar(g, 10, bar);
  CHECK(bar == 200);  // a fifth of 2,000 nm, rounded down to 1, 2 or 5 × 10ⁿ
  CHECK(preview.size() == g.pixels.size());
}

TEST_CASE("fit2d render: a TIFF with the rendered pixel size, its PNG preview; one-line errors") {
  TempDir dir;
  const auto picasso = peer_file("picasso_testdata_locs.hdf5").string();
  const auto tif = (dir / "picture.tif").string();
  const auto r = run_command(shell_quote(app_path("fit2d")) + " render " + shell_quote(picasso) + " -o " +
                             shell_quote(tif) + " --pixel 13");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(std::filesystem::exists(dir / "picture.png"));
  auto stack = open_stack(tif);
  CHECK(stack->info().pixel_size_nm == doctest::Approx(13));
  CHECK(stack->info().width == 320);  // Picasso's 32 px of 130 nm at 13 nm
  CHECK(stack->info().type == PixelType::f32);
  std::vector<float> pixels(static_cast<std::size_t>(stack->info().width * stack->info().height));
  stack->read_raw(0, 1, pixels.data());
  const double sum = std::accumulate(pixels.begin(), pixels.end(), 0.0);
  CHECK(sum == doctest::Approx(static_cast<double>(read_localization_file(picasso).locs.size())).epsilon(0.01));

  write_file(dir / "empty.csv", "");
  check_one_line_error(run_command(shell_quote(app_path("fit2d")) + " render " + shell_quote((dir / "empty.csv").string()) +
                                   " --pixel-size 100 -o " + shell_quote((dir / "e.tif").string())),
                       "fit2d", 3, "empty.csv", "empty");
  CHECK_FALSE(std::filesystem::exists(dir / "e.tif"));
  CHECK_FALSE(std::filesystem::exists(dir / "e.png"));
}

TEST_CASE("registration: a point lands exactly o/2 rendered pixels further left and up in Picasso's picture") {
  // o = 100 nm / 25 nm = 4 rendered pixels per camera pixel; one point at (10.3, 5.7) camera px.
  RenderSettings s;
  s.camera_px_nm = 100;
  s.pixel_nm = 25;
  s.field_width_px = 20;
  s.field_height_px = 12;
  const double o = s.camera_px_nm / s.pixel_nm;
  const std::vector<Localization> locs = {at(10.3, 5.7, 0.15)};
  const auto centroid = [&](RenderRegistration registration, RenderMode mode) {
    s.registration = registration;
    s.mode = mode;
    const RenderedImage img = render_localizations(locs, s);
    double m = 0, mx = 0, my = 0;
    for (std::int64_t j = 0; j < img.height; ++j)
      for (std::int64_t i = 0; i < img.width; ++i) {
        const double v = img.pixels[static_cast<std::size_t>(j * img.width + i)];
        m += v;
        mx += v * static_cast<double>(i);
        my += v * static_cast<double>(j);
      }
    REQUIRE(m > 0);
    return std::pair{mx / m, my / m};
  };
  // Histogram: the pixel floor(o·(x + 0.5)) = 43 (camera) against Picasso's floor(o·x) = 41 (render.py's _fill).
  const auto [hx_camera, hy_camera] = centroid(RenderRegistration::camera, RenderMode::histogram);
  const auto [hx_picasso, hy_picasso] = centroid(RenderRegistration::picasso, RenderMode::histogram);
  CHECK(hx_camera == 43);
  CHECK(hx_picasso == 41);
  CHECK(hy_camera == 24);  // floor(4 · 6.2)
  CHECK(hy_picasso == 22);  // floor(4 · 5.7)
  // Gaussian: the centres of mass differ by exactly o/2 in x and in y.
  const auto [gx_camera, gy_camera] = centroid(RenderRegistration::camera, RenderMode::gaussian);
  const auto [gx_picasso, gy_picasso] = centroid(RenderRegistration::picasso, RenderMode::gaussian);
  CHECK(gx_camera - gx_picasso == doctest::Approx(o / 2).epsilon(1e-4));
  CHECK(gy_camera - gy_picasso == doctest::Approx(o / 2).epsilon(1e-4));
  CHECK(render_origin_px(RenderRegistration::camera) == -0.5);
  CHECK(render_origin_px(RenderRegistration::picasso) == 0.0);
}

TEST_CASE("fit2d render --registration: recorded in the TIFF's description and the HDF5's attributes") {
  TempDir dir;
  const auto picasso = peer_file("picasso_testdata_locs.hdf5").string();
  const auto render = [&](const std::string& out, const std::string& extra) {
    const auto r = run_command(shell_quote(app_path("fit2d")) + " render " + shell_quote(picasso) + " -o " +
                               shell_quote((dir / out).string()) + " --pixel 65 " + extra);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    return r.output;
  };
  CHECK(contains(render("camera.tif", ""), "camera registration"));
  CHECK(contains(render("picasso.tif", "--registration picasso"), "picasso registration"));
  const std::string camera = read_file(dir / "camera.tif"), picasso_tif = read_file(dir / "picasso.tif");
  CHECK(contains(camera, "registration=camera\norigin_camera_px=-0.5\n"));
  CHECK(contains(picasso_tif, "registration=picasso\norigin_camera_px=0\n"));
  // The same picture moved by o/2 = 1 rendered pixel (130 nm camera pixels at 65 nm): Picasso's pixel (i, j)
  // is ours (i + 1, j + 1) away from the edges.
  auto a = open_stack((dir / "camera.tif").string()), b = open_stack((dir / "picasso.tif").string());
  const std::int64_t w = a->info().width, h = a->info().height;
  std::vector<float> pa(static_cast<std::size_t>(w * h)), pb(pa.size());
  a->read_raw(0, 1, pa.data());
  b->read_raw(0, 1, pb.data());
  double moved = 0, kept = 0;
  for (std::int64_t j = 4; j + 4 < h; ++j)
    for (std::int64_t i = 4; i + 4 < w; ++i) {
      moved += std::abs(pa[static_cast<std::size_t>((j + 1) * w + i + 1)] - pb[static_cast<std::size_t>(j * w + i)]);
      kept += std::abs(pa[static_cast<std::size_t>(j * w + i)] - pb[static_cast<std::size_t>(j * w + i)]);
    }
  CHECK(moved < 1e-3 * kept);
  if (python_available()) {  // HDF5 pictures carry it as root attributes
    render("picasso.h5", "--registration picasso");
    const auto check = run_command("/usr/bin/python3 -c \"import h5py,sys; f=h5py.File(sys.argv[1]); "
                                   "sys.exit(0 if f.attrs['registration'] in (b'picasso','picasso') else 1)\" " +
                                   shell_quote((dir / "picasso.h5").string()));
    CHECK_MESSAGE(check.exit_code == 0, check.output);
  }
}

namespace {

std::vector<Localization> random_locs(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> pos(0.5, 31.0), lp(0.02, 0.3), z(-300.0, 300.0);
  std::vector<Localization> locs(count);
  std::int64_t frame = 0;
  for (Localization& l : locs) {
    l.frame = frame++ / 50;  // sorted by frame, as Picasso's writer wants
    l.x = pos(rng);
    l.y = pos(rng);
    l.lpx = l.lpy = lp(rng);
    l.z = z(rng);
    l.photons = 1000;
    l.sigma = 1.2;
  }
  return locs;
}

}  // namespace

TEST_CASE("streaming: chunked readers give the one-shot rows; chunked rendering equals one shot") {
  TempDir dir;
  const auto locs = random_locs(5000, 3);
  LocWriterContext ctx;
  ctx.camera.pixel_size_nm = 130;
  ctx.width = ctx.height = 32;
  ctx.frames = 100;
  ctx.three_d = true;
  for (const std::string name : {"l.hdf5", "l.csv"}) {
    INFO(name);
    const std::string path = (dir / name).string();
    write_localizations(path, "", ctx, locs);
    const LocalizationFile whole = read_localization_file(path);
    REQUIRE(whole.locs.size() == locs.size());
    auto reader = open_localization_reader(path);
    CHECK(reader->info().pixel_size_nm == 130);
    CHECK(reader->info().width == 32);
    CHECK(reader->info().locs.empty());
    CHECK(reader->rows() == (name == "l.hdf5" ? 5000 : -1));
    std::vector<Localization> chunk, all;
    std::size_t chunks = 0;
    while (reader->read(chunk, 777)) {
      CHECK(chunk.size() <= 777);
      all.insert(all.end(), chunk.begin(), chunk.end());
      ++chunks;
    }
    CHECK(chunk.empty());
    CHECK(chunks == 7);  // ⌈5000 / 777⌉
    REQUIRE(all.size() == whole.locs.size());
    for (std::size_t i = 0; i < all.size(); ++i) {
      CHECK(all[i].frame == whole.locs[i].frame);
      CHECK(all[i].x == whole.locs[i].x);
      CHECK(all[i].z == whole.locs[i].z);
    }
    CHECK_FALSE(reader->read(chunk, 10));  // stays at the end
  }

  RenderSettings s;
  s.camera_px_nm = 130;
  s.pixel_nm = 13;
  s.field_width_px = s.field_height_px = 32;
  s.color_z = true;
  for (const RenderMode mode : {RenderMode::histogram, RenderMode::gaussian}) {
    s.mode = mode;
    const RenderedImage once = render_localizations(locs, s);
    Renderer r(s, make_cpu_render_engine(render_geometry(s)));
    for (std::size_t first = 0; first < locs.size(); first += 333)
      r.add(std::span(locs).subspan(first, std::min<std::size_t>(333, locs.size() - first)));
    const RenderedImage streamed = r.finish();
    CHECK(streamed.rendered == once.rendered);
    CHECK(streamed.rendered == 5000);
    // The CPU engine sums in double in the same order either way: identical.
    CHECK(streamed.pixels == once.pixels);
    CHECK(streamed.z_sum == once.z_sum);
    if (mode == RenderMode::histogram)
      CHECK(total(once) == 5000);
    else
      CHECK(total(once) == doctest::Approx(5000).epsilon(2e-3));
    CHECK(streamed.z_min >= -300);
    CHECK(streamed.z_max <= 300);
    CHECK(streamed.z_max - streamed.z_min > 500);
  }
}

TEST_CASE("z colour: the mean z of a pixel picks its hue, the density its brightness") {
  // Two points far apart at z = −100 and +100 nm, a third at +100 on the second: the
  // range is the 1st to 99th percentile of the pixels' mean z, here −100 to 100.
  RenderSettings s;
  s.camera_px_nm = 100;
  s.pixel_nm = 10;
  s.field_width_px = 20;
  s.field_height_px = 10;
  s.mode = RenderMode::histogram;
  s.color_z = true;
  std::vector<Localization> locs = {at(2.0, 2.0, 0.1), at(12.0, 6.0, 0.1), at(12.0, 6.0, 0.1)};
  locs[0].z = -100;
  locs[1].z = 100;
  locs[2].z = 100;
  const RenderedImage img = render_localizations(locs, s);
  const auto low = static_cast<std::size_t>(25 * 200 + 25), high = static_cast<std::size_t>(65 * 200 + 125);
  REQUIRE(img.pixels[low] == 1);
  REQUIRE(img.pixels[high] == 2);
  CHECK(img.z_sum[high] == 200);
  const RgbPlanes rgb = color_by_z(img);
  CHECK(rgb.z_low == -100);
  CHECK(rgb.z_high == 100);
  float r = 0, g = 0, b = 0;
  viridis(0.0, r, g, b);  // viridis' dark purple
  CHECK(r == doctest::Approx(0x44 / 255.0));
  CHECK(b == doctest::Approx(0x54 / 255.0));
  // The white point is the 99.5th percentile of the non-empty pixels {1, 2}, taken as the preview's (rounded
  // down): 1. The low pixel: purple at full brightness; the high one: yellow, clipped at full.
  CHECK(rgb.red[low] == doctest::Approx(0x44 / 255.0));
  CHECK(rgb.blue[low] == doctest::Approx(0x54 / 255.0));
  viridis(1.0, r, g, b);
  CHECK(rgb.red[high] == doctest::Approx(r));
  CHECK(rgb.green[high] == doctest::Approx(g));
  CHECK(rgb.blue[high] == doctest::Approx(b));
  CHECK(rgb.red[0] == 0);  // empty pixels are black
  viridis(0.5, r, g, b);
  CHECK(g == doctest::Approx(0x90 / 255.0));  // the middle anchor, teal
  // Among 90 more pixels of 2 (white point 2), the low pixel (1) is at half brightness.
  {
    std::vector<Localization> many = locs;
    for (int k = 0; k < 90; ++k) {  // 2 rendered pixels apart: 90 pixels of 2
      many.push_back(at(0.25 + 0.2 * k, 9.0, 0.1));
      many.push_back(at(0.25 + 0.2 * k, 9.0, 0.1));
    }
    const RenderedImage dim = render_localizations(many, s);
    const RgbPlanes c = color_by_z(dim, -100, 100);  // the added points at z = 0: the middle
    float r0 = 0, g0 = 0, b0 = 0;
    viridis(0.0, r0, g0, b0);
    CHECK(c.red[low] == doctest::Approx(0.5 * r0));
    CHECK(c.blue[low] == doctest::Approx(0.5 * b0));
  }
  // A range given: z = 100 at its middle.
  const RgbPlanes given = color_by_z(img, 0, 200);
  CHECK(given.green[high] == doctest::Approx(g));
  // Without z sums: refused.
  s.color_z = false;
  CHECK_THROWS_AS(color_by_z(render_localizations(locs, s)), UsageError);
}

TEST_CASE("fit2d render --color z: three float pages red, green, blue and an RGB PNG") {
  TempDir dir;
  const auto locs = random_locs(3000, 5);
  LocWriterContext ctx;
  ctx.camera.pixel_size_nm = 130;
  ctx.width = ctx.height = 32;
  ctx.frames = 100;
  ctx.three_d = true;
  const auto in = (dir / "l.hdf5").string();
  write_localizations(in, "", ctx, locs);
  const auto tif = (dir / "depth.tif").string();
  const auto r = run_command(shell_quote(app_path("fit2d")) + " render " + shell_quote(in) + " -o " + shell_quote(tif) +
                             " --pixel 26 --color z --color-range -300:300 --device cpu");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("viridis from -300 nm") != std::string::npos);
  auto stack = open_stack(tif);
  CHECK(stack->info().frames == 3);
  CHECK(stack->info().width == 160);
  CHECK(stack->info().pixel_size_nm == doctest::Approx(26));
  std::vector<float> pages(static_cast<std::size_t>(3 * 160 * 160));
  stack->read_raw(0, 3, pages.data());
  float top = 0;
  for (float v : pages) {
    CHECK(v >= 0);
    top = std::max(top, v);
  }
  CHECK(top <= 1);
  CHECK(top > 0.5);
  // The PNG's IHDR: width, height (big-endian), bit depth 8, colour type 2 (RGB).
  std::ifstream png(dir / "depth.png", std::ios::binary);
  unsigned char head[26] = {};
  png.read(reinterpret_cast<char*>(head), sizeof head);
  REQUIRE(png.good());
  CHECK((head[16] << 24 | head[17] << 16 | head[18] << 8 | head[19]) == 160);
  CHECK(head[24] == 8);
  CHECK(head[25] == 2);

  check_one_line_error(run_command(shell_quote(app_path("fit2d")) + " render " + shell_quote(in) + " -o " +
                                   shell_quote((dir / "x.tif").string()) + " --color z --color-range 5:1"),
                       "fit2d", 2, "--color-range", "LOW < HIGH");
  CHECK_FALSE(std::filesystem::exists(dir / "x.tif"));
}
