// HDF5 stacks written by h5py (tests/python/h5_make_fixtures.py) read by our
// reader, and our HDF5 image writer read back by h5py and by our reader.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/formats.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "support/test_support.hpp"

using nanoscopy::test::contains;
using nanoscopy::test::expect_error;

namespace {

using namespace nanoscopy;
namespace fs = std::filesystem;

constexpr std::int64_t kT = 5, kY = 6, kX = 7;

enum class Kind { unsigned_int, signed_int, floating };

// The pattern of h5_make_fixtures.py.
double expected_pixel(std::int64_t t, std::int64_t y, std::int64_t x, Kind kind) {
  const std::int64_t p = (131 * t + 17 * y + 7 * x) % 251;
  switch (kind) {
    case Kind::unsigned_int:
      return static_cast<double>(p);
    case Kind::signed_int:
      return static_cast<double>(p % 200 - 100);
    case Kind::floating:
      return 0.25 * static_cast<double>(p) - 7.5;
  }
  return 0;
}

// The fixtures, written once per test program by h5py. Without Python the
// cross-check cases fail here rather than pass without testing anything.
fs::path fixture(const std::string& name) {
  static test::TempDir dir;
  static bool made = false;
  if (!made) {
    REQUIRE_MESSAGE(test::python_available(), "the HDF5 cross-checks need /usr/bin/python3 with numpy and h5py");
    const auto result = test::run_python("h5_make_fixtures.py", {dir.path().string()});
    REQUIRE_MESSAGE(result.exit_code == 0, result.output);
    made = true;
  }
  return dir / name;
}

double raw_value(PixelType type, const unsigned char* data, std::size_t i) {
  const auto get = [&](auto zero) {
    decltype(zero) v;
    std::memcpy(&v, data + i * sizeof v, sizeof v);
    return static_cast<double>(v);
  };
  switch (type) {
    case PixelType::u8:
      return get(std::uint8_t{});
    case PixelType::u16:
      return get(std::uint16_t{});
    case PixelType::i16:
      return get(std::int16_t{});
    case PixelType::u32:
      return get(std::uint32_t{});
    case PixelType::i32:
      return get(std::int32_t{});
    case PixelType::f32:
      return get(float{});
    case PixelType::f64:
      return get(double{});
  }
  return 0;
}

// Reads every frame, two at a time (hyperslabs at offsets, a short last chunk),
// both raw and as float, and compares each pixel with the pattern.
void check_pattern(StackReader& reader, Kind kind, std::int64_t t_offset = 0) {
  const auto& info = reader.info();
  const auto ppf = info.pixels_per_frame();
  std::vector<unsigned char> raw;
  std::vector<float> floats;
  int mismatches = 0;
  for (std::int64_t first = 0; first < info.frames; first += 2) {
    const std::int64_t count = std::min<std::int64_t>(2, info.frames - first);
    raw.assign(static_cast<std::size_t>(count * info.bytes_per_frame()), 0xAB);
    floats.assign(static_cast<std::size_t>(count * ppf), -12345.f);
    reader.read_raw(first, count, raw.data());
    reader.read_float(first, count, floats.data());
    for (std::int64_t f = 0; f < count; ++f)
      for (std::int64_t y = 0; y < info.height; ++y)
        for (std::int64_t x = 0; x < info.width; ++x) {
          const auto i = static_cast<std::size_t>(f * ppf + y * info.width + x);
          const double want = expected_pixel(first + f + t_offset, y, x, kind);
          if (raw_value(info.type, raw.data(), i) != want || static_cast<double>(floats[i]) != want) {
            if (++mismatches <= 5)
              FAIL_CHECK("frame " << first + f << " y " << y << " x " << x << ": raw "
                                  << raw_value(info.type, raw.data(), i) << ", float " << floats[i] << ", expected "
                                  << want);
          }
        }
  }
  CHECK(mismatches == 0);
}

void check_shape(const StackReader& reader, std::int64_t frames, std::int64_t height, std::int64_t width) {
  CHECK(reader.info().frames == frames);
  CHECK(reader.info().height == height);
  CHECK(reader.info().width == width);
  CHECK(reader.info().format == "hdf5");
}

}  // namespace

TEST_CASE("h5py stacks of every pixel type are read pixel for pixel") {
  struct Case {
    const char* dtype;
    PixelType type;
    Kind kind;
  };
  const Case cases[] = {
      {"uint8", PixelType::u8, Kind::unsigned_int},
      {"uint16", PixelType::u16, Kind::unsigned_int},
      {"int16", PixelType::i16, Kind::signed_int},
      {"uint32", PixelType::u32, Kind::unsigned_int},
      {"int32", PixelType::i32, Kind::signed_int},
      {"float32", PixelType::f32, Kind::floating},
      {"float64", PixelType::f64, Kind::floating},
      // widened on read: int8 -> int16, 64-bit integers -> float64, float16 -> float32
      {"int8", PixelType::i16, Kind::signed_int},
      {"int64", PixelType::f64, Kind::signed_int},
      {"uint64", PixelType::f64, Kind::unsigned_int},
      {"float16", PixelType::f32, Kind::floating},
  };
  for (const auto& c : cases) {
    CAPTURE(c.dtype);
    auto reader = open_stack(fixture(std::string("type_") + c.dtype + ".h5").string());
    check_shape(*reader, kT, kY, kX);
    CHECK(reader->info().type == c.type);
    CHECK(reader->info().pixel_size_nm == 0.0);
    check_pattern(*reader, c.kind);
  }
}

TEST_CASE("contiguous, odd-chunked, gzip, big-endian and checksummed datasets") {
  const std::pair<const char*, Kind> cases[] = {{"layout_contiguous.h5", Kind::unsigned_int},
                                                {"layout_chunks_odd.h5", Kind::unsigned_int},
                                                {"layout_gzip.h5", Kind::unsigned_int},
                                                {"layout_bigendian.h5", Kind::unsigned_int},
                                                {"layout_fletcher.h5", Kind::floating}};
  for (const auto& c : cases) {
    const char* const name = c.first;  // not a structured binding: CAPTURE captures it (Clang 14)
    const Kind kind = c.second;
    CAPTURE(name);
    auto reader = open_stack(fixture(name).string());
    check_shape(*reader, kT, kY, kX);
    check_pattern(*reader, kind);
  }
}

TEST_CASE("a filter this HDF5 library lacks (h5py's LZF) is named at open time") {
  const auto path = fixture("layout_lzf.h5").string();
  const auto e = expect_error<InputError>([&] { open_stack(path); });
  CHECK(e.where() == path);
  CHECK(contains(e.what(), "lzf"));
  CHECK(contains(e.what(), "/data"));
}

TEST_CASE("a 2-D dataset is one frame") {
  auto reader = open_stack(fixture("image2d.h5").string());
  check_shape(*reader, 1, kY, kX);
  CHECK(reader->info().type == PixelType::f32);
  check_pattern(*reader, Kind::floating);
}

TEST_CASE("each common dataset name is found beside a thumbnail and a 1-D table") {
  for (const char* name : {"name_data.h5", "name_ImageData.h5", "name_exported_data.h5", "name_nexus.h5"}) {
    CAPTURE(name);
    auto reader = open_stack(fixture(name).string());
    check_shape(*reader, kT, kY, kX);
    check_pattern(*reader, Kind::unsigned_int);
  }
}

TEST_CASE("the only 2-D/3-D numeric dataset is found in nested groups, and can be named") {
  const auto path = fixture("nested_only.h5").string();
  for (const std::string& spec : {path, path + ":/acquisition/camera/raw/movie"}) {
    CAPTURE(spec);
    auto reader = open_stack(spec);
    check_shape(*reader, kT, kY, kX);
    CHECK(reader->info().type == PixelType::i16);
    check_pattern(*reader, Kind::signed_int);
  }
  auto reader = detail::open_hdf5(path, "acquisition/camera/raw/movie");  // the leading '/' is optional
  check_pattern(*reader, Kind::signed_int);
}

TEST_CASE("several candidates: an error listing them; file.h5:/name picks one") {
  const auto common = fixture("two_common.h5").string();
  auto e = expect_error<InputError>([&] { open_stack(common); });
  CHECK(e.where() == common);
  CHECK(contains(e.what(), "/data"));
  CHECK(contains(e.what(), "/ImageData"));
  CHECK(contains(e.what(), "two_common.h5:/data"));

  const auto other = fixture("two_other.h5").string();
  e = expect_error<InputError>([&] { open_stack(other); });
  CHECK(contains(e.what(), "/movie_a"));
  CHECK(contains(e.what(), "/group/movie_b"));

  auto image_data = open_stack(common + ":/ImageData");
  check_shape(*image_data, 3, kY, kX);
  check_pattern(*image_data, Kind::unsigned_int, 100);
  auto data = open_stack(common + ":/data");
  check_shape(*data, kT, kY, kX);
  check_pattern(*data, Kind::unsigned_int);
  auto movie_b = open_stack(other + ":/group/movie_b");
  CHECK(movie_b->info().type == PixelType::f32);
  check_pattern(*movie_b, Kind::floating);
}

TEST_CASE("datasets that are not image stacks are refused with the reason") {
  auto e = expect_error<InputError>([&] { open_stack(fixture("rank4.h5").string()); });
  CHECK(e.where() == fixture("rank4.h5").string());
  CHECK(contains(e.what(), "/data"));
  CHECK(contains(e.what(), "rank 4"));

  e = expect_error<InputError>([&] { open_stack(fixture("rank1.h5").string()); });
  CHECK(contains(e.what(), "/data"));
  CHECK(contains(e.what(), "rank 1"));

  e = expect_error<InputError>([&] { open_stack(fixture("strings.h5").string()); });
  CHECK(contains(e.what(), "/data"));
  CHECK(contains(e.what(), "string"));

  e = expect_error<InputError>([&] { open_stack(fixture("compound.h5").string() + ":/data"); });
  CHECK(contains(e.what(), "compound"));

  e = expect_error<InputError>([&] { open_stack(fixture("zero_frames.h5").string()); });
  CHECK(contains(e.what(), "empty"));

  e = expect_error<InputError>([&] { open_stack(fixture("no_images.h5").string()); });
  CHECK(contains(e.what(), "/x (1-D float64 3)"));
  CHECK(contains(e.what(), "/meta/y (1-D float64 4)"));

  e = expect_error<InputError>([&] { open_stack(fixture("only_groups.h5").string()); });
  CHECK(contains(e.what(), "no datasets"));
}

TEST_CASE("a named dataset that is missing or a group") {
  const auto path = fixture("two_other.h5").string();
  auto e = expect_error<InputError>([&] { open_stack(path + ":/nope"); });
  CHECK(e.where() == path);
  CHECK(contains(e.what(), "no dataset /nope"));
  CHECK(contains(e.what(), "/group/movie_b"));  // lists what there is
  e = expect_error<InputError>([&] { open_stack(path + ":/group/deeper/nope"); });
  CHECK(contains(e.what(), "no dataset /group/deeper/nope"));
  e = expect_error<InputError>([&] { open_stack(path + ":/group"); });
  CHECK(contains(e.what(), "/group is a group, not a dataset"));
}

TEST_CASE("pixel size from dataset or file attributes") {
  CHECK(open_stack(fixture("attr_nm.h5").string())->info().pixel_size_nm == doctest::Approx(107.5));
  CHECK(open_stack(fixture("attr_element_size.h5").string())->info().pixel_size_nm == doctest::Approx(160.0));
  CHECK(open_stack(fixture("attr_file_um.h5").string())->info().pixel_size_nm == doctest::Approx(100.0));
}

TEST_CASE("reading outside the stack is an InputError naming the file") {
  auto reader = open_stack(fixture("type_uint16.h5").string());
  std::vector<std::uint16_t> buffer(static_cast<std::size_t>(3 * kY * kX));
  const auto e = expect_error<InputError>([&] { reader->read_raw(kT - 1, 2, buffer.data()); });
  CHECK(contains(e.where(), fixture("type_uint16.h5").string()));
  CHECK(contains(e.what(), "outside"));
}

TEST_CASE("an empty or a text file named .h5 is an InputError naming the file") {
  test::TempDir dir;
  const auto empty = (dir / "empty.h5").string();
  const auto text = (dir / "notes.h5").string();
  test::write_file(empty, "");
  test::write_file(text, "this is not HDF5 at all, just some text that someone named .h5\n");
  for (const auto& path : {empty, text}) {
    CAPTURE(path);
    auto e = expect_error<InputError>([&] { open_stack(path); });
    CHECK(e.where() == path);
    e = expect_error<InputError>([&] { detail::open_hdf5(path, ""); });
    CHECK(e.where() == path);
  }
  CHECK(contains(expect_error<InputError>([&] { detail::open_hdf5(empty, ""); }).what(), "empty"));
  CHECK(contains(expect_error<InputError>([&] { detail::open_hdf5(text, ""); }).what(), "not an HDF5 file"));
  CHECK(contains(expect_error<InputError>([&] { detail::open_hdf5((dir / "missing.h5").string(), ""); }).what(), "no such file"));
}

namespace {

template <typename T>
std::vector<T> pattern_frames(std::int64_t first, std::int64_t count, std::int64_t height, std::int64_t width,
                              Kind kind) {
  std::vector<T> out;
  for (std::int64_t t = first; t < first + count; ++t)
    for (std::int64_t y = 0; y < height; ++y)
      for (std::int64_t x = 0; x < width; ++x) out.push_back(static_cast<T>(expected_pixel(t, y, x, kind)));
  return out;
}

}  // namespace

TEST_CASE("our HDF5 stacks are read by h5py and by our reader") {
  REQUIRE_MESSAGE(test::python_available(), "the HDF5 cross-checks need /usr/bin/python3 with numpy and h5py");
  test::TempDir dir;

  SUBCASE("uint16 stack, (T, Y, X), with pixel size, written in uneven chunks") {
    const auto path = (dir / "stack.h5").string();
    ImageMeta meta;
    meta.width = kX;
    meta.height = kY;
    meta.frames = 4;
    meta.type = PixelType::u16;
    meta.pixel_size_nm = 160.0;
    meta.software = "nanoscopy test 0.1.0";
    auto writer = create_image_writer(path, meta);
    writer->write(pattern_frames<std::uint16_t>(0, 3, kY, kX, Kind::unsigned_int).data(), 3);
    CHECK_FALSE(fs::exists(path));  // nothing under the final name before close()
    writer->write(pattern_frames<std::uint16_t>(3, 1, kY, kX, Kind::unsigned_int).data(), 1);
    writer->close();
    REQUIRE(fs::exists(path));
    const auto check =
        test::run_python("h5_check_image.py", {path, "data", "4", "6", "7", "uint16", "160", meta.software});
    CHECK_MESSAGE(check.exit_code == 0, check.output);

    auto reader = open_stack(path);
    check_shape(*reader, 4, kY, kX);
    CHECK(reader->info().type == PixelType::u16);
    CHECK(reader->info().pixel_size_nm == 160.0);
    check_pattern(*reader, Kind::unsigned_int);
  }

  SUBCASE("float32 single image, (Y, X), under a nested name, no pixel size") {
    const auto path = (dir / "image.hdf5").string();
    ImageMeta meta;
    meta.width = kX;
    meta.height = kY;
    meta.frames = 1;
    meta.type = PixelType::f32;
    meta.software = "nanoscopy smre 0.1.0";
    meta.dataset = "entry/data/data";
    auto writer = create_image_writer(path, meta);
    writer->write(pattern_frames<float>(0, 1, kY, kX, Kind::floating).data(), 1);
    writer->close();
    const auto check =
        test::run_python("h5_check_image.py", {path, "entry/data/data", "1", "6", "7", "float32", "0", meta.software});
    CHECK_MESSAGE(check.exit_code == 0, check.output);

    auto reader = open_stack(path);  // found by its common name
    check_shape(*reader, 1, kY, kX);
    CHECK(reader->info().type == PixelType::f32);
    CHECK(reader->info().pixel_size_nm == 0.0);
    check_pattern(*reader, Kind::floating);
  }
}

TEST_CASE("the HDF5 image writer leaves nothing behind unless closed complete") {
  test::TempDir dir;
  ImageMeta meta;
  meta.width = kX;
  meta.height = kY;
  meta.frames = 3;
  meta.type = PixelType::u16;
  const auto frames = pattern_frames<std::uint16_t>(0, 3, kY, kX, Kind::unsigned_int);
  const auto path = (dir / "out.h5").string();

  {
    auto writer = create_image_writer(path, meta);
    writer->write(frames.data(), 2);
  }  // destroyed without close()
  CHECK(fs::is_empty(dir.path()));

  {
    auto writer = create_image_writer(path, meta);
    writer->write(frames.data(), 2);
    CHECK_THROWS_AS(writer->close(), OutputError);                  // 2 of 3 frames
    CHECK_THROWS_AS(writer->write(frames.data(), 2), OutputError);  // 4 of 3 frames
  }
  CHECK(fs::is_empty(dir.path()));

  CHECK_THROWS_AS(create_image_writer((dir / "no" / "such" / "dir.h5").string(), meta), OutputError);
  meta.type = PixelType::f64;
  CHECK_THROWS_AS(create_image_writer(path, meta), UsageError);
  CHECK(fs::is_empty(dir.path()));
}
