// fit2d render (loc/render.hpp): known points rendered — the integral is the
// number of localizations (histogram and Gaussian, away from the edges), each
// lands on the pixel its position names, the Gaussian's width follows the
// precision; the TIFF carries the rendered pixel size, the PNG preview exists;
// bad input is one line.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <numeric>

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
