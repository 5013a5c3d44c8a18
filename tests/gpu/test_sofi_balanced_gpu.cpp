// sofi --balanced on the GPU: the cumulants and the Richardson-Lucy iterations
// run on the CUDA engines, the reconvolutions and the parameters on the host, so
// the balanced files must match the CPU run's. Tolerances: the CUDA cumulants
// equal the CPU's to 1e-9 relative (test_sofi_gpu.cpp) and the CUDA iterations
// the CPU's bit for bit (test_deconvolve_gpu.cpp), which float images and 20
// iterations carry to at most a few float ulps: 1e-4 relative to each page's largest value in every pixel of the balanced
// image; rho, epsilon and N in all but 1 % of the pixels (ratios near the mask's edge).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "nanoscopy/io/stack_reader.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

std::string q(const fs::path& p) { return shell_quote(p.string()); }

std::vector<float> read_page(const fs::path& path, std::int64_t k) {
  auto reader = open_stack(path.string());
  std::vector<float> v(static_cast<std::size_t>(reader->info().pixels_per_frame()));
  reader->read_float(k, 1, v.data());
  return v;
}

}  // namespace

TEST_CASE("sofi --balanced on cuda:0 writes the CPU run's balanced image, rho, epsilon and density") {
  TempDir dir;
  const fs::path stack = dir / "blink.tif";
  const auto sim = run_command(shell_quote(app_path("bench")) + " simulate blinking --quiet -o " + q(stack) +
                               " --frames 4000 --size 64 --emitters 30 --blinking exponential --mean-on 20"
                               " --mean-off 60 --brightness 2000 --psf-sigma 1.5 --seed 11");
  REQUIRE_MESSAGE(sim.exit_code == 0, sim.output);
  for (const std::string device : {"cpu", "cuda:0"}) {
    const auto r = run_command(shell_quote(app_path("sofi")) + " --quiet --block 2000 --balanced --psf-sigma 1.5 --device " +
                               device + " " + q(stack) + " -o " + q(dir / (device == "cpu" ? "c.tif" : "g.tif")));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  }
  for (std::int64_t k = 0; k < 4; ++k) {
    const auto c = read_page(dir / "c_balanced.tif", k), g = read_page(dir / "g_balanced.tif", k);
    REQUIRE(c.size() == g.size());
    double scale = 0;
    for (float v : c)
      if (std::isfinite(v)) scale = std::max(scale, std::abs(static_cast<double>(v)));
    // Pixels whose mask differs or whose values differ by more than 1e-4 of the page's largest value.
    std::size_t off = 0;
    for (std::size_t i = 0; i < c.size(); ++i)
      if (std::isfinite(c[i]) != std::isfinite(g[i]) ||
          (std::isfinite(c[i]) && std::abs(static_cast<double>(c[i]) - g[i]) > 1e-4 * scale))
        ++off;
    CAPTURE(k);
    CHECK(scale > 0);
    // The balanced image has no ratios: every pixel agrees. rho, epsilon, N are ratios, which may
    // amplify float rounding where 3 k1^2 - 2 k2 is near 0 (a masked rim): at most 1 % of pixels.
    CHECK(off <= (k == 0 ? 0 : c.size() / 100));
  }
}
