// The spline PSF core of issue 27: spline_from_volume (core/spline_psf_build)
// against an analytic astigmatic Gaussian volume (exact at the samples, close
// between them), the evaluator's derivatives (core/spline_psf_eval.hpp)
// against finite differences, Gpufit's edge clamping, and the HDF5
// calibration (core/spline_psf_io): round trip, h5py reading what we write,
// and every error path.
#include <doctest/doctest.h>
#include <hdf5.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/spline_psf_build.hpp"
#include "nanoscopy/core/spline_psf_eval.hpp"
#include "nanoscopy/core/spline_psf_io.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;

namespace {

// An astigmatic Gaussian sampled on a nx×ny×nz grid: σx, σy change with z in
// opposite directions. Smooth, so a tricubic interpolant must be close.
double analytic(double x, double y, double z, int nx, int ny, int nz) {
  const double cx = (nx - 1) / 2.0, cy = (ny - 1) / 2.0, cz = (nz - 1) / 2.0;
  const double u = (z - cz) / (nz - 1);
  const double sx = 2.0 * (1 + 0.8 * u * u + 0.6 * u), sy = 2.0 * (1 + 0.8 * u * u - 0.6 * u);
  return std::exp(-0.5 * ((x - cx) * (x - cx) / (sx * sx) + (y - cy) * (y - cy) / (sy * sy)));
}

std::vector<float> analytic_volume(int nx, int ny, int nz) {
  std::vector<float> v(static_cast<std::size_t>(nx) * ny * nz);
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) v[(static_cast<std::size_t>(z) * ny + y) * nx + x] = static_cast<float>(analytic(x, y, z, nx, ny, nz));
  return v;
}

SplineView view(const SplinePsf& p) {
  return {p.coefficients.data(), p.size_x, p.size_y, p.size_z};
}

double focus_scale(const std::vector<float>& v, int nx, int ny, int z) {
  double s = 0;
  for (int i = 0; i < nx * ny; ++i) s += v[static_cast<std::size_t>(z) * nx * ny + i];
  return 1.0 / s;
}

}  // namespace

TEST_CASE("spline_from_volume interpolates the samples exactly and a smooth PSF closely between them") {
  constexpr int nx = 17, ny = 15, nz = 21;
  const auto vol = analytic_volume(nx, ny, nz);
  const SplinePsf p = spline_from_volume(vol, nx, ny, nz, 1.0, 20.0, 8.0, 7.0, 10.0, 110.0);
  CHECK(p.size_x == nx - 1);
  CHECK(p.size_y == ny - 1);
  CHECK(p.size_z == nz - 1);
  CHECK(p.coefficients.size() == static_cast<std::size_t>(16 * 14 * 20 * 64));
  CHECK(p.z_step_nm == 20.0);
  CHECK(p.centre_x == 8.0);
  CHECK(p.focus_index == 10.0);
  CHECK(p.pixel_size_nm == 110.0);
  const double scale = focus_scale(vol, nx, ny, 10);
  const SplineView s = view(p);
  // Exact at every sample (the last sample of an axis through the edge interval at fraction 1).
  double worst = 0;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        const double want = vol[(static_cast<std::size_t>(z) * ny + y) * nx + x] * scale;
        worst = std::max(worst, std::fabs(spline_psf_value<double>(s, x, y, z) - want));
      }
  const double peak = scale;  // the analytic peak is 1 before normalisation
  CHECK(worst < 1e-6 * peak);
  // In-focus slice sums to 1.
  double sum = 0;
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x) sum += spline_psf_value<double>(s, x, y, 10.0);
  CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
  // Between samples: within 1.5 % of the peak of the analytic function (σ ≥ 1.5 voxels; cubic
  // Hermite with central-difference derivatives has an O(h²) derivative error).
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> ux(0, nx - 1), uy(0, ny - 1), uz(0, nz - 1);
  double worst_between = 0;
  for (int i = 0; i < 2000; ++i) {
    const double x = ux(rng), y = uy(rng), z = uz(rng);
    worst_between = std::max(worst_between, std::fabs(spline_psf_value<double>(s, x, y, z) - analytic(x, y, z, nx, ny, nz) * scale));
  }
  MESSAGE("largest interpolation error between samples: " << worst_between / peak << " of the peak");
  CHECK(worst_between < 0.015 * peak);
  CHECK(worst_between > 0);  // the test can fail: it measures something
}

TEST_CASE("spline derivatives match finite differences, and the spline is C1 across interval faces") {
  constexpr int nx = 13, ny = 13, nz = 15;
  const SplinePsf p = spline_from_volume(analytic_volume(nx, ny, nz), nx, ny, nz, 1.0, 10.0, 6.0, 6.0, 7.0, 100.0);
  const SplineView s = view(p);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> ux(0.5, nx - 1.5), uz(0.5, nz - 1.5);
  const double h = 1e-5;
  for (int i = 0; i < 300; ++i) {
    const double x = ux(rng), y = ux(rng), z = uz(rng);
    double f, fx, fy, fz;
    spline_psf_evaluate<double>(s, x, y, z, f, fx, fy, fz);
    const auto v = [&](double a, double b, double c) { return spline_psf_value<double>(s, a, b, c); };
    const double nfx = (v(x + h, y, z) - v(x - h, y, z)) / (2 * h);
    const double nfy = (v(x, y + h, z) - v(x, y - h, z)) / (2 * h);
    const double nfz = (v(x, y, z + h) - v(x, y, z - h)) / (2 * h);
    const double tol = 2e-6 + 1e-4 * std::fabs(f);
    CHECK(std::fabs(fx - nfx) < tol);
    CHECK(std::fabs(fy - nfy) < tol);
    CHECK(std::fabs(fz - nfz) < tol);
  }
  // Continuity of value and gradient on both sides of a face (x = 5, y = 6.3, z = 7.4).
  double a[4], b[4];
  spline_psf_evaluate<double>(s, 5.0 - 1e-9, 6.3, 7.4, a[0], a[1], a[2], a[3]);
  spline_psf_evaluate<double>(s, 5.0, 6.3, 7.4, b[0], b[1], b[2], b[3]);
  for (int k = 0; k < 4; ++k) CHECK(a[k] == doctest::Approx(b[k]).epsilon(1e-6));
  // float evaluation agrees with double.
  float ff, ffx, ffy, ffz;
  double df, dfx, dfy, dfz;
  spline_psf_evaluate<float>(s, 5.3f, 6.6f, 7.2f, ff, ffx, ffy, ffz);
  spline_psf_evaluate<double>(s, 5.3f, 6.6f, 7.2f, df, dfx, dfy, dfz);
  CHECK(ff == doctest::Approx(df).epsilon(1e-5));
  CHECK(ffz == doctest::Approx(dfz).epsilon(1e-3));
}

TEST_CASE("spline evaluation outside the grid continues the edge interval as Gpufit does, and stays finite") {
  constexpr int n = 6;
  const SplinePsf p = spline_from_volume(analytic_volume(n, n, n), n, n, n, 1.0, 10.0, 2.5, 2.5, 2.5, 100.0);
  const SplineView s = view(p);
  // Just past the last sample: the same polynomial as just inside (continuous).
  CHECK(spline_psf_value<double>(s, 5.0 + 1e-9, 2.2, 2.2) == doctest::Approx(spline_psf_value<double>(s, 5.0 - 1e-9, 2.2, 2.2)));
  for (double u : {-50.0, -1.0, 7.0, 60.0}) {
    double f, fx, fy, fz;
    spline_psf_evaluate<double>(s, u, u, u, f, fx, fy, fz);
    CHECK(std::isfinite(f));
    CHECK(std::isfinite(fx));
  }
}

TEST_CASE("spline_psf_node_value is the spline at the nearest grid node, clamped to the first size - 1 nodes") {
  constexpr int nx = 9, ny = 8, nz = 11;
  const SplinePsf p = spline_from_volume(analytic_volume(nx, ny, nz), nx, ny, nz, 1.0, 10.0, 4.0, 3.5, 5.0, 100.0);
  const SplineView s = view(p);
  int checked = 0;
  for (double z : {0.0, 2.4, 4.6, 9.2})
    for (double y : {0.3, 3.0, 5.49})
      for (double x : {0.0, 1.51, 6.7}) {
        const double node = spline_psf_value<double>(s, std::floor(x + 0.5), std::floor(y + 0.5), std::floor(z + 0.5));
        CHECK(spline_psf_node_value<double>(s, x, y, z) == doctest::Approx(node).epsilon(1e-6));
        CHECK(spline_psf_node_value<float>(s, static_cast<float>(x), static_cast<float>(y), static_cast<float>(z)) ==
              doctest::Approx(node).epsilon(1e-6));
        ++checked;
      }
  CHECK(checked == 36);
  // Outside the grid: the nearest node inside (index 0 or size - 1), finite.
  CHECK(spline_psf_node_value<double>(s, -40.0, 2.0, 3.0) == doctest::Approx(spline_psf_value<double>(s, 0.0, 2.0, 3.0)));
  CHECK(spline_psf_node_value<double>(s, 2.0, 2.0, 99.0) ==
        doctest::Approx(spline_psf_value<double>(s, 2.0, 2.0, static_cast<double>(p.size_z - 1))));
}

TEST_CASE("spline_from_volume refuses NaN, Inf and axes shorter than 4 samples, and stays finite on any finite input") {
  auto vol = analytic_volume(5, 5, 5);
  CHECK_THROWS_AS(spline_from_volume(analytic_volume(3, 5, 5), 3, 5, 5, 1, 10, 1, 2, 2, 100), InputError);
  CHECK_THROWS_AS(spline_from_volume(analytic_volume(5, 5, 3), 5, 5, 3, 1, 10, 2, 2, 1, 100), InputError);
  CHECK_THROWS_AS(spline_from_volume(vol, 5, 5, 4, 1, 10, 2, 2, 2, 100), InputError);  // wrong length
  auto bad = vol;
  bad[17] = std::nanf("");
  CHECK_THROWS_AS(spline_from_volume(bad, 5, 5, 5, 1, 10, 2, 2, 2, 100), InputError);
  bad[17] = INFINITY;
  CHECK_THROWS_AS(spline_from_volume(bad, 5, 5, 5, 1, 10, 2, 2, 2, 100), InputError);
  // Zeros, a focal plane summing to 0, huge and tiny values, noise: finite coefficients.
  std::mt19937 rng(1);
  std::normal_distribution<float> noise(0, 1);
  std::vector<std::vector<float>> cases = {std::vector<float>(125, 0.0f), std::vector<float>(125, 3.0e38f),
                                           std::vector<float>(125, 1e-40f)};
  std::vector<float> noisy(125), alternating(125);
  for (int i = 0; i < 125; ++i) {
    noisy[i] = noise(rng);
    alternating[i] = (i % 2 ? 1 : -1) * 3.0e38f;
  }
  cases.push_back(noisy);
  cases.push_back(alternating);
  for (const auto& c : cases) {
    const SplinePsf p = spline_from_volume(c, 5, 5, 5, 1, 10, 2, 2, 2, 100);
    bool finite = true;
    for (float v : p.coefficients) finite = finite && std::isfinite(v);
    CHECK(finite);
  }
}

TEST_CASE("spline calibration HDF5: round trip, read by h5py, atomic") {
  test::TempDir dir;
  constexpr int nx = 7, ny = 6, nz = 9;
  const auto vol = analytic_volume(nx, ny, nz);
  const SplinePsf p = spline_from_volume(vol, nx, ny, nz, 0.5, 25.0, 3.0, 2.5, 4.25, 108.0);
  const std::string path = (dir / "psf.h5").string();
  write_spline_calibration(path, p, &vol);
  CHECK(looks_like_hdf5(path));
  const SplinePsf q = read_spline_calibration(path);
  CHECK(q.size_x == p.size_x);
  CHECK(q.size_y == p.size_y);
  CHECK(q.size_z == p.size_z);
  CHECK(q.coefficients == p.coefficients);
  CHECK(q.voxel_xy_px == 0.5);
  CHECK(q.z_step_nm == 25.0);
  CHECK(q.centre_x == 3.0);
  CHECK(q.centre_y == 2.5);
  CHECK(q.focus_index == 4.25);
  CHECK(q.pixel_size_nm == 108.0);
  CHECK(q.source == path);
  // Without a volume too.
  write_spline_calibration((dir / "b.h5").string(), p, nullptr);
  CHECK(read_spline_calibration((dir / "b.h5").string()).coefficients == p.coefficients);
  // Nothing but the two files (no temporary left behind).
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) files += e.is_regular_file() ? 1 : 0;
  CHECK(files == 2);
  if (test::python_available()) {
    // Interval (2, 1, 3), coefficient a=1, b=2, c=3 → index 1·16 + 2·4 + 3 = 27.
    const auto r = test::run_python("h5_check_spline.py", {path, "2", "1", "3", "27"});
    REQUIRE(r.exit_code == 0);
    CHECK(test::contains(r.output, "shape 6 5 8 64"));
    CHECK(test::contains(r.output, "dtype float32"));
    char want[64];
    std::snprintf(want, sizeof want, "value %.9g", p.coefficients[p.interval_offset(2, 1, 3) + 27]);
    CHECK(test::contains(r.output, want));
    CHECK(test::contains(r.output, "format nanoscopy spline calibration"));
    CHECK(test::contains(r.output, "focus_index 4.25"));
    CHECK(test::contains(r.output, "volume 9 6 7"));
  } else {
    MESSAGE("h5py not available: the independent reader check is skipped");
  }
  // Mismatched sizes are refused before anything is written.
  SplinePsf broken = p;
  broken.coefficients.pop_back();
  CHECK_THROWS_AS(write_spline_calibration((dir / "c.h5").string(), broken, nullptr), UsageError);
  CHECK_FALSE(std::filesystem::exists(dir / "c.h5"));
  CHECK_THROWS_AS(write_spline_calibration((dir / "no-such-dir" / "c.h5").string(), p, nullptr), OutputError);
}

namespace {

// A calibration file built by hand, each piece optional or altered, for the error paths.
struct Recipe {
  bool group = true, dataset = true, format = true, bad_format = false;
  double version = kSplinePsfVersion;
  bool drop_attribute = false, nan_attribute = false, nan_coefficient = false, string_number = false;
  std::vector<hsize_t> dims = {3, 3, 3, 64};
  bool integer_type = false;
};

void make_file(const std::string& path, const Recipe& r) {
  hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(file >= 0);
  if (r.group) {
    hid_t g = H5Gcreate2(file, "spline", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const auto number = [&](const char* name, double v) {
      hid_t sp = H5Screate(H5S_SCALAR);
      hid_t a = H5Acreate2(g, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
      H5Awrite(a, H5T_NATIVE_DOUBLE, &v);
      H5Aclose(a);
      H5Sclose(sp);
    };
    const auto text = [&](const char* name, const char* v) {
      hid_t t = H5Tcopy(H5T_C_S1);
      H5Tset_size(t, std::strlen(v) + 1);
      hid_t sp = H5Screate(H5S_SCALAR);
      hid_t a = H5Acreate2(g, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
      H5Awrite(a, t, v);
      H5Aclose(a);
      H5Sclose(sp);
      H5Tclose(t);
    };
    if (r.format) text("format", r.bad_format ? "something else" : kSplineCalibrationFormat);
    number("version", r.version);
    const char* names[] = {"voxel_xy_px", "z_step_nm", "centre_x", "centre_y", "focus_index", "pixel_size_nm"};
    const double values[] = {1, 10, 1.5, 1.5, 1.5, 100};
    for (int i = 0; i < 6; ++i) {
      if (r.drop_attribute && i == 4) continue;
      if (r.string_number && i == 1) {
        text(names[i], "ten");
        continue;
      }
      number(names[i], r.nan_attribute && i == 1 ? NAN : values[i]);
    }
    if (r.dataset) {
      hsize_t n = 1;
      for (hsize_t d : r.dims) n *= d;
      std::vector<float> c(n, 0.01f);
      if (r.nan_coefficient) c[n / 2] = NAN;
      hid_t sp = H5Screate_simple(static_cast<int>(r.dims.size()), r.dims.data(), nullptr);
      hid_t type = r.integer_type ? H5T_STD_I32LE : H5T_IEEE_F32LE;
      hid_t d = H5Dcreate2(g, "coefficients", type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, c.data());
      H5Dclose(d);
      H5Sclose(sp);
    }
    H5Gclose(g);
  }
  H5Fclose(file);
}

void check_refused(const std::string& path, const std::string& part) {
  try {
    read_spline_calibration(path);
    FAIL("no error for " << part);
  } catch (const InputError& e) {
    CHECK(e.where() == path);
    CHECK_MESSAGE(test::contains(e.what(), part), e.what());
  }
}

}  // namespace

TEST_CASE("spline calibration HDF5: every problem is one InputError naming the file") {
  test::TempDir dir;
  const std::string good = (dir / "good.h5").string();
  make_file(good, {});
  CHECK(read_spline_calibration(good).size_x == 3);
  const auto make = [&](const std::string& name, const Recipe& r) {
    const std::string path = (dir / name).string();
    make_file(path, r);
    return path;
  };
  check_refused((dir / "missing.h5").string(), "not an HDF5 file");
  test::write_file(dir / "text.h5", "{\"not\": \"hdf5\"}");
  check_refused((dir / "text.h5").string(), "not an HDF5 file");
  Recipe r;
  r.group = false;
  check_refused(make("nogroup.h5", r), "no /spline group");
  r = {};
  r.dataset = false;
  check_refused(make("nodata.h5", r), "no dataset /spline/coefficients");
  r = {};
  r.dims = {3, 3, 3, 16};
  check_refused(make("shape.h5", r), "shape [size_x, size_y, size_z, 64]");
  r = {};
  r.dims = {3, 3, 192};
  check_refused(make("rank.h5", r), "shape [size_x, size_y, size_z, 64]");
  r = {};
  r.integer_type = true;
  check_refused(make("int.h5", r), "floating point");
  r = {};
  r.nan_coefficient = true;
  check_refused(make("nan.h5", r), "NaN");
  r = {};
  r.version = 7;
  check_refused(make("version.h5", r), "version 7");
  r = {};
  r.format = false;
  check_refused(make("noformat.h5", r), "format attribute");
  r = {};
  r.bad_format = true;
  check_refused(make("format.h5", r), "something else");
  r = {};
  r.drop_attribute = true;
  check_refused(make("noattr.h5", r), "no attribute focus_index");
  r = {};
  r.nan_attribute = true;
  check_refused(make("nanattr.h5", r), "z_step_nm is not finite");
  r = {};
  r.string_number = true;
  check_refused(make("strattr.h5", r), "z_step_nm of the spline calibration is not one number");
}
