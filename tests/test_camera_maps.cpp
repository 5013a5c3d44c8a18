// sCMOS camera maps (core/camera_maps): HDF5 and TIFF round trips, the ROI →
// photoelectrons and var/gain² conversion, and every refusal as one line naming
// the file, with the input exit code.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <vector>

#include "nanoscopy/core/camera_maps.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/hdf5_images.hpp"
#include "nanoscopy/sim/movie.hpp"
#include "fuzz/h5_recipe.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

CameraMaps small_maps(std::int64_t w = 7, std::int64_t h = 5) {
  CameraMaps m;
  m.width = w;
  m.height = h;
  for (std::int64_t k = 0; k < w * h; ++k) {
    m.offset.push_back(100.0f + static_cast<float>(k % 7));
    m.gain.push_back(2.0f + 0.01f * static_cast<float>(k));
    m.variance.push_back(4.0f + static_cast<float>(k));
  }
  return m;
}

void check_same(const CameraMaps& a, const CameraMaps& b) {
  CHECK(a.width == b.width);
  CHECK(a.height == b.height);
  CHECK(a.offset == b.offset);
  CHECK(a.gain == b.gain);
  CHECK(a.variance == b.variance);
}

// An InputError (exit 3) on one line, naming `where` and `what`.
void check_input_error(const std::function<void()>& f, const std::string& where, const std::string& what) {
  const auto e = expect_error<InputError>(f);
  INFO(e.message());
  CHECK(exit_code(e.kind()) == 3);
  CHECK(e.message().find('\n') == std::string::npos);
  CHECK(contains(e.where(), where));
  CHECK(contains(e.what(), what));
}

}  // namespace

TEST_CASE("camera maps: HDF5 and TIFF round trips") {
  TempDir dir;
  const auto maps = small_maps();
  const auto h5 = (dir / "maps.h5").string();
  write_camera_maps_hdf5(h5, maps, "test");
  auto back = read_camera_maps(h5);
  check_same(back, maps);
  CHECK(back.source == h5);
  back.check_frame_size(7, 5, "movie.tif");

  const auto o = (dir / "offset.tif").string(), g = (dir / "gain.tif").string(), v = (dir / "variance.tif").string();
  write_camera_maps_tiff(o, g, v, maps, "test");
  check_same(read_camera_maps(o + "," + g + "," + v), maps);

  // Simulated maps are valid and reproducible.
  const auto sim = simulate_camera_maps(32, 16, 7);
  sim.validate();
  check_same(sim, simulate_camera_maps(32, 16, 7));
}

TEST_CASE("camera maps: a ROI in ADU becomes photoelectrons and the variance shift var/gain^2") {
  const auto maps = small_maps();
  // A 3x2 ROI at (2, 1).
  const std::vector<float> adu = {150, 160, 170, 180, 190, 200};
  const std::vector<std::uint16_t> adu16 = {150, 160, 170, 180, 190, 200};
  std::vector<float> photons(6), shift(6), photons16(6);
  maps.to_photons(adu.data(), 2, 1, 3, 2, photons.data(), shift.data());
  maps.to_photons(adu16.data(), 2, 1, 3, 2, photons16.data(), nullptr);
  for (std::int64_t j = 0; j < 2; ++j)
    for (std::int64_t i = 0; i < 3; ++i) {
      const auto k = static_cast<std::size_t>((1 + j) * 7 + 2 + i), o = static_cast<std::size_t>(j * 3 + i);
      CHECK(photons[o] == doctest::Approx((adu[o] - maps.offset[k]) / maps.gain[k]));
      CHECK(shift[o] == doctest::Approx(maps.variance[k] / (maps.gain[k] * maps.gain[k])));
      CHECK(photons16[o] == photons[o]);
    }
  CHECK(scmos_photons(110.0f, 100.0f, 2.0f) == 5.0f);
  CHECK(scmos_variance_shift(8.0f, 2.0f) == 2.0f);
  CHECK_THROWS_AS(maps.to_photons(adu.data(), 5, 4, 3, 2, photons.data(), shift.data()), std::out_of_range);
}

TEST_CASE("camera maps: bad files are refused on one line naming the file") {
  TempDir dir;
  const auto good = small_maps();
  auto write_h5 = [&](const std::string& name, CameraMaps m) {
    const auto path = (dir / name).string();
    write_camera_maps_hdf5(path, m);
    return path;
  };

  // The frame size of the movie.
  const auto ok = write_h5("ok.h5", good);
  check_input_error([&] { read_camera_maps(ok).check_frame_size(32, 24, "movie.tif"); }, "ok.h5",
                    "are 7x5 pixels but the frames of movie.tif are 32x24");

  // A missing dataset.
  const auto two = (dir / "two.h5").string();
  write_hdf5_images(two, {{"offset", 7, 5, good.offset.data(), "", 0}, {"gain", 7, 5, good.gain.data(), "", 0}}, "");
  check_input_error([&] { read_camera_maps(two); }, "two.h5", "no dataset /variance");

  // Non-finite values, zero or negative gain, negative variance.
  auto bad = good;
  bad.offset[9] = std::numeric_limits<float>::quiet_NaN();
  check_input_error([&] { read_camera_maps(write_h5("nan.h5", bad)); }, "nan.h5:/offset",
                    "offset map: pixel (2, 1) = nan is not a finite number");
  bad = good;
  bad.variance[3] = std::numeric_limits<float>::infinity();
  check_input_error([&] { read_camera_maps(write_h5("inf.h5", bad)); }, "inf.h5:/variance", "is not a finite number");
  bad = good;
  bad.gain[0] = 0;
  check_input_error([&] { read_camera_maps(write_h5("zero_gain.h5", bad)); }, "zero_gain.h5:/gain",
                    "gain map: pixel (0, 0) = 0 is not positive");
  bad.gain[0] = -2;
  check_input_error([&] { read_camera_maps(write_h5("negative_gain.h5", bad)); }, "negative_gain.h5",
                    "is not positive");
  bad = good;
  bad.variance[34] = -1;
  check_input_error([&] { read_camera_maps(write_h5("negative_variance.h5", bad)); }, "negative_variance.h5:/variance",
                    "variance map: pixel (6, 4) = -1 is negative");

  // Three TIFFs: the bad one is named; maps of different sizes.
  const auto o = (dir / "o.tif").string(), g = (dir / "g.tif").string(), v = (dir / "v.tif").string();
  bad = good;
  bad.gain[5] = -1;
  write_camera_maps_tiff(o, g, v, bad);
  check_input_error([&] { read_camera_maps(o + "," + g + "," + v); }, "g.tif", "gain map: pixel (5, 0)");
  const auto small = small_maps(6, 5);
  const auto v6 = (dir / "v6.tif").string();
  write_camera_maps_tiff((dir / "o6.tif").string(), (dir / "g6.tif").string(), v6, small);
  check_input_error([&] { read_camera_maps(o + "," + o + "," + v6); }, "v6.tif",
                    "the variance map is 6x5 pixels but the offset map");

  // Files that are not maps.
  check_input_error([&] { read_camera_maps((dir / "missing.h5").string()); }, "missing.h5", "no such file");
  check_input_error([&] { read_camera_maps(o); }, "o.tif", "not an HDF5 file");
  check_input_error([&] { read_camera_maps(o + "," + g + "," + (dir / "nope.tif").string()); }, "nope.tif",
                    "no such file");

  // A malformed option is a usage error (exit 2).
  const auto usage = expect_error<UsageError>([&] { read_camera_maps(o + "," + g); });
  CHECK(exit_code(usage.kind()) == 2);
  CHECK(usage.where() == "--camera-maps");
  CHECK(contains(usage.what(), "expected one HDF5 file (maps.h5) or three"));
  CHECK(expect_error<UsageError>([&] { read_camera_maps(o + ",," + v); }).where() == "--camera-maps");
}

TEST_CASE("camera maps: sizes from the file are checked before the pixels are allocated") {
  TempDir dir;
  // 100000 x 100000 float32 maps (40 GB each) in a file of a few kB: chunked and never written.
  const auto huge = (dir / "huge.h5").string();
  nanoscopy::fuzz::h5recipe::write_file(huge, "data /offset f32 100000 100000\ndata /gain f32 100000 100000\n"
                                              "data /variance f32 100000 100000\n");
  REQUIRE(std::filesystem::file_size(huge) < 1'000'000);
  // Against the movie's frames: named, before any allocation.
  check_input_error([&] { read_camera_maps(huge, "--camera-maps", {32, 24, "movie.tif"}); }, "huge.h5:/offset",
                    "are 100000x100000 pixels but the frames of movie.tif are 32x24");
  // Without a movie: the size limit.
  check_input_error([&] { read_camera_maps(huge); }, "huge.h5:/offset", "(at most 268435456 pixels)");
  // The right size passes the check (and reads).
  const auto maps = small_maps();
  const auto ok = (dir / "ok.h5").string();
  write_camera_maps_hdf5(ok, maps);
  CHECK(read_camera_maps(ok, "--camera-maps", {maps.width, maps.height, "movie.tif"}).pixels() == maps.pixels());
}
