// The frame source over real files with several read threads: TIFF, BigTIFF,
// a Picasso .raw and HDF5 (read by one thread) give the frames in order with
// the pixels one reader gives, and a file cut short after it was opened fails
// at the right frame, after the chunks before it. A GPU consumer's page registry gets a warm plain file's
// chunks as registered pieces instead (a fake registry here; the GPU test runs the real one).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
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

namespace {

// What a GPU engine's page registry does (kernels/common/host_registration.hpp), in 8 KB pieces, with counts.
class FakeRegistry final : public PageRegistry {
 public:
  struct Tally {
    std::atomic<std::uint64_t> max_done{0};
    std::atomic<int> covers{0};
    std::atomic<const unsigned char*> base{nullptr};  // the mapping's
    int refuse_at = -1;  // this cover (0-based) fails
  };
  FakeRegistry(const unsigned char* base, std::size_t size, std::shared_ptr<Tally> tally)
      : base_(base), size_(size), tally_(std::move(tally)) {
    tally_->base = base;
  }
  bool cover(const unsigned char* p, std::size_t bytes, std::uint64_t serial) override {
    // (the reader thread's: CHECK, not REQUIRE, whose exception would pass for a read error)
    CHECK(p >= base_);
    CHECK(static_cast<std::size_t>(p - base_) + bytes <= size_);
    CHECK(serial >= last_serial_);  // a chunk's runs share one serial; the next chunk's is larger
    last_serial_ = serial;
    return tally_->covers++ != tally_->refuse_at;
  }
  void release_done(std::uint64_t done) override {
    tally_->max_done = std::max<std::uint64_t>(tally_->max_done, done);
  }
  void split(const unsigned char* p, std::size_t bytes, std::vector<HostSegment>& out) const override {
    while (bytes > 0) {
      const auto at = static_cast<std::size_t>(p - base_);
      const std::size_t n = std::min(bytes, (at / kPiece + 1) * kPiece - at);
      out.push_back({p, n});
      p += n;
      bytes -= n;
    }
  }
  static constexpr std::size_t kPiece = 8192;

 private:
  const unsigned char* base_;
  std::size_t size_;
  std::shared_ptr<Tally> tally_;
  std::uint64_t last_serial_ = 0;
};

struct MappedWalk {
  std::int64_t chunks = 0, mapped = 0, factory_calls = 0;
};

// Every chunk's pixels as written, whether read or in registered pages (which a test may read: the file stays).
MappedWalk walk_mapped(const fs::path& path, std::int64_t frames, PixelType type, int hold,
                       const std::shared_ptr<FakeRegistry::Tally>& tally) {
  auto reader = open_stack(path.string());
  FrameSourceOptions o;
  o.type = type;
  o.prefetch = 2;
  o.hold = hold;
  o.read_threads = 2;
  MappedWalk walk;
  o.register_pages = [&](const unsigned char* base, std::size_t size) {
    ++walk.factory_calls;
    return std::make_unique<FakeRegistry>(base, size, tally);
  };
  FrameSource source(*reader, {3, frames}, 11, o);
  std::int64_t next = 3;
  std::uint64_t serial = 0;
  std::vector<unsigned char> bytes;
  for (FrameChunk c; source.next(c);) {
    REQUIRE(c.first == next);
    const std::size_t frame_bytes = static_cast<std::size_t>(kWidth * kHeight) * bytes_per_pixel(type);
    const void* pixels = c.pixels;
    if (!c.pixels) {
      ++walk.mapped;
      ++serial;
      // Nothing this chunk, or an earlier one still held, reads has been let go.
      const std::uint64_t oldest_held = serial > static_cast<std::uint64_t>(hold) ? serial - hold + 1 : 1;
      CHECK(tally->max_done.load() < oldest_held);
      bytes.clear();
      for (const HostSegment& s : c.segments) {
        const auto at = static_cast<std::size_t>(s.bytes - tally->base.load());
        CHECK(s.size > 0);
        CHECK((at + s.size - 1) / FakeRegistry::kPiece == at / FakeRegistry::kPiece);  // one piece each
        bytes.insert(bytes.end(), s.bytes, s.bytes + s.size);
      }
      REQUIRE(bytes.size() == static_cast<std::size_t>(c.count) * frame_bytes);
      pixels = bytes.data();
    }
    for (std::int64_t t = 0; t < c.count; ++t)
      for (std::int64_t i = 0; i < kWidth * kHeight; ++i) {
        const auto k = static_cast<std::size_t>(t * kWidth * kHeight + i);
        const float got = type == PixelType::u16 ? static_cast<const std::uint16_t*>(pixels)[k]
                                                 : static_cast<const float*>(pixels)[k];
        REQUIRE(got == static_cast<float>(value(c.first + t, i)));
      }
    next += c.count;
    ++walk.chunks;
  }
  CHECK(next == frames);
  CHECK(source.mapped_chunks() == walk.mapped);
  return walk;
}

}  // namespace

TEST_CASE("frame source over registered pages: a warm plain file is handed over as pieces, not read") {
  TempDir dir;
  const std::int64_t frames = 97;  // 9 chunks of 11 from frame 3; 234 bytes a frame: runs cross the 8 KB pieces
  write_stack(dir / "classic.tif", frames, false);
  write_stack(dir / "big.tif", frames, true);
  write_raw(dir / "movie.raw", frames);
  for (const char* name : {"classic.tif", "big.tif", "movie.raw"})
    for (const int hold : {1, 3}) {
      CAPTURE(name);
      CAPTURE(hold);
      auto tally = std::make_shared<FakeRegistry::Tally>();
      const MappedWalk walk = walk_mapped(dir / name, frames, PixelType::u16, hold, tally);
      CHECK(walk.factory_calls == 1);
      CHECK(walk.chunks == 9);
      CHECK(walk.mapped == 9);  // just written: every page is in the page cache
    }
  SUBCASE("the driver refuses the third registration: that chunk and the rest are read") {
    auto tally = std::make_shared<FakeRegistry::Tally>();
    tally->refuse_at = 2;
    const MappedWalk walk = walk_mapped(dir / "classic.tif", frames, PixelType::u16, 1, tally);
    CHECK(walk.chunks == 9);
    CHECK(walk.mapped == 2);
    CHECK(tally->covers.load() == 3);  // no more tries after the refusal
  }
  SUBCASE("frames converted to float32, or an HDF5 stack: read, no registry asked for") {
    auto tally = std::make_shared<FakeRegistry::Tally>();
    MappedWalk walk = walk_mapped(dir / "classic.tif", frames, PixelType::f32, 1, tally);
    CHECK(walk.factory_calls == 0);
    CHECK(walk.mapped == 0);
    write_stack(dir / "stack.h5", frames, false);
    walk = walk_mapped(dir / "stack.h5", frames, PixelType::u16, 1, tally);
    CHECK(walk.factory_calls == 0);
    CHECK(walk.mapped == 0);
  }
}
