// Picasso .raw movies: Picasso's own test movie, big-endian and float variants
// compared pixel for pixel with numpy (tests/python/raw_numpy_dump.py), and
// every broken combination of movie and .yaml.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <sstream>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/formats.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "support/test_support.hpp"

using nanoscopy::test::contains;
using nanoscopy::test::expect_error;

namespace {

using namespace nanoscopy;
namespace fs = std::filesystem;

struct Movie {
  std::int64_t frames = 0, height = 0, width = 0;
  std::vector<double> pixels;  // (T, Y, X)
};

// The movie as numpy reads it.
Movie numpy_movie(const fs::path& raw) {
  REQUIRE_MESSAGE(test::python_available(), "the .raw cross-checks need /usr/bin/python3 with numpy");
  const auto result = test::run_python("raw_numpy_dump.py", {raw.string()});
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  std::istringstream in(result.output);
  Movie movie;
  in >> movie.frames >> movie.height >> movie.width;
  double v = 0;
  while (in >> v) movie.pixels.push_back(v);
  REQUIRE(movie.frames > 0);
  REQUIRE(movie.pixels.size() == static_cast<std::size_t>(movie.frames * movie.height * movie.width));
  return movie;
}

// Reads the whole movie through read_float in chunks of 7 frames (a short last chunk).
std::vector<double> our_pixels(StackReader& reader) {
  const auto& info = reader.info();
  std::vector<double> out;
  std::vector<float> chunk;
  for (std::int64_t first = 0; first < info.frames; first += 7) {
    const std::int64_t count = std::min<std::int64_t>(7, info.frames - first);
    chunk.assign(static_cast<std::size_t>(count * info.pixels_per_frame()), -1.f);
    reader.read_float(first, count, chunk.data());
    out.insert(out.end(), chunk.begin(), chunk.end());
  }
  return out;
}

void check_same_as_numpy(StackReader& reader, const fs::path& raw) {
  const Movie movie = numpy_movie(raw);
  CHECK(reader.info().frames == movie.frames);
  CHECK(reader.info().height == movie.height);
  CHECK(reader.info().width == movie.width);
  const auto ours = our_pixels(reader);
  REQUIRE(ours.size() == movie.pixels.size());
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < ours.size(); ++i)
    if (ours[i] != static_cast<double>(static_cast<float>(movie.pixels[i])) && ++mismatches <= 5)
      FAIL_CHECK("pixel " << i << ": ours " << ours[i] << ", numpy " << movie.pixels[i]);
  CHECK(mismatches == 0);
}

std::string swap_every(std::string bytes, std::size_t width) {
  for (std::size_t i = 0; i + width <= bytes.size(); i += width)
    std::reverse(bytes.begin() + static_cast<std::ptrdiff_t>(i),
                 bytes.begin() + static_cast<std::ptrdiff_t>(i + width));
  return bytes;
}

const fs::path kPeerRaw = test::peer_file("picasso_testdata.raw");
const fs::path kPeerYaml = test::peer_file("picasso_testdata.yaml");

}  // namespace

TEST_CASE("Picasso's test movie: metadata from the .yaml, pixels as numpy reads them") {
  auto reader = open_stack(kPeerRaw.string());
  const auto& info = reader->info();
  CHECK(info.format == "picasso-raw");
  CHECK(info.frames == 100);
  CHECK(info.height == 32);
  CHECK(info.width == 32);
  CHECK(info.type == PixelType::u16);
  CHECK(info.pixel_size_nm == 160.0);  // Camera.Pixelsize
  CHECK(info.path == kPeerRaw.string());
  check_same_as_numpy(*reader, kPeerRaw);

  // read_raw hands out the file's own uint16 values.
  std::vector<std::uint16_t> frame(32 * 32);
  reader->read_raw(99, 1, frame.data());
  const std::string bytes = test::read_file(kPeerRaw);
  CHECK(std::memcmp(frame.data(), bytes.data() + 99 * 32 * 32 * 2, frame.size() * 2) == 0);
  CHECK_THROWS_AS(reader->read_raw(99, 2, frame.data()), InputError);
}

TEST_CASE("a big-endian copy reads as the same movie") {
  test::TempDir dir;
  const auto raw = dir / "movie_be.raw";
  test::write_file(raw, swap_every(test::read_file(kPeerRaw), 2));
  test::write_file(dir / "movie_be.yaml",
                   "Byte Order: '>'\nData Type: uint16\nFrames: 100\nHeight: 32\nWidth: 32\nCamera.Pixelsize: 130\n");
  auto reader = open_stack(raw.string());
  CHECK(reader->info().pixel_size_nm == 130.0);
  check_same_as_numpy(*reader, raw);
  auto little = open_stack(kPeerRaw.string());
  CHECK(our_pixels(*reader) == our_pixels(*little));
}

TEST_CASE("float32, big-endian, in a multi-document yaml whose first document lacks Width") {
  test::TempDir dir;
  const std::int64_t frames = 3, height = 4, width = 5;
  std::string bytes;
  for (std::int64_t i = 0; i < frames * height * width; ++i) {
    const float v = static_cast<float>(i) * 0.75f - 10.f;
    char b[4];
    std::memcpy(b, &v, 4);
    bytes.append(b, 4);
  }
  const auto raw = dir / "floats.raw";
  test::write_file(raw, swap_every(bytes, 4));
  test::write_file(dir / "floats.yaml",
                   "Generated by: some tool\n---\nWidth: 5\nHeight: 4\nFrames: 3\nData Type: float32\n"
                   "Byte Order: '>'\nCamera:\n  Pixelsize: 108\n---\nWidth: 999\n");
  auto reader = open_stack(raw.string());
  CHECK(reader->info().type == PixelType::f32);
  CHECK(reader->info().width == 5);
  CHECK(reader->info().pixel_size_nm == 108.0);
  check_same_as_numpy(*reader, raw);
  CHECK(our_pixels(*reader)[7] == 7 * 0.75 - 10.0);
}

TEST_CASE("truncated, overlong, or without its yaml: InputError naming the file") {
  test::TempDir dir;
  const std::string bytes = test::read_file(kPeerRaw);
  const std::string yaml = test::read_file(kPeerYaml);

  const auto truncated = dir / "truncated.raw";
  test::write_file(truncated, bytes.substr(0, bytes.size() - 100));
  test::write_file(dir / "truncated.yaml", yaml);
  auto e = expect_error<InputError>([&] { open_stack(truncated.string()); });
  CHECK(e.where() == truncated.string());
  CHECK(contains(e.what(), "truncated"));
  CHECK(contains(e.what(), "204700 bytes"));

  const auto longer = dir / "longer.raw";
  test::write_file(longer, bytes + std::string(64, '\0'));
  test::write_file(dir / "longer.yaml", yaml);
  e = expect_error<InputError>([&] { open_stack(longer.string()); });
  CHECK(e.where() == longer.string());
  CHECK(contains(e.what(), "longer"));

  const auto lonely = dir / "lonely.raw";
  test::write_file(lonely, bytes);
  e = expect_error<InputError>([&] { open_stack(lonely.string()); });
  CHECK(e.where() == lonely.string());
  CHECK(contains(e.what(), (dir / "lonely.yaml").string()));
}

TEST_CASE("broken or unsupported yaml metadata: InputError naming the yaml") {
  test::TempDir dir;
  const auto raw = dir / "m.raw";
  const auto yaml = dir / "m.yaml";
  test::write_file(raw, std::string(2 * 3 * 4 * 2, '\0'));
  const auto error_for = [&](const std::string& text) {
    test::write_file(yaml, text);
    return expect_error<InputError>([&] { detail::open_picasso_raw(raw.string()); });
  };
  auto e = error_for("Width: 4\nHeight: [3\n");
  CHECK(contains(e.where(), yaml.string()));
  CHECK(contains(e.what(), "YAML"));
  e = error_for("Width: 4\nHeight: 3\nFrames: 2\n");
  CHECK(e.where() == yaml.string());
  CHECK(contains(e.what(), "Data Type"));
  e = error_for("Width: 4\nHeight: 3\nFrames: 2\nData Type: int64\n");
  CHECK(contains(e.what(), "int64"));
  e = error_for("Width: 4\nHeight: three\nFrames: 2\nData Type: uint16\n");
  CHECK(contains(e.what(), "Height"));
  e = error_for("Width: 4\nHeight: 3\nFrames: 0\nData Type: uint16\n");
  CHECK(contains(e.what(), "Frames"));
  e = error_for("Height: 3\nFrames: 2\nData Type: uint16\n");
  CHECK(contains(e.what(), "Width"));
  e = error_for("Width: 4\nHeight: 3\nFrames: 2\nData Type: uint16\nByte Order: 'x'\n");
  CHECK(contains(e.what(), "Byte Order"));

  test::write_file(yaml, "Width: 4\nHeight: 3\nFrames: 2\nData Type: uint16\nByte Order: <\n");
  auto reader = detail::open_picasso_raw(raw.string());  // the same movie, well described
  CHECK(reader->info().pixel_size_nm == 0.0);
  CHECK(reader->info().frames == 2);
}
