// TIFF input and output: files written by tifffile/Pillow read by open_stack(),
// files written by our writer read by tifffile, hand-built layouts (ImageJ's
// one-IFD stacks, 100,000 and > 1,048,576 pages), bad input and atomic output.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/io/tiff_format.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace nanoscopy;
using nanoscopy::test::TempDir;

namespace {

PixelType type_named(const std::string& name) {
  for (PixelType t :
       {PixelType::u8, PixelType::u16, PixelType::i16, PixelType::u32, PixelType::i32, PixelType::f32, PixelType::f64})
    if (to_string(t) == name) return t;
  FAIL("unknown dtype " << name);
  return PixelType::u16;
}

// The message of the InputError that `fn` throws ("" if it throws none).
template <typename Fn>
std::string input_error_of(Fn&& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.message();
  }
  return "";
}

// test pattern shared with tests/python/tiff_check_written.py
std::uint16_t pattern_u16(std::int64_t t, std::int64_t y, std::int64_t x) {
  return static_cast<std::uint16_t>((t * 1009 + y * 37 + x * 3) % 65536);
}
float pattern_f32(std::int64_t t, std::int64_t y, std::int64_t x) {
  return static_cast<float>(static_cast<double>(t * 1009 + y * 37 + x * 3) * 0.25 - 100.5);
}

template <typename T>
std::vector<T> pattern_stack(std::int64_t frames, std::int64_t height, std::int64_t width) {
  std::vector<T> v(static_cast<std::size_t>(frames * height * width));
  std::size_t i = 0;
  for (std::int64_t t = 0; t < frames; ++t)
    for (std::int64_t y = 0; y < height; ++y)
      for (std::int64_t x = 0; x < width; ++x) {
        if constexpr (std::is_same_v<T, float>)
          v[i++] = pattern_f32(t, y, x);
        else
          v[i++] = pattern_u16(t, y, x);
      }
  return v;
}

// ---- a minimal hand-rolled TIFF writer (little endian, uint16, one strip per frame)

struct HandBuilt {
  std::vector<std::uint64_t> ifd_offsets;
  std::vector<std::uint64_t> next_pointer_at;  // where each IFD's next-IFD offset is stored
  std::uint64_t size = 0;
};

// Pixel k of frame t in hand-built files: frame index in pixels 0 and 1, a pattern after.
std::uint16_t hand_pixel(std::uint64_t t, std::uint64_t k) {
  if (k == 0) return static_cast<std::uint16_t>(t & 0xFFFF);
  if (k == 1) return static_cast<std::uint16_t>(t >> 16);
  return static_cast<std::uint16_t>((t * 7 + k * 13) & 0xFFFF);
}

// Writes `frames` frames of width x height uint16. `interleaved`: each IFD is
// followed by its frame's pixels (else all pixels first, then the IFDs).
// `ifds`: how many IFDs to write (1 for ImageJ's > 4 GB layout: the frames
// then follow each other after the only IFD). `packbits`: PackBits-compressed
// strips (literal runs), which only libtiff decodes in our reader.
HandBuilt write_hand_built(const fs::path& path, bool big, std::uint64_t frames, std::uint32_t width,
                           std::uint32_t height, bool interleaved, const std::string& description = "",
                           std::uint64_t ifds = 0, bool packbits = false) {
  if (ifds == 0) ifds = frames;
  const std::uint64_t raw_bytes = std::uint64_t{width} * height * 2;
  const std::uint64_t frame_bytes = packbits ? raw_bytes + (raw_bytes + 127) / 128 : raw_bytes;
  const std::uint64_t entries = description.empty() ? 8 : 9;
  const std::uint64_t ifd_bytes = big ? 8 + entries * 20 + 8 : 2 + entries * 12 + 4;
  const std::uint64_t desc_bytes = (description.size() + 2) & ~std::uint64_t{1};
  const std::uint64_t header = big ? 16 : 8;

  std::ofstream out(path, std::ios::binary);
  std::string buffer;
  auto put = [&](const void* p, std::size_t n) { buffer.append(static_cast<const char*>(p), n); };
  auto u16 = [&](std::uint16_t v) { put(&v, 2); };
  auto u32 = [&](std::uint32_t v) { put(&v, 4); };
  auto u64 = [&](std::uint64_t v) { put(&v, 8); };
  auto off = [&](std::uint64_t v) { big ? u64(v) : u32(static_cast<std::uint32_t>(v)); };
  auto flush = [&] {
    out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    buffer.clear();
  };
  // entry with a value that fits inline
  auto entry = [&](std::uint16_t tag, std::uint16_t type, std::uint64_t count, std::uint64_t value) {
    u16(tag);
    u16(type);
    big ? u64(count) : u32(static_cast<std::uint32_t>(count));
    if (type == 3) {
      u16(static_cast<std::uint16_t>(value));
      buffer.append(big ? 6 : 2, '\0');
    } else {
      off(value);
    }
  };

  HandBuilt hb;
  // Offsets: page k's IFD block (IFD + description on page 0) and pixel data.
  const std::uint64_t block0 = ifd_bytes + (description.empty() ? 0 : desc_bytes);
  auto ifd_at = [&](std::uint64_t k) -> std::uint64_t {
    if (interleaved) return header + k * (ifd_bytes + frame_bytes) + (k > 0 ? block0 - ifd_bytes : 0);
    if (ifds == 1) return header;
    return header + frames * frame_bytes + (k > 0 ? block0 + (k - 1) * ifd_bytes : 0);
  };
  auto data_at = [&](std::uint64_t k) -> std::uint64_t {
    if (interleaved) return ifd_at(k) + (k == 0 ? block0 : ifd_bytes);
    if (ifds == 1) return header + block0 + k * frame_bytes;
    return header + k * frame_bytes;
  };
  auto write_ifd = [&](std::uint64_t k) {
    const std::uint64_t at = ifd_at(k);
    hb.ifd_offsets.push_back(at);
    big ? u64(entries) : u16(static_cast<std::uint16_t>(entries));
    const std::uint16_t long_type = big ? 16 : 4;
    entry(256, 4, 1, width);
    entry(257, 4, 1, height);
    entry(258, 3, 1, 16);
    entry(259, 3, 1, packbits ? 32773 : 1);
    entry(262, 3, 1, 1);
    if (!description.empty()) entry(270, 2, description.size() + 1, k == 0 ? at + ifd_bytes : ifd_at(0) + ifd_bytes);
    entry(273, long_type, 1, data_at(k));
    entry(277, 3, 1, 1);
    entry(279, long_type, 1, frame_bytes);
    hb.next_pointer_at.push_back(at + ifd_bytes - (big ? 8 : 4));
    off(k + 1 < ifds ? ifd_at(k + 1) : 0);
    if (k == 0 && !description.empty()) {
      buffer += description;
      buffer.append(desc_bytes - description.size(), '\0');
    }
  };
  std::vector<std::uint16_t> pixels(static_cast<std::size_t>(width) * height);
  auto write_data = [&](std::uint64_t t) {
    for (std::size_t k = 0; k < pixels.size(); ++k) pixels[k] = hand_pixel(t, k);
    if (!packbits) {
      put(pixels.data(), pixels.size() * 2);
      return;
    }
    const auto* bytes = reinterpret_cast<const char*>(pixels.data());
    for (std::uint64_t at = 0; at < raw_bytes; at += 128) {
      const std::uint64_t n = std::min<std::uint64_t>(128, raw_bytes - at);
      buffer.push_back(static_cast<char>(n - 1));  // a literal run of n bytes
      put(bytes + at, static_cast<std::size_t>(n));
    }
  };

  buffer += "II";
  if (big) {
    u16(43);
    u16(8);
    u16(0);
    u64(ifd_at(0));
  } else {
    u16(42);
    u32(static_cast<std::uint32_t>(ifd_at(0)));
  }
  if (interleaved) {
    for (std::uint64_t k = 0; k < frames; ++k) {
      write_ifd(k);
      write_data(k);
      if (buffer.size() > (1u << 20)) flush();
    }
  } else if (ifds == 1) {
    write_ifd(0);
    for (std::uint64_t k = 0; k < frames; ++k) {
      write_data(k);
      if (buffer.size() > (1u << 20)) flush();
    }
  } else {
    for (std::uint64_t k = 0; k < frames; ++k) {
      write_data(k);
      if (buffer.size() > (1u << 20)) flush();
    }
    for (std::uint64_t k = 0; k < frames; ++k) {
      write_ifd(k);
      if (buffer.size() > (1u << 20)) flush();
    }
  }
  flush();
  hb.size = static_cast<std::uint64_t>(out.tellp());
  return hb;
}

void patch(const fs::path& path, std::uint64_t offset, const void* bytes, std::size_t n) {
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(n));
}

void check_hand_built_frames(StackReader& reader, std::uint64_t frames) {
  const auto ppf = static_cast<std::size_t>(reader.info().pixels_per_frame());
  std::vector<std::uint16_t> all(static_cast<std::size_t>(frames) * ppf);
  reader.read_raw(0, static_cast<std::int64_t>(frames), all.data());
  std::uint64_t wrong = 0;
  for (std::uint64_t t = 0; t < frames; ++t)
    for (std::size_t k = 0; k < ppf; ++k) wrong += all[t * ppf + k] != hand_pixel(t, k);
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("files written by tifffile and Pillow: every pixel type, byte order, layout and compression") {
  REQUIRE_MESSAGE(test::python_available(), "the tifffile cross-check needs /usr/bin/python3 with numpy and tifffile");
  TempDir dir;
  const auto made = test::run_python("tiff_make_fixtures.py", {dir.path().string()});
  REQUIRE_MESSAGE(made.exit_code == 0, made.output);

  std::ifstream manifest(dir / "manifest.txt");
  std::string line;
  int good = 0, bad = 0, bad_read = 0;
  while (std::getline(manifest, line)) {
    std::istringstream in(line);
    std::string kind, name;
    in >> kind >> name;
    const std::string path = (dir / (name + ".tif")).string();
    CAPTURE(name);
    if (kind == "good") {
      std::int64_t frames = 0, height = 0, width = 0;
      std::string dtype, format;
      double pixel_size_nm = 0;
      in >> frames >> height >> width >> dtype >> format >> pixel_size_nm;
      auto reader = open_stack(path);
      const StackInfo& info = reader->info();
      CHECK(info.frames == frames);
      CHECK(info.height == height);
      CHECK(info.width == width);
      CHECK(info.type == type_named(dtype));
      CHECK(info.format == format);
      CHECK(info.pixel_size_nm == doctest::Approx(pixel_size_nm).epsilon(1e-6));
      const std::string expected = test::read_file(dir / (name + ".raw"));
      REQUIRE(static_cast<std::int64_t>(expected.size()) == frames * info.bytes_per_frame());
      std::string all(expected.size(), '\0');
      reader->read_raw(0, frames, all.data());
      CHECK_MESSAGE(all == expected, "pixels differ from tifffile's");
      // Frames one at a time, last first (random access through the index).
      const auto bpf = static_cast<std::size_t>(info.bytes_per_frame());
      std::string one(bpf, '\0');
      for (std::int64_t t = frames - 1; t >= 0; --t) {
        reader->read_raw(t, 1, one.data());
        CHECK(one == expected.substr(static_cast<std::size_t>(t) * bpf, bpf));
      }
      // read_float converts the same values.
      std::vector<float> floats(static_cast<std::size_t>(frames * info.pixels_per_frame()));
      reader->read_float(0, frames, floats.data());
      std::vector<float> converted(floats.size());
      convert_to_float(info.type, expected.data(), converted.size(), converted.data());
      CHECK(std::memcmp(floats.data(), converted.data(), floats.size() * sizeof(float)) == 0);
      ++good;
    } else if (kind == "bad") {
      std::string expected;
      std::getline(in, expected);
      expected = expected.substr(1);
      const std::string message = input_error_of([&] { open_stack(path); });
      CHECK_MESSAGE(message.find(path) != std::string::npos, message);
      CHECK_MESSAGE(message.find(expected) != std::string::npos, message);
      ++bad;
    } else if (kind == "badread") {
      std::int64_t frame = 0;
      in >> frame;
      std::string expected;
      std::getline(in, expected);
      expected = expected.substr(1);
      auto reader = open_stack(path);
      std::vector<unsigned char> buffer(static_cast<std::size_t>(reader->info().bytes_per_frame()));
      reader->read_raw(frame - 1, 1, buffer.data());  // the frame before decodes
      const std::string message = input_error_of([&] { reader->read_raw(frame, 1, buffer.data()); });
      CHECK_MESSAGE(message.find(path) != std::string::npos, message);
      CHECK_MESSAGE(message.find(expected) != std::string::npos, message);
      ++bad_read;
    }
  }
  CHECK(good == 42);
  CHECK(bad == 7);
  CHECK(bad_read == 1);
}

TEST_CASE("ImageJ's > 4 GB layout: one IFD, images=N, frames back to back") {
  TempDir dir;
  const auto path = dir / "imagej_one_ifd.tif";
  const std::string description = "ImageJ=1.11a\nimages=50\nslices=50\nunit=micron\nloop=false\n";
  const auto hb = write_hand_built(path, false, 50, 9, 8, false, description, 1);
  REQUIRE(hb.ifd_offsets.size() == 1);
  {
    auto reader = open_stack(path.string());
    CHECK(reader->info().frames == 50);
    CHECK(reader->info().format == "imagej-tiff");
    CHECK(reader->info().width == 9);
    CHECK(reader->info().height == 8);
    check_hand_built_frames(*reader, 50);
  }
  SUBCASE("a file cut short of the announced images is rejected at open") {
    fs::resize_file(path, hb.size - 100);
    const std::string message = input_error_of([&] { open_stack(path.string()); });
    CHECK(message.find(path.string()) != std::string::npos);
    CHECK_MESSAGE(message.find("truncated") != std::string::npos, message);
    CHECK_MESSAGE(message.find("50 images") != std::string::npos, message);
  }
}

TEST_CASE("100,000 pages: indexed once, every frame right") {
  TempDir dir;
  const auto path = (dir / "many.tif").string();
  constexpr std::int64_t kFrames = 100'000;
  ImageMeta meta;
  meta.width = 4;
  meta.height = 4;
  meta.frames = kFrames;
  meta.type = PixelType::u16;
  {
    auto writer = create_image_writer(path, meta);
    std::vector<std::uint16_t> chunk(static_cast<std::size_t>(1000 * 16));
    for (std::int64_t first = 0; first < kFrames; first += 1000) {
      for (std::int64_t t = 0; t < 1000; ++t)
        for (std::int64_t k = 0; k < 16; ++k)
          chunk[static_cast<std::size_t>(t * 16 + k)] =
              hand_pixel(static_cast<std::uint64_t>(first + t), static_cast<std::uint64_t>(k));
      writer->write(chunk.data(), 1000);
    }
    writer->close();
  }
  const auto start = std::chrono::steady_clock::now();
  auto reader = open_stack(path);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("open (IFD index) of 100,000 pages: " << seconds * 1e3 << " ms");
  CHECK(seconds < 10.0);
  REQUIRE(reader->info().frames == kFrames);
  CHECK(reader->info().format == "imagej-tiff");
  check_hand_built_frames(*reader, kFrames);
  // Frames one at a time from the far end.
  std::vector<std::uint16_t> frame(16);
  for (std::int64_t t : {kFrames - 1, kFrames / 2 + 3, std::int64_t{7}}) {
    reader->read_raw(t, 1, frame.data());
    CHECK(frame[0] == hand_pixel(static_cast<std::uint64_t>(t), 0));
    CHECK(frame[15] == hand_pixel(static_cast<std::uint64_t>(t), 15));
  }

  SUBCASE("interleaved IFDs and pixels (hand-built, classic)") {
    const auto other = dir / "interleaved.tif";
    write_hand_built(other, false, kFrames, 4, 4, true);
    const auto t0 = std::chrono::steady_clock::now();
    auto r = open_stack(other.string());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    MESSAGE("open (IFD index) of 100,000 interleaved pages: " << s * 1e3 << " ms");
    CHECK(s < 10.0);
    CHECK(r->info().frames == kFrames);
    CHECK(r->info().format == "tiff");
    check_hand_built_frames(*r, kFrames);
  }
}

TEST_CASE("a BigTIFF with more pages than libtiff counts (1,100,000)") {
  TempDir dir;
  const auto path = dir / "huge.tif";
  constexpr std::uint64_t kFrames = 1'100'000;
  const auto t0 = std::chrono::steady_clock::now();
  write_hand_built(path, true, kFrames, 2, 2, true);
  const auto t1 = std::chrono::steady_clock::now();
  auto reader = open_stack(path.string());
  const auto t2 = std::chrono::steady_clock::now();
  const double write_s = std::chrono::duration<double>(t1 - t0).count();
  const double open_s = std::chrono::duration<double>(t2 - t1).count();
  MESSAGE("hand-built BigTIFF of 1,100,000 pages: written in " << write_s * 1e3 << " ms, opened (IFD index) in "
                                                               << open_s * 1e3 << " ms");
  CHECK(open_s < 20.0);
  REQUIRE(reader->info().frames == static_cast<std::int64_t>(kFrames));
  CHECK(reader->info().format == "bigtiff");
  check_hand_built_frames(*reader, kFrames);
}

TEST_CASE("1,100,000 compressed BigTIFF pages: libtiff decodes pages past its directory limit") {
  TempDir dir;
  const auto path = dir / "huge_packbits.tif";
  constexpr std::uint64_t kFrames = 1'100'000;
  write_hand_built(path, true, kFrames, 2, 2, true, "", 0, true);
  const auto t0 = std::chrono::steady_clock::now();
  auto reader = open_stack(path.string());
  const auto t1 = std::chrono::steady_clock::now();
  REQUIRE(reader->info().frames == static_cast<std::int64_t>(kFrames));
  // The last 2,000 pages and 2,000 spread over the stack, each decoded on its own.
  std::vector<std::uint64_t> picks;
  for (std::uint64_t t = kFrames - 2000; t < kFrames; ++t) picks.push_back(t);
  for (std::uint64_t t = 0; t < kFrames; t += kFrames / 2000) picks.push_back(t);
  std::uint16_t frame[4];
  std::uint64_t wrong = 0;
  for (std::uint64_t t : picks) {
    reader->read_raw(static_cast<std::int64_t>(t), 1, frame);
    for (std::uint64_t k = 0; k < 4; ++k) wrong += frame[k] != hand_pixel(t, k);
  }
  const auto t2 = std::chrono::steady_clock::now();
  CHECK(wrong == 0);
  const double per_frame_us = std::chrono::duration<double>(t2 - t1).count() * 1e6 / static_cast<double>(picks.size());
  MESSAGE("PackBits BigTIFF, 1,100,000 pages: opened in " << std::chrono::duration<double>(t1 - t0).count() * 1e3
                                                          << " ms, " << per_frame_us
                                                          << " us per frame decoded by libtiff (random access)");
  CHECK(per_frame_us < 5000.0);
}

TEST_CASE("our writer: read back by tifffile and by our reader") {
  REQUIRE_MESSAGE(test::python_available(), "the tifffile cross-check needs /usr/bin/python3 with numpy and tifffile");
  TempDir dir;
  struct Case {
    std::string name;
    PixelType type;
    std::int64_t frames, height, width;
    double pixel_size_nm;
    bool bigtiff;
    std::string software;
  };
  const std::vector<Case> cases = {
      {"u16_stack.tif", PixelType::u16, 7, 13, 11, 107.0, false, "nanoscopy test 0.1.0"},
      {"f32_stack.tif", PixelType::f32, 5, 9, 16, 0.0, false, ""},
      {"f32_single.tif", PixelType::f32, 1, 21, 19, 12.5, false, "nanoscopy test"},
      {"u16_single.tiff", PixelType::u16, 1, 3, 5, 0.0, false, "x"},
      {"u16_bigtiff.tif", PixelType::u16, 6, 10, 12, 65.0, true, "nanoscopy test"},
      {"f32_bigtiff.tif", PixelType::f32, 3, 8, 8, 0.0, true, ""},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const auto path = (dir / c.name).string();
    ImageMeta meta;
    meta.width = c.width;
    meta.height = c.height;
    meta.frames = c.frames;
    meta.type = c.type;
    meta.pixel_size_nm = c.pixel_size_nm;
    meta.software = c.software;
    const auto u16 = pattern_stack<std::uint16_t>(c.frames, c.height, c.width);
    const auto f32 = pattern_stack<float>(c.frames, c.height, c.width);
    const void* data =
        c.type == PixelType::u16 ? static_cast<const void*>(u16.data()) : static_cast<const void*>(f32.data());
    {
      auto writer = detail::create_tiff_writer(path, meta, c.bigtiff);
      // Frames in uneven batches: the stream does not care how they arrive.
      const auto bpf = static_cast<std::size_t>(c.width * c.height) * bytes_per_pixel(c.type);
      std::int64_t done = 0;
      for (std::int64_t batch = 1; done < c.frames; ++batch) {
        const std::int64_t n = std::min(batch, c.frames - done);
        writer->write(static_cast<const unsigned char*>(data) + static_cast<std::size_t>(done) * bpf, n);
        done += n;
      }
      writer->close();
    }
    if (!c.bigtiff) CHECK(fs::file_size(path) == detail::estimated_classic_tiff_size(meta));
    const auto checked =
        test::run_python("tiff_check_written.py",
                         {path, std::to_string(c.frames), std::to_string(c.height), std::to_string(c.width),
                          to_string(c.type), std::to_string(c.pixel_size_nm), c.bigtiff ? "1" : "0", c.software});
    CHECK_MESSAGE(checked.exit_code == 0, checked.output);

    auto reader = open_stack(path);
    CHECK(reader->info().frames == c.frames);
    CHECK(reader->info().width == c.width);
    CHECK(reader->info().height == c.height);
    CHECK(reader->info().type == c.type);
    CHECK(reader->info().format == "imagej-tiff");
    CHECK(reader->info().pixel_size_nm == doctest::Approx(c.pixel_size_nm).epsilon(1e-6));
    std::vector<unsigned char> back(static_cast<std::size_t>(c.frames * reader->info().bytes_per_frame()));
    reader->read_raw(0, c.frames, back.data());
    CHECK(std::memcmp(back.data(), data, back.size()) == 0);
  }
}

TEST_CASE("the classic/BigTIFF decision") {
  ImageMeta meta;
  meta.width = 1000;
  meta.height = 1000;
  meta.type = PixelType::u16;  // 2 MB per frame
  meta.frames = 1;
  CHECK_FALSE(detail::needs_bigtiff(meta));
  meta.frames = 1990;  // 3.98 GB
  CHECK(detail::estimated_classic_tiff_size(meta) > 1990ull * 2'000'000);
  CHECK_FALSE(detail::needs_bigtiff(meta));
  meta.frames = 2010;  // 4.02 GB: past the classic limit with its margin
  CHECK(detail::needs_bigtiff(meta));
  meta.frames = 2148;  // 4.296 GB: past 2^32
  CHECK(detail::needs_bigtiff(meta));
  meta.type = PixelType::f32;
  meta.frames = 1000;  // 4 GB of float32
  CHECK(detail::needs_bigtiff(meta));
  meta.frames = 999;
  CHECK_FALSE(detail::needs_bigtiff(meta));
  // Many tiny frames: the IFDs count too (30 M frames of 4 bytes + ~150 bytes of IFD each).
  meta.width = 1;
  meta.height = 1;
  meta.frames = 30'000'000;
  CHECK(detail::estimated_classic_tiff_size(meta) > 30'000'000ull * 100);
  CHECK(detail::needs_bigtiff(meta));
  // A classic layout that cannot hold the data is refused.
  meta.width = 1000;
  meta.height = 1000;
  meta.frames = 2000;
  TempDir dir;
  CHECK_THROWS_AS(detail::create_tiff_writer((dir / "x.tif").string(), meta, false), UsageError);
}

TEST_CASE("metadata conventions") {
  CHECK(detail::imagej_description(1, false) == "ImageJ=1.11a\n");
  CHECK(detail::imagej_description(3, true) == "ImageJ=1.11a\nimages=3\nframes=3\nunit=micron\nloop=false\n");
  CHECK(detail::imagej_description(3, false, StackAxis::z) == "ImageJ=1.11a\nimages=3\nslices=3\nloop=false\n");
  CHECK(detail::imagej_description(3, false, StackAxis::pages) == "ImageJ=1.11a\nimages=3\nloop=false\n");
  CHECK(detail::imagej_axis("ImageJ=1.11a\nimages=3\nslices=3\n") == StackAxis::z);
  CHECK(detail::imagej_axis("ImageJ=1.11a\nimages=3\nframes=3\n") == StackAxis::time);
  CHECK(detail::imagej_axis("ImageJ=1.11a\nimages=6\nslices=2\nframes=3\n") == StackAxis::time);
  CHECK(detail::imagej_value("ImageJ=1.11a\nimages=12\nunit=nm\n", "images") == std::optional<std::string>("12"));
  CHECK_FALSE(detail::imagej_value("ImageJ=1.11a\nimages=12\n", "image").has_value());
  CHECK(detail::imagej_pixel_size_nm("ImageJ=1.11a\nunit=micron\n", 10.0) == doctest::Approx(100.0));
  CHECK(detail::imagej_pixel_size_nm("ImageJ=1.11a\nunit=\\u00B5m\n", 4.0) == doctest::Approx(250.0));
  CHECK(detail::imagej_pixel_size_nm("ImageJ=1.11a\nunit=nm\n", 0.01) == doctest::Approx(100.0));
  CHECK(detail::imagej_pixel_size_nm("ImageJ=1.11a\nunit=pixel\n", 1.0) == 0.0);
  CHECK(detail::imagej_pixel_size_nm("ImageJ=1.11a\n", 10.0) == 0.0);
  CHECK(detail::ome_pixel_size_nm(R"(<Pixels SizeX="4" PhysicalSizeXUnit="nm" PhysicalSizeX="108.3">)") ==
        doctest::Approx(108.3));
  CHECK(detail::ome_pixel_size_nm(R"(<Pixels PhysicalSizeX='0.16' PhysicalSizeY="0.2">)") == doctest::Approx(160.0));
  CHECK(detail::ome_pixel_size_nm("<Pixels PhysicalSizeX=\"0.1\" PhysicalSizeXUnit=\"\xC2\xB5m\">") ==
        doctest::Approx(100.0));
  CHECK(detail::ome_pixel_size_nm("<Pixels PhysicalSizeX=\"5\" PhysicalSizeXUnit=\"s\">") == 0.0);
  CHECK(detail::ome_pixel_size_nm("<Pixels SizeX=\"4\">") == 0.0);
}

TEST_CASE("bad input: each error is an InputError naming the file") {
  TempDir dir;
  auto expect_input_error = [](const fs::path& path, const std::string& words) {
    const std::string message = input_error_of([&] {
      auto reader = open_stack(path.string());
      std::vector<unsigned char> all(
          static_cast<std::size_t>(reader->info().frames * reader->info().bytes_per_frame()));
      reader->read_raw(0, reader->info().frames, all.data());
    });
    CAPTURE(path);
    CHECK_MESSAGE(message.find(path.string()) != std::string::npos, message);
    CHECK_MESSAGE(message.find(words) != std::string::npos, message);
  };

  SUBCASE("zero bytes") {
    test::write_file(dir / "empty.tif", "");
    expect_input_error(dir / "empty.tif", "empty");
  }
  SUBCASE("a text file named .tif") {
    test::write_file(dir / "notes.tif", "these are my notes, not an image\n");
    expect_input_error(dir / "notes.tif", "not a TIFF");
  }
  SUBCASE("only a TIFF signature") {
    test::write_file(dir / "stub.tif", std::string("II*\0", 4));
    expect_input_error(dir / "stub.tif", "truncated");
  }
  SUBCASE("a valid file cut in half") {
    const auto path = dir / "cut.tif";
    const auto hb = write_hand_built(path, false, 20, 16, 16, true);
    fs::resize_file(path, hb.size / 2);
    expect_input_error(path, "truncated");
  }
  SUBCASE("our own writer's file cut in half (pixels first, IFDs after)") {
    const auto path = (dir / "cut2.tif").string();
    ImageMeta meta;
    meta.width = 16;
    meta.height = 16;
    meta.frames = 20;
    meta.type = PixelType::u16;
    auto writer = create_image_writer(path, meta);
    std::vector<std::uint16_t> frames(20 * 256, 3);
    writer->write(frames.data(), 20);
    writer->close();
    fs::resize_file(path, fs::file_size(path) / 2);
    expect_input_error(path, "past the end of the file");
  }
  SUBCASE("the last frame's pixels past the end of the file") {
    const auto path = dir / "short.tif";
    const auto hb = write_hand_built(path, false, 5, 16, 16, true);
    fs::resize_file(path, hb.size - 10);
    expect_input_error(path, "page 4");
  }
  SUBCASE("an IFD offset past the end of the file") {
    const auto path = dir / "far.tif";
    const auto hb = write_hand_built(path, false, 5, 8, 8, true);
    const std::uint32_t far = 0x7FFFFFF0u;
    patch(path, hb.next_pointer_at[2], &far, 4);
    expect_input_error(path, "page 3");
  }
  SUBCASE("an IFD chain that loops") {
    const auto path = dir / "loop.tif";
    const auto hb = write_hand_built(path, true, 5, 8, 8, true);
    patch(path, hb.next_pointer_at[3], &hb.ifd_offsets[1], 8);
    expect_input_error(path, "loops");
  }
  SUBCASE("an IFD pointing into garbage") {
    const auto path = dir / "garbage.tif";
    const auto hb = write_hand_built(path, false, 3, 8, 8, true);
    const std::uint32_t inside = static_cast<std::uint32_t>(hb.ifd_offsets[1] + 7);
    patch(path, hb.next_pointer_at[1], &inside, 4);
    expect_input_error(path, "page 2");
  }
  SUBCASE("no IFD at all") {
    test::write_file(dir / "noifd.tif", std::string("II*\0\0\0\0\0", 8));
    expect_input_error(dir / "noifd.tif", "no images");
  }
}

TEST_CASE("atomic output") {
  TempDir dir;
  ImageMeta meta;
  meta.width = 8;
  meta.height = 8;
  meta.frames = 3;
  meta.type = PixelType::f32;
  std::vector<float> frames(3 * 64, 1.5f);

  SUBCASE("destroyed without close(): nothing is left behind") {
    {
      auto writer = create_image_writer((dir / "out.tif").string(), meta);
      writer->write(frames.data(), 3);
    }
    CHECK(fs::is_empty(dir.path()));
  }
  SUBCASE("fewer frames than announced: close() throws, nothing is left behind") {
    auto writer = create_image_writer((dir / "out.tif").string(), meta);
    writer->write(frames.data(), 2);
    CHECK_THROWS_AS(writer->close(), OutputError);
    writer.reset();
    CHECK(fs::is_empty(dir.path()));
  }
  SUBCASE("more frames than announced is refused") {
    auto writer = create_image_writer((dir / "out.tif").string(), meta);
    writer->write(frames.data(), 2);
    CHECK_THROWS_AS(writer->write(frames.data(), 2), OutputError);
  }
  SUBCASE("the file appears only at close()") {
    auto writer = create_image_writer((dir / "out.tif").string(), meta);
    writer->write(frames.data(), 3);
    CHECK_FALSE(fs::exists(dir / "out.tif"));
    writer->close();
    CHECK(fs::exists(dir / "out.tif"));
    CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 1);
  }
  SUBCASE("a missing output directory") {
    const auto path = (dir / "no" / "such" / "dir" / "out.tif").string();
    try {
      create_image_writer(path, meta);
      FAIL("no OutputError");
    } catch (const OutputError& e) {
      CHECK(e.message().find(path) != std::string::npos);
    }
  }
  SUBCASE("uint8 is not written") {
    meta.type = PixelType::u8;
    CHECK_THROWS_AS(create_image_writer((dir / "out.tif").string(), meta), UsageError);
  }
}
