// fit2d calibrate --model spline: bead z-stacks simulated with the pupil-function PSF
// (bench simulate movie --z-stack --psf pupil) are calibrated back and the spline is
// compared with the pupil PSF itself; 5 nm steps, noisy stacks, hot pixels and one bead
// never give NaN/Inf; a stack without beads is one clear error. The formats: SMAP's
// *_3dcal.mat round trip (and scipy.io.loadmat reading it as DECODE does), Picasso's
// spline calibration written here in its exact layout and read back.
#include <doctest/doctest.h>

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numbers>
#include <random>
#include <string>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/spline_psf_eval.hpp"
#include "nanoscopy/fit/engine.hpp"
#include "nanoscopy/core/spline_psf_io.hpp"
#include "nanoscopy/fit2d/calibrate_spline.hpp"
#include "nanoscopy/io/spline_calibration_formats.hpp"
#include "nanoscopy/sim/pupil_psf.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

CommandResult app(const std::string& name, const std::string& args) {
  return run_command(shell_quote(app_path(name)) + " " + args);
}

// The pupil the stacks are simulated with: astigmatism and spherical aberration (+z and −z differ;
// centro-symmetric in x, y, so the spline's centre, the focal slice's centroid, is the emitter).
const char* kPupil = "--psf pupil --zernike 6:0.12,11:0.04 --width 128 --height 128 --pixel-size 108";

PupilPsfSettings test_pupil() {
  PupilPsfSettings s;
  s.pixel_size_nm = 108;
  s.zernike = {{6, 0.12}, {11, 0.04}};
  s.table_step_nm = 20;
  return s;
}

struct Comparison {
  double relative_rms;  // ‖spline − pupil‖ / ‖pupil‖ over ±6 px and z in [−z_max, z_max] nm
  bool finite;
};

// The spline against the pupil PSF, both normalised to their in-focus sum over the spline's box.
Comparison compare(const SplinePsf& psf, const PupilPsf& pupil, double z_max = 600) {
  const SplineView view{psf.coefficients.data(), psf.size_x, psf.size_y, psf.size_z};
  const int half = static_cast<int>(std::lround(psf.size_x * psf.voxel_xy_px)) / 2;  // px
  double pupil_focus = 0;
  for (int v = -half; v <= half; ++v)
    for (int u = -half; u <= half; ++u) pupil_focus += pupil.pixel(u, v, 0, 0, 0);
  double diff = 0, norm = 0;
  bool finite = true;
  for (const float c : psf.coefficients) finite = finite && std::isfinite(c);
  for (double z = -z_max; z <= z_max; z += 20)
    for (int v = -6; v <= 6; ++v)
      for (int u = -6; u <= 6; ++u) {
        const double s = spline_psf_value<double>(view, psf.centre_x + u / psf.voxel_xy_px, psf.centre_y + v / psf.voxel_xy_px,
                                                  psf.focus_index + z / psf.z_step_nm);
        const double p = pupil.pixel(u, v, 0, 0, z) / pupil_focus;
        finite = finite && std::isfinite(s);
        diff += (s - p) * (s - p);
        norm += p * p;
      }
  return {std::sqrt(diff / norm), finite};
}

SplinePsf calibrate_stack(const fs::path& dir, const std::string& sim_args, const std::string& cal_args,
                          std::string* output = nullptr) {
  const auto stack = (dir / "beads.tif").string();
  const auto sim = app("bench", "--quiet simulate movie --z-stack " + std::string(kPupil) + " " + sim_args + " -o " +
                                    shell_quote(stack));
  INFO(sim.output);
  REQUIRE(sim.exit_code == 0);
  const auto h5 = (dir / "psf.h5").string();
  const auto r = app("fit2d", "calibrate " + shell_quote(stack) + " --model spline -o " + shell_quote(h5) + " " + cal_args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::exists(dir / "psf.png"));
  if (output) *output = r.output;
  return read_spline_calibration(h5);
}

}  // namespace

TEST_CASE("spline calibration reproduces the pupil PSF of a 5-bead, 161-slice stack with hot pixels") {
  TempDir dir;
  std::string out;
  const SplinePsf psf = calibrate_stack(dir.path(), "--z-step 10 --beads 5 --photons 20000 --background 20 --hot-pixels 8",
                                        "--z-step 10", &out);
  CHECK(contains(out, "5 beads used"));
  CHECK(contains(out, "8 hot pixels repaired"));
  CHECK(psf.size_x == 40);  // 21 px: 41 samples half a pixel apart
  CHECK(psf.voxel_xy_px == 0.5);
  CHECK(psf.size_z >= 150);
  CHECK(psf.centre_x == 20);
  CHECK(psf.focus_index == doctest::Approx(80 - (161 - 1 - psf.size_z) / 2.0).epsilon(0.02));
  const PupilPsf pupil(test_pupil(), -600, 600);
  const Comparison c = compare(psf, pupil);
  INFO("relative RMS difference " << c.relative_rms);
  CHECK(c.finite);
  CHECK(c.relative_rms < 0.05);
}

// The largest |z error| (nm) of noise-free MLE fits with `psf` of the pupil PSF's expected spots (2000 photons, 20
// background, 13×13) at four sub-pixel positions and z from −500 to 500 nm.
double worst_subpixel_z_error(const SplinePsf& calibrated, const PupilPsf& pupil) {
  FitSettings s;
  s.model = ShapeModel::spline;
  s.estimator = Estimator::mle;
  s.spline = std::make_shared<const SplinePsf>(calibrated);
  const int box = 13;
  const double sub[4][2] = {{0, 0}, {0.25, 0.5}, {0.5, 0.25}, {-0.25, -0.25}};
  std::vector<float> pixels;
  std::vector<double> truth;
  for (double z = -500; z <= 500; z += 50)
    for (const auto& o : sub) {
      for (int v = 0; v < box; ++v)
        for (int u = 0; u < box; ++u) pixels.push_back(static_cast<float>(2000 * pupil.pixel(u, v, 6 + o[0], 6 + o[1], z) + 20));
      truth.push_back(z);
    }
  std::vector<FitResult> out(truth.size());
  make_cpu_fit_engine(s, 2)->fit(RoiBatch{pixels.data(), PixelType::f32, static_cast<std::int64_t>(truth.size()), box, box},
                                 out);
  double worst = 0;
  for (std::size_t i = 0; i < out.size(); ++i) worst = std::max(worst, std::abs(out[i].z - truth[i]));
  return worst;
}

TEST_CASE("spline calibration: half-pixel voxels, no z bias at sub-pixel positions (issue 27)") {
  // A cubic through samples one 108 nm pixel apart misses the pupil PSF (sampled near Nyquist, λ/(4 NA) = 124 nm)
  // between them: noise-free spots off the pixel centre were fitted up to ≈ 30 nm off in z where one axis of the
  // astigmatic spot is narrow. The default half-pixel voxels (Fourier-interpolated) leave a few nm.
  PupilPsfSettings settings = test_pupil();
  settings.table_step_nm = 5;
  const PupilPsf pupil(settings, -600, 600);
  TempDir dir;
  const std::string sim = "--z-step 10 --z-min -700 --z-max 700 --beads 5 --photons 30000 --background 20";
  const SplinePsf half = calibrate_stack(dir.path(), sim, "--z-step 10");
  CHECK(half.voxel_xy_px == 0.5);
  const double worst_half = worst_subpixel_z_error(half, pupil);
  const SplinePsf whole = calibrate_stack(dir.path(), sim, "--z-step 10 --oversample 1");
  CHECK(whole.voxel_xy_px == 1);
  const double worst_whole = worst_subpixel_z_error(whole, pupil);
  MESSAGE("worst noise-free z error: half-pixel voxels " << worst_half << " nm, one-pixel voxels " << worst_whole << " nm");
  CHECK(worst_half < 5);
  CHECK(worst_whole > 10);  // the cause, kept measurable
}

TEST_CASE("spline calibration: a 5 nm step, a noisy stack and a single bead never give NaN or Inf") {
  const PupilPsf pupil(test_pupil(), -600, 600);
  SUBCASE("5 nm step") {
    TempDir dir;
    const SplinePsf psf =
        calibrate_stack(dir.path(), "--z-step 5 --z-min -300 --z-max 300 --beads 5 --photons 10000", "--z-step 5");
    const Comparison c = compare(psf, pupil, 200);
    INFO("relative RMS difference " << c.relative_rms);
    CHECK(c.finite);
    CHECK(c.relative_rms < 0.08);
  }
  SUBCASE("noisy: 1500 photons per bead per slice over 50 background, 5 nm step, hot pixels") {
    TempDir dir;
    const SplinePsf psf = calibrate_stack(
        dir.path(), "--z-step 5 --z-min -300 --z-max 300 --beads 4 --photons 1500 --background 50 --hot-pixels 20",
        "--z-step 5");
    const Comparison c = compare(psf, pupil, 200);
    INFO("relative RMS difference " << c.relative_rms);
    CHECK(c.finite);
    CHECK(c.relative_rms < 0.3);
  }
  SUBCASE("one bead") {
    TempDir dir;
    std::string out;
    const SplinePsf psf = calibrate_stack(dir.path(), "--z-step 20 --beads 1 --photons 20000", "--z-step 20", &out);
    CHECK(contains(out, "1 bead used"));
    const Comparison c = compare(psf, pupil);
    INFO("relative RMS difference " << c.relative_rms);
    CHECK(c.finite);
    CHECK(c.relative_rms < 0.12);  // measured 0.085: one bead's shot noise, no averaging
  }
}

TEST_CASE("spline calibration: a 5 nm step over ±800 nm (321 slices), 5 beads" * doctest::test_suite("full")) {
  const PupilPsf pupil(test_pupil(), -600, 600);
  TempDir dir;
  const SplinePsf psf = calibrate_stack(dir.path(), "--z-step 5 --beads 5 --photons 10000", "--z-step 5");
  const Comparison c = compare(psf, pupil);
  INFO("relative RMS difference " << c.relative_rms);
  CHECK(c.finite);
  CHECK(c.relative_rms < 0.05);
}

TEST_CASE("spline calibration: a stack without beads is one clear InputError") {
  TempDir dir;
  const auto stack = (dir.path() / "empty.tif").string();
  REQUIRE(app("bench", "--quiet simulate movie --z-stack " + std::string(kPupil) +
                           " --z-step 20 --z-min -400 --z-max 400 --beads 1 --photons 0.001 -o " + shell_quote(stack))
              .exit_code == 0);
  const auto r = app("fit2d", "calibrate " + shell_quote(stack) + " --z-step 20 --model spline -o " +
                                  shell_quote((dir.path() / "psf.h5").string()));
  check_one_line_error(r, "fit2d", 3, "empty.tif", "no bead");
  CHECK(!fs::exists(dir.path() / "psf.h5"));
  CHECK(!fs::exists(dir.path() / "psf.png"));
  // The spline model writes HDF5 or MATLAB files only.
  check_one_line_error(app("fit2d", "calibrate " + shell_quote(stack) + " --z-step 20 --model spline -o " +
                                        shell_quote((dir.path() / "psf.json").string())),
                       "fit2d", 2, "-o", "psf.h5");
}

TEST_CASE("smooth_lines: the discrete smoothing spline keeps lines, removes noise, stays finite") {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0, 1);
  const std::int64_t n = 401;
  std::vector<float> data(static_cast<std::size_t>(n)), line(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) line[static_cast<std::size_t>(i)] = static_cast<float>(2 + 0.01 * static_cast<double>(i));
  data = line;
  smooth_lines(data, n, 1, {0}, 1e5);  // a huge period (λ capped at 1e10): still the line itself
  for (std::int64_t i = 0; i < n; ++i)
    CHECK(data[static_cast<std::size_t>(i)] == doctest::Approx(line[static_cast<std::size_t>(i)]).epsilon(1e-4));
  double before = 0, after = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double truth = std::sin(2 * std::numbers::pi * static_cast<double>(i) / 200.0);
    data[static_cast<std::size_t>(i)] = static_cast<float>(truth + noise(rng));
    before += std::pow(data[static_cast<std::size_t>(i)] - truth, 2);
  }
  smooth_lines(data, n, 1, {0}, 40);
  for (std::int64_t i = 0; i < n; ++i) {
    REQUIRE(std::isfinite(data[static_cast<std::size_t>(i)]));
    after += std::pow(data[static_cast<std::size_t>(i)] - std::sin(2 * std::numbers::pi * static_cast<double>(i) / 200.0), 2);
  }
  CHECK(after < 0.15 * before);
}

namespace {

SplinePsf random_psf(int nx, int ny, int nz, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  SplinePsf psf;
  psf.size_x = nx;
  psf.size_y = ny;
  psf.size_z = nz;
  psf.coefficients.resize(static_cast<std::size_t>(nx) * ny * nz * 64);
  for (auto& c : psf.coefficients) c = u(rng);
  psf.centre_x = psf.centre_y = 3.5;
  psf.focus_index = 4.25;
  psf.z_step_nm = 12.5;
  psf.pixel_size_nm = 117;
  return psf;
}

void check_same(const SplinePsf& a, const SplinePsf& b) {
  CHECK(a.size_x == b.size_x);
  CHECK(a.size_y == b.size_y);
  CHECK(a.size_z == b.size_z);
  CHECK(a.coefficients == b.coefficients);
  CHECK(a.centre_x == b.centre_x);
  CHECK(a.centre_y == b.centre_y);
  CHECK(a.focus_index == b.focus_index);
  CHECK(a.z_step_nm == b.z_step_nm);
  CHECK(a.pixel_size_nm == b.pixel_size_nm);
  CHECK(a.voxel_xy_px == b.voxel_xy_px);
}

}  // namespace

TEST_CASE("SMAP's *_3dcal.mat: ours → .mat → ours is exact; a value is where SMAP's fitter reads it") {
  REQUIRE_MESSAGE(smap_format_available(), "this build has no libmatio (Debian libmatio-dev): SMAP files untested");
  TempDir dir;
  const SplinePsf psf = random_psf(7, 5, 9, 11);  // x ≠ y ≠ z sizes: the axes cannot be confused
  const auto mat = (dir.path() / "psf_3dcal.mat").string();
  write_smap_calibration(mat, psf);
  SplinePsf back = read_spline_any(mat);
  check_same(back, psf);
  CHECK(back.source == mat);
  // Unlike ours: a centre per axis, or voxels of other than one pixel.
  SplinePsf odd = psf;
  odd.centre_y = 2;
  CHECK_THROWS_AS(write_smap_calibration((dir.path() / "odd.mat").string(), odd), UsageError);
  // Not a calibration.
  write_file(dir.path() / "junk.mat", "MATLAB 5.0 MAT-file junk");
  CHECK_THROWS_AS(read_spline_any((dir.path() / "junk.mat").string()), InputError);
  CHECK_THROWS_AS(read_spline_any((dir.path() / "missing.mat").string()), InputError);
}

TEST_CASE("SMAP's *_3dcal.mat from fit2d calibrate: scipy.io.loadmat reads what DECODE uses") {
  REQUIRE_MESSAGE(smap_format_available(), "this build has no libmatio (Debian libmatio-dev)");
  TempDir dir;
  const auto stack = (dir.path() / "beads.tif").string();
  REQUIRE(app("bench", "--quiet simulate movie --z-stack " + std::string(kPupil) +
                           " --z-step 20 --z-min -400 --z-max 400 --beads 2 --photons 20000 -o " + shell_quote(stack))
              .exit_code == 0);
  const auto mat = (dir.path() / "psf_3dcal.mat").string(), h5 = (dir.path() / "psf.h5").string();
  const auto a = app("fit2d", "calibrate " + shell_quote(stack) + " --z-step 20 --model spline -o " + shell_quote(mat));
  // --model auto (the default): the spline for a .h5 name; --oversample 1: the .mat's one-pixel voxel (its default).
  const auto b = app("fit2d", "calibrate " + shell_quote(stack) + " --z-step 20 --oversample 1 -o " + shell_quote(h5) +
                                  " --plot " + shell_quote((dir.path() / "other.png").string()));
  INFO(a.output << b.output);
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  check_same(read_spline_any(mat), read_spline_any(h5));  // the same calibration, either file
  if (!python_available()) {
    MESSAGE("skipped the scipy cross-check: Debian's python3 with numpy/h5py is missing");
    return;
  }
  const auto r = run_python("smap_check_3dcal.py", {mat, h5});
  if (r.exit_code == 77) {
    MESSAGE("skipped the scipy cross-check: " << r.output);
    return;
  }
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "ok"));
}

TEST_CASE("Picasso's spline calibration (0.11 line, Gpuspline's buffer layout) reads into the same spline") {
  // Written here exactly as picasso.io.save_spline_calibration does (h5py): dataset "coefficients",
  // float32 of nominal shape (64, nix, niy, niz) whose C-order buffer is ((iz·niy + iy)·nix + ix)·64 +
  // pz·16 + py·4 + px, and the JSON string attribute "metadata" on the root.
  TempDir dir;
  SplinePsf psf = random_psf(6, 6, 8, 5);
  psf.centre_x = psf.centre_y = 3;  // lateral_centered: (n_data − 1)/2 of its 7 samples
  const int nix = psf.size_x, niy = psf.size_y, niz = psf.size_z;
  std::vector<float> flat(psf.coefficients.size());
  for (int iz = 0; iz < niz; ++iz)
    for (int iy = 0; iy < niy; ++iy)
      for (int ix = 0; ix < nix; ++ix)
        for (int pz = 0; pz < 4; ++pz)
          for (int py = 0; py < 4; ++py)
            for (int px = 0; px < 4; ++px)
              flat[static_cast<std::size_t>(((iz * niy + iy) * nix + ix) * 64 + pz * 16 + py * 4 + px)] =
                  psf.coefficients[psf.interval_offset(ix, iy, iz) + static_cast<std::size_t>(px * 16 + py * 4 + pz)];
  const auto path = (dir.path() / "beads_spline_calib.hdf5").string();
  {
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t dims[4] = {64, static_cast<hsize_t>(nix), static_cast<hsize_t>(niy), static_cast<hsize_t>(niz)};
    const hid_t space = H5Screate_simple(4, dims, nullptr);
    const hid_t data = H5Dcreate2(file, "coefficients", H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(H5Dwrite(data, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, flat.data()) >= 0);
    const std::string meta =
        "{\"model\": \"spline-3d\", \"n_data\": [7, 7, 9], \"n_intervals\": [6, 6, 8], \"oversampling\": 1.0, "
        "\"lateral_centered\": true, \"z_center\": 4.25, \"z_init\": 4.0, \"z_step_nm\": 12.5, "
        "\"magnification_factor\": 0.79, \"correct_z_bias\": false, \"box\": 7, \"pixelsize\": 117.0, "
        "\"n_channels\": 1, \"Generated by\": \"Picasso: v0.11.0 Spline PSF calibration\"}";
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    const hid_t scalar = H5Screate(H5S_SCALAR);
    const hid_t attr = H5Acreate2(file, "metadata", type, scalar, H5P_DEFAULT, H5P_DEFAULT);
    const char* text = meta.c_str();
    REQUIRE(H5Awrite(attr, type, &text) >= 0);
    H5Aclose(attr);
    H5Sclose(scalar);
    H5Tclose(type);
    H5Dclose(data);
    H5Sclose(space);
    H5Fclose(file);
  }
  double magnification = 0;
  const SplinePsf back = read_picasso_spline_calibration(path, &magnification);
  CHECK(magnification == 0.79);
  check_same(back, psf);
  check_same(read_spline_any(path), psf);
  // Our own HDF5 is told apart by content.
  const auto ours = (dir.path() / "psf.h5").string();
  write_spline_calibration(ours, psf, nullptr);
  check_same(read_spline_any(ours), psf);
}
