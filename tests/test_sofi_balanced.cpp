// Balanced SOFI (sofi --balanced): the parameter formulas on model cumulants,
// Richardson-Lucy on a known blob, the on-time ratio and brightness of simulated
// exponential blinking recovered at the emitters, the cumulant pages unchanged by
// --balanced, the files and pages written, and bad options as one-line errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nanoscopy/io/gray_label.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/sofi/balanced.hpp"
#include "nanoscopy/sofi/balanced_output.hpp"
#include "nanoscopy/sofi/deconvolve.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

std::string q(const fs::path& p) { return shell_quote(p.string()); }

CommandResult sofi(const std::string& args) { return run_command(shell_quote(app_path("sofi")) + " " + args); }

std::vector<float> page(const fs::path& path, std::int64_t k, std::int64_t* pages = nullptr) {
  auto reader = open_stack(path.string());
  if (pages) *pages = reader->info().frames;
  std::vector<float> v(static_cast<std::size_t>(reader->info().pixels_per_frame()));
  reader->read_float(k, 1, v.data());
  return v;
}

struct Emitter {
  double x = 0, y = 0;
  double on_fraction = 0;  // measured over the movie by the simulator
};

// <stem>_emitters.csv of bench simulate blinking: id, x_px, y_px, ...
std::vector<Emitter> read_emitters(const fs::path& csv) {
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<Emitter> out;
  while (std::getline(in, line)) {
    std::stringstream s(line);
    std::vector<std::string> cells;
    for (std::string cell; std::getline(s, cell, ',');) cells.push_back(cell);
    REQUIRE(cells.size() >= 7);
    out.push_back({std::stod(cells[1]), std::stod(cells[2]), std::stod(cells[6])});
  }
  return out;
}

double median(std::vector<double> v) {
  REQUIRE(!v.empty());
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double rms_width(const std::vector<float>& img, std::int64_t n, double c) {
  double s = 0, m = 0;
  for (std::int64_t y = 0; y < n; ++y)
    for (std::int64_t x = 0; x < n; ++x) {
      const double v = img[static_cast<std::size_t>(y * n + x)];
      s += v;
      m += v * (static_cast<double>(x) - c) * (static_cast<double>(x) - c);
    }
  return std::sqrt(m / s);
}

}  // namespace

TEST_CASE("the bSOFI parameter formulas invert the two-state emitter model, rho = 1/2 included") {
  for (double rho : {0.05, 0.2, 0.3, 0.5, 0.7, 0.95})
    for (double eps : {10.0, 1500.0}) {
      const double n = 2.5, w2 = rho * (1 - rho);
      const double k2 = n * std::pow(eps, 2) * w2, k3 = n * std::pow(eps, 3) * w2 * (1 - 2 * rho),
                   k4 = n * std::pow(eps, 4) * w2 * (1 - 6 * rho + 6 * rho * rho);
      const auto m = molecular_parameters(k2, k3, k4, 0);
      CAPTURE(rho);
      CHECK(m.rho == doctest::Approx(rho).epsilon(1e-9));
      CHECK(m.epsilon == doctest::Approx(eps).epsilon(1e-9));
      CHECK(m.density == doctest::Approx(n).epsilon(1e-9));
    }
  // Masked: K2 at or below the floor, and no real brightness (3 k1^2 - 2 k2 <= 0).
  CHECK(std::isnan(molecular_parameters(1.0, 0.5, 0.1, 1.0).rho));
  CHECK(std::isnan(molecular_parameters(1.0, 0.1, 1.0, 0.0).epsilon));
  // rho (1 - rho) < 0.01: rho and epsilon stay, N (its denominator vanishes) is masked.
  const double rho = 0.005, w2 = rho * (1 - rho);
  const auto m = molecular_parameters(w2, w2 * (1 - 2 * rho), w2 * (1 - 6 * rho + 6 * rho * rho), 0);
  CHECK(m.rho == doctest::Approx(rho).epsilon(1e-9));
  CHECK(std::isnan(m.density));
}

TEST_CASE("Richardson-Lucy sharpens a blurred Gaussian blob back to its own width and keeps its flux") {
  // Object: a Gaussian of rms width 1 px; blurred by the order-n kernel of a camera PSF of sigma 2 px
  // (rms width about sqrt(1 + 4/n + 1/(12 n)) px). 50 iterations on noise-free data bring the width
  // back to 1 px within 3 % (a prototype in double converges to 1.000 by then; float rounding and the
  // reflection padding are the margin).
  const std::int64_t n = 41;
  const double c = 20;
  for (int order : {2, 3, 4}) {
    std::vector<float> obj(static_cast<std::size_t>(n * n));
    double total = 0;
    for (std::int64_t y = 0; y < n; ++y)
      for (std::int64_t x = 0; x < n; ++x) {
        const double dx = static_cast<double>(x) - c, dy = static_cast<double>(y) - c;
        const double v = std::exp(-(dx * dx + dy * dy) / 2.0);
        obj[static_cast<std::size_t>(y * n + x)] = static_cast<float>(v);
        total += v;
      }
    const PsfKernel k = order_psf_kernel(2.0, order);
    std::vector<float> blurred = obj;
    convolve_reflect(blurred, n, n, k);
    const double blurred_width = rms_width(blurred, n, c);
    CHECK(blurred_width > 1.3);
    std::vector<float> x = blurred;
    richardson_lucy(x, n, n, k, 50);
    CAPTURE(order);
    CHECK(rms_width(x, n, c) == doctest::Approx(1.0).epsilon(0.03));
    double sum = 0;
    for (float v : x) sum += v;
    CHECK(sum == doctest::Approx(total).epsilon(1e-3));
  }
  // Negative pixels are refused (the caller deconvolves |kappa|).
  std::vector<float> bad{1.0f, -1.0f, 1.0f, 1.0f};
  CHECK_THROWS(richardson_lucy(bad, 2, 2, order_psf_kernel(1.0, 2), 5));
}

TEST_CASE("the order-n kernel and mass of the pixel-integrated PSF") {
  // Sum of U^n over the plane: about (2 pi sigma^2)^(1 - n) / n for a wide PSF (pixel integration adds
  // 1/12 px^2 to sigma^2).
  for (int order : {2, 3, 4}) {
    const double s2 = 3.0 * 3.0 + 1.0 / 12;
    const double expect = std::pow(2 * M_PI * s2, 1 - order) / order;
    CHECK(order_psf_mass(3.0, order) == doctest::Approx(expect).epsilon(0.01));
    const PsfKernel k = order_psf_kernel(3.0, order);
    double sum = 0;
    for (float t : k.taps) sum += t;
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-6));
    CHECK(k.radius == static_cast<int>(std::ceil(4 * 3.0 / std::sqrt(order))) + 1);
  }
}

// The full tier (scripts/test --full): 20,000 frames, minutes on two cores; the wiring is the next case's.
TEST_CASE("balanced SOFI recovers the on-time ratio and brightness of exponential blinking at the emitters" *
          doctest::test_suite("full")) {
  // Isolated emitters, on 40 frames and off 120 on average: rho = 0.25; brightness 3000 photons per frame.
  // With lags 0..3 a telegraph process of switching rate lambda = 1/40 + 1/120 gives
  // kappa2 = w2 e^-lambda, kappa3 = w3 e^-2lambda, kappa4 = w2 ((1-2rho)^2 e^-3lambda - 2 w2 e^-4lambda),
  // so the estimates are biased by about rho: +(1-2rho) w2 lambda = +0.003 and eps: -(1 + 2 w2) lambda
  // = -4.6 % (less in practice: the frames average the blinking). Measured on seeds 7-10 (2-5 isolated
  // emitters each): rho within 0.005 of each emitter's own on-fraction over the movie, eps within 2.5 %,
  // N summed over the spot 0.94-1.01. Tolerances: rho +- 0.02 per emitter (against its own
  // on-fraction: 20,000 frames hold only 125 blinking cycles, so it strays from 0.25 by up to 0.04),
  // eps +- 10 % per emitter and +- 6 % in the median, N +- 15 % in the median.
  TempDir dir;
  const fs::path stack = dir / "blink.tif";
  const auto sim = run_command(shell_quote(app_path("bench")) + " simulate blinking --quiet -o " + q(stack) +
                               " --frames 20000 --size 48 --emitters 10 --blinking exponential --mean-on 40"
                               " --mean-off 120 --brightness 3000 --psf-sigma 1.5 --background 20 --seed 7");
  REQUIRE_MESSAGE(sim.exit_code == 0, sim.output);
  const auto r = sofi("--device cpu --block 20000 --balanced --psf-sigma 1.5 " + q(stack) + " -o " + q(dir / "s.tif"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const auto rho = page(dir / "s_balanced.tif", 1), eps = page(dir / "s_balanced.tif", 2),
             density = page(dir / "s_balanced.tif", 3);
  const auto emitters = read_emitters(dir / "blink_emitters.csv");
  std::vector<double> rhos, epss, counts;
  for (std::size_t i = 0; i < emitters.size(); ++i) {
    const auto& e = emitters[i];
    bool isolated = e.x > 5 && e.y > 5 && e.x < 42 && e.y < 42;
    for (std::size_t j = 0; j < emitters.size(); ++j)
      if (j != i && std::hypot(e.x - emitters[j].x, e.y - emitters[j].y) < 8) isolated = false;
    if (!isolated) continue;
    const auto at = static_cast<std::size_t>(std::lround(e.y) * 48 + std::lround(e.x));
    CAPTURE(e.x);
    CAPTURE(e.y);
    CHECK(std::abs(rho[at] - e.on_fraction) < 0.02);
    CHECK(eps[at] == doctest::Approx(3000).epsilon(0.10));
    rhos.push_back(rho[at]);
    epss.push_back(eps[at]);
    // N sums to one emitter over its spot (the masked rim, NaN, left out).
    double n = 0;
    for (long y = std::lround(e.y) - 3; y <= std::lround(e.y) + 3; ++y)
      for (long x = std::lround(e.x) - 3; x <= std::lround(e.x) + 3; ++x)
        if (std::isfinite(density[static_cast<std::size_t>(y * 48 + x)])) n += density[static_cast<std::size_t>(y * 48 + x)];
    counts.push_back(n);
  }
  REQUIRE(rhos.size() >= 4);
  CAPTURE(rhos.size());
  CHECK(median(epss) == doctest::Approx(3000).epsilon(0.06));
  CHECK(median(counts) == doctest::Approx(1.0).epsilon(0.15));
}

TEST_CASE("--balanced writes its pages and previews and leaves the cumulant pages as they are") {
  TempDir dir;
  const fs::path stack = dir / "qd.tif";
  const auto sim = run_command(shell_quote(app_path("bench")) + " simulate blinking --quiet -o " + q(stack) +
                               " --frames 1500 --size 32 --emitters 20 --seed 3");
  REQUIRE_MESSAGE(sim.exit_code == 0, sim.output);
  const std::string run = "--quiet --device cpu --block 500 " + q(stack);
  REQUIRE(sofi(run + " -o " + q(dir / "plain.tif")).exit_code == 0);
  const auto r = sofi(run + " --balanced --psf-sigma 1.5 -o " + q(dir / "b.tif"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  // Orders 2..4 and the mean: the same pages, bit for bit, with or without --balanced.
  for (std::int64_t k = 0; k < 4; ++k) CHECK(page(dir / "plain.tif", k) == page(dir / "b.tif", k));
  std::int64_t pages = 0;
  const auto balanced = page(dir / "b_balanced.tif", 0, &pages);
  CHECK(pages == 4);
  CHECK(*std::max_element(balanced.begin(), balanced.end()) == doctest::Approx(1.0).epsilon(0.05));
  const auto rho = page(dir / "b_balanced.tif", 1);
  for (float v : rho) CHECK((std::isnan(v) || (v >= 0 && v <= 1)));
  CHECK(fs::file_size(dir / "b_balanced.png") > 0);
  CHECK(fs::file_size(dir / "b_balanced_panel.png") > 0);
  {  // Each of the panel's four tiles is labelled in its top-left corner: white glyphs in a black box.
    auto png = open_stack((dir / "b_balanced_panel.png").string());
    const std::int64_t pw = png->info().width, ph = png->info().height, w = pw / 2, h = ph / 2;
    const auto panel = page(dir / "b_balanced_panel.png", 0);
    const float white = *std::max_element(panel.begin(), panel.end());
    REQUIRE(white > 0);
    for (int t = 0; t < 4; ++t) {
      CAPTURE(t);
      const std::string label = balanced_panel_label(t, w);
      const int scale = balanced_panel_label_scale(w);
      std::vector<float> want(static_cast<std::size_t>(pw * ph), 0.5f);  // 0.5: not part of the label
      const std::int64_t x0 = (t % 2) * w, y0 = (t / 2) * h;
      burn_gray_label(want.data(), pw, ph, x0, y0, x0 + w, y0 + h, label, scale);
      std::int64_t ink = 0, wrong = 0;
      for (std::size_t i = 0; i < want.size(); ++i) {
        if (want[i] == 0.5f) continue;
        ink += want[i] == 1.0f;
        wrong += (want[i] == 1.0f) != (panel[i] == white) || (want[i] == 0.0f && panel[i] != 0.0f);
      }
      CHECK(ink > 10);
      CHECK(wrong == 0);
    }
    CHECK(std::string(balanced_panel_label(2, 200)) == "EPSILON");
    CHECK(std::string(balanced_panel_label(3, 20)) == "N");  // too narrow for DENSITY N
  }
  if (python_available()) {
    const auto check = run_python("tiff_check_imagej.py",
                                  {(dir / "b_balanced.tif").string(), "IYX", "100", "balanced (bSOFI, relative brightness)",
                                   "on-time ratio rho", "brightness epsilon (photons per frame while on)",
                                   "density N (emitters per pixel)"});
    CHECK_MESSAGE(check.exit_code == 0, check.output);
  }

  // Order 3: the balanced image alone (rho, epsilon, N need order 4), no panel; HDF5 datasets by name.
  const auto r3 = sofi(run + " --balanced --psf-sigma 1.5 --orders 2,3 -o " + q(dir / "o3.h5"));
  REQUIRE_MESSAGE(r3.exit_code == 0, r3.output);
  CHECK(fs::exists(dir / "o3_balanced.h5"));
  CHECK(fs::exists(dir / "o3_balanced.png"));
  CHECK(!fs::exists(dir / "o3_balanced_panel.png"));
  const auto r4 = sofi(run + " --balanced --psf-sigma 1.5 --deconvolution rl --rl-iterations 5 -o " +
                       q(dir / "h.h5"));
  REQUIRE_MESSAGE(r4.exit_code == 0, r4.output);
  if (python_available()) {
    const auto check = run_command(std::string(NANOSCOPY_TEST_PYTHON) +
                                   " -c \"import h5py,sys; f=h5py.File(sys.argv[1]); "
                                   "assert sorted(f.keys())==['balanced','density','epsilon','rho'], list(f.keys()); "
                                   "assert f['rho'].shape==(32,32)\" " +
                                   q(dir / "h_balanced.h5"));
    CHECK_MESSAGE(check.exit_code == 0, check.output);
  }
}

namespace {
// sofi --balanced --deconvolution smre on 600 frames; `capped`: SMRE stops after 20 iterations (--deconvolution-smre).
void balanced_with_smre(bool capped) {
  TempDir dir;
  const fs::path stack = dir / "qd.tif";
  const auto sim = run_command(shell_quote(app_path("bench")) + " simulate blinking --quiet -o " + q(stack) +
                               " --frames 600 --size 32 --emitters 12 --seed 5");
  REQUIRE_MESSAGE(sim.exit_code == 0, sim.output);
  std::string options;
  if (capped) {
    write_file(dir / "capped.prm", "subsection program flow control\n  set maximum iterations = 20\nend\n");
    options = "--deconvolution-smre " + q(dir / "capped.prm");
  }
  const auto r = sofi("--device cpu --block 600 --balanced --psf-sigma 1.5 --deconvolution smre " + options + " " +
                      q(stack) + " -o " + q(dir / "s.tif"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(contains(r.output, "SMRE"));
  const auto balanced = page(dir / "s_balanced.tif", 0);
  CHECK(*std::max_element(balanced.begin(), balanced.end()) == doctest::Approx(1.0).epsilon(0.05));
}
}  // namespace

// The default tier: the wiring, with SMRE capped at 20 iterations (--deconvolution-smre).
TEST_CASE("--balanced with SMRE as the deconvolution, capped at 20 iterations") { balanced_with_smre(true); }

// The full tier: SMRE with its defaults, to convergence (about a minute on two cores).
TEST_CASE("--balanced with SMRE as the deconvolution" * doctest::test_suite("full")) { balanced_with_smre(false); }

TEST_CASE("--balanced: bad options are one-line usage errors and leave nothing behind") {
  TempDir dir;
  const fs::path stack = dir / "qd.tif";
  REQUIRE(run_command(shell_quote(app_path("bench")) + " simulate blinking --quiet -o " + q(stack) +
                      " --frames 100 --size 16 --emitters 4 --seed 1")
              .exit_code == 0);
  const std::string run = "--device cpu --block 50 " + q(stack) + " -o " + q(dir / "x.tif") + " ";
  check_one_line_error(sofi(run + "--balanced --psf-sigma 1.5 --orders 2"), "sofi", 2, "--balanced",
                       "largest order 3 or 4");
  check_one_line_error(sofi(run + "--balanced --orders 2,3,4"), "sofi", 2, "--balanced", "needs the camera PSF");
  check_one_line_error(sofi(run + "--balanced --psf-sigma 1.5 --moments"), "sofi", 2, "--balanced",
                       "leave out --moments");
  CHECK(!fs::exists(dir / "x.tif"));
  CHECK(!fs::exists(dir / "x_balanced.tif"));
}
