// The frame source over real files with several read threads: TIFF, BigTIFF,
// a Picasso .raw and HDF5 (read by one thread) give the frames in order with
// the pixels one reader gives, and a file cut short after it was opened fails
// at the right frame, after the chunks before it.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/frame_source.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/io/tiff_format.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t kWidth = 13, kHeight = 9;

std::uint16_t value(std::int64_t t, std::int64_t i) { return static_cast<std::uint16_t>((t * 131 + i * 7) % 65521); }

std::vector<std::uint16_t> frames_of(std::int64_t frames) {
  std::vector<std::uint16_t> v(static_cast<std::size_t>(frames * kWidth * kHeight));
  for (std::int64_t t = 0; t < frames; ++t)
    for (std::int64_t i = 0; i < kWidth * kHeight; ++i) v[static_cast<std::size_t>(t * kWidth * kHeight + i)] = value(t, i);
  return v;
}

ImageMeta meta_of(std::int64_t frames) {
  ImageMeta meta;
  meta.width = kWidth;
  meta.height = kHeight;
  meta.frames = frames;
  meta.type = PixelType::u16;
  return meta;
}

// Written a few frames at a time, as a tool streams them.
void write_stack(const fs::path& path, std::int64_t frames, bool bigtiff) {
  const auto pixels = frames_of(frames);
  auto writer = path.extension() == ".h5" ? create_image_writer(path.string(), meta_of(frames))
                                          : detail::create_tiff_writer(path.string(), meta_of(frames), bigtiff);
  for (std::int64_t t = 0; t < frames; t += 5)
    writer->write(pixels.data() + t * kWidth * kHeight, std::min<std::int64_t>(5, frames - t));
  writer->close();
}

void write_raw(const fs::path& path, std::int64_t frames) {
  const auto pixels = frames_of(frames);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(pixels.data()), static_cast<std::streamsize>(pixels.size() * 2));
  std::ofstream(fs::path(path).replace_extension(".yaml"))
      << "Width: " << kWidth << "\nHeight: " << kHeight << "\nFrames: " << frames
      << "\nData Type: uint16\nByte Order: <\n";
}

// Every chunk in order, each pixel as written; returns the threads the source used.
int check_walk(const fs::path& path, std::int64_t frames, int threads, int prefetch, PixelType type) {
  auto reader = open_stack(path.string());
  FrameSourceOptions o;
  o.type = type;
  o.prefetch = prefetch;
  o.read_threads = threads;
  FrameSource source(*reader, {3, frames}, 11, o);
  std::int64_t next = 3;
  for (FrameChunk c; source.next(c);) {
    REQUIRE(c.first == next);
    for (std::int64_t t = 0; t < c.count; ++t)
      for (std::int64_t i = 0; i < kWidth * kHeight; ++i) {
        const auto k = static_cast<std::size_t>(t * kWidth * kHeight + i);
        const float got = type == PixelType::u16 ? static_cast<const std::uint16_t*>(c.pixels)[k] : c.floats()[k];
        REQUIRE(got == static_cast<float>(value(c.first + t, i)));
      }
    next += c.count;
  }
  CHECK(next == frames);
  return source.read_threads();
}

}  // namespace

TEST_CASE("frame source with several read threads: TIFF, BigTIFF and .raw frames in order, as written") {
  TempDir dir;
  const std::int64_t frames = 97;
  write_stack(dir / "classic.tif", frames, false);
  write_stack(dir / "big.tif", frames, true);
  write_raw(dir / "movie.raw", frames);
  char magic[4] = {};
  std::ifstream(dir / "big.tif", std::ios::binary).read(magic, 4);
  CHECK(magic[2] == 43);  // BigTIFF (the format says imagej-tiff: the description wins)
  for (const char* name : {"classic.tif", "big.tif", "movie.raw"})
    for (const int threads : {1, 3, 4})
      for (const int prefetch : {0, 2})
        for (const PixelType type : {PixelType::u16, PixelType::f32}) {
          CAPTURE(name);
          CAPTURE(threads);
          CAPTURE(prefetch);
          CHECK(check_walk(dir / name, frames, threads, prefetch, type) == threads);
        }
}

TEST_CASE("frame source over HDF5: one reader whatever the threads asked for") {
  TempDir dir;
  write_stack(dir / "stack.h5", 40, false);
  CHECK(check_walk(dir / "stack.h5", 40, 4, 2, PixelType::u16) == 1);
}

TEST_CASE("frame source: a TIFF cut short after opening fails at the right frame, after the chunks before it") {
  TempDir dir;
  const fs::path path = dir / "cut.tif";
  const std::int64_t frames = 60, cut_frame = 37;
  write_stack(path, frames, false);
  auto reader = open_stack(path.string());
  // Where frame 37's pixels start: the same pixels found again in the file.
  const auto pixels = frames_of(frames);
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string frame37(reinterpret_cast<const char*>(pixels.data() + cut_frame * kWidth * kHeight),
                            static_cast<std::size_t>(kWidth * kHeight * 2));
  const auto at = bytes.find(frame37);
  REQUIRE(at != std::string::npos);
  fs::resize_file(path, at + frame37.size() / 2);  // half of frame 37 left
  for (const int threads : {1, 4})
    for (const int prefetch : {0, 2}) {
      CAPTURE(threads);
      CAPTURE(prefetch);
      FrameSourceOptions o;
      o.type = PixelType::u16;
      o.prefetch = prefetch;
      o.read_threads = threads;
      FrameSource source(*reader, {0, frames}, 8, o);
      CHECK(source.read_threads() == threads);
      std::vector<std::int64_t> firsts;
      std::string message;
      try {
        for (FrameChunk c; source.next(c);) firsts.push_back(c.first);
        FAIL("no error");
      } catch (const InputError& e) {
        message = e.message();
      }
      CHECK(firsts == std::vector<std::int64_t>{0, 8, 16, 24});  // frame 37 is in the chunk from 32
      CHECK(message.find(path.string()) != std::string::npos);
      CHECK(message.find("frame 37:") != std::string::npos);
      CHECK(message.find("truncated") != std::string::npos);
    }
}
