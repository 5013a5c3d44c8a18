// Micro-Manager series: an acquisition split into <prefix>.ome.tif,
// <prefix>_1.ome.tif, ... reads as one stack from any of its files (frames in
// acquisition order, the pixel size and camera it records), and a missing,
// truncated or mismatched file is one error naming it. The series are written
// here byte by byte (classic little-endian TIFF, one strip per page) with the
// OME-XML and the Micro-Manager tag 51123 as Micro-Manager lays them out.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/frame_reader.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

constexpr int kSide = 16;
using Frame = std::vector<std::uint16_t>;

// Frame `t` of a test series: every pixel is 1000 + t, plus its column, so order and layout both show.
Frame frame_of(int t, int side = kSide) {
  Frame f(static_cast<std::size_t>(side * side));
  for (int i = 0; i < side * side; ++i) f[static_cast<std::size_t>(i)] = static_cast<std::uint16_t>(1000 + t + i % side);
  return f;
}

// Frames [first, first + count) of the whole series, file after file.
std::vector<Frame> frames_from(int first, int count) {
  std::vector<Frame> frames;
  for (int t = first; t < first + count; ++t) frames.push_back(frame_of(t));
  return frames;
}

// A classic little-endian TIFF of uint16 pages (pixels, then the page's IFD);
// the first page carries `description` (tag 270) and `mm_json` (tag 51123) when not empty.
// Returns where each page's pixels start.
std::vector<std::uint32_t> write_tiff(const fs::path& path, const std::vector<Frame>& frames, int width, int height,
                                      const std::string& description = "", const std::string& mm_json = "",
                                      bool mm_json_every_page = false, const std::string& imagej_description = "") {
  std::vector<std::uint32_t> data_offsets;
  std::string out("II*\0\0\0\0\0", 8);
  const auto put16 = [&](std::uint16_t v) { out.append(reinterpret_cast<const char*>(&v), 2); };
  const auto put32 = [&](std::uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
  const auto set32 = [&](std::size_t at, std::uint32_t v) { std::memcpy(out.data() + at, &v, 4); };
  std::size_t next_ifd_field = 4;
  for (std::size_t p = 0; p < frames.size(); ++p) {
    const bool first = p == 0;
    std::uint32_t text_at[3] = {0, 0, 0};
    const std::string texts[3] = {first ? description : "", first || mm_json_every_page ? mm_json : "",
                                  first ? imagej_description : ""};
    for (int k = 0; k < 3; ++k)
      if (!texts[k].empty()) {
        text_at[k] = static_cast<std::uint32_t>(out.size());
        out += texts[k];
        out += '\0';
      }
    const auto data_at = static_cast<std::uint32_t>(out.size());
    data_offsets.push_back(data_at);
    out.append(reinterpret_cast<const char*>(frames[p].data()), frames[p].size() * 2);
    if (out.size() % 2) out += '\0';
    set32(next_ifd_field, static_cast<std::uint32_t>(out.size()));
    struct Tag {
      std::uint16_t tag, type;
      std::uint32_t count, value;
    };
    std::vector<Tag> tags = {{256, 4, 1, static_cast<std::uint32_t>(width)},
                             {257, 4, 1, static_cast<std::uint32_t>(height)},
                             {258, 3, 1, 16},
                             {259, 3, 1, 1},
                             {262, 3, 1, 1}};
    // Micro-Manager writes two ImageDescription tags: its OME-XML, then ImageJ's description.
    if (text_at[0]) tags.push_back({270, 2, static_cast<std::uint32_t>(texts[0].size() + 1), text_at[0]});
    if (text_at[2]) tags.push_back({270, 2, static_cast<std::uint32_t>(texts[2].size() + 1), text_at[2]});
    tags.push_back({273, 4, 1, data_at});
    tags.push_back({277, 3, 1, 1});
    tags.push_back({278, 4, 1, static_cast<std::uint32_t>(height)});
    tags.push_back({279, 4, 1, static_cast<std::uint32_t>(frames[p].size() * 2)});
    if (text_at[1]) tags.push_back({51123, 2, static_cast<std::uint32_t>(texts[1].size() + 1), text_at[1]});
    put16(static_cast<std::uint16_t>(tags.size()));
    for (const Tag& t : tags) {
      put16(t.tag);
      put16(t.type);
      put32(t.count);
      put32(t.value);
    }
    next_ifd_field = out.size();
    put32(0);
  }
  write_file(path, out);
  return data_offsets;
}

// Micro-Manager 2's NDTiff dataset in `dir`: <prefix>_NDTiffStack.tif, _1.tif, ... (a page per image, each with
// its metadata in tag 51123) and NDTiff.index naming each image's file and offset in the order they were saved.
void write_ndtiff(const fs::path& dir, const std::vector<int>& frames_per_file) {
  std::string index;
  const auto put32 = [&](std::uint32_t v) { index.append(reinterpret_cast<const char*>(&v), 4); };
  int t = 0;
  for (std::size_t k = 0; k < frames_per_file.size(); ++k) {
    std::string name = "ds_NDTiffStack";
    if (k > 0) name.append("_").append(std::to_string(k));
    name.append(".tif");
    const auto offsets = write_tiff(dir / name, frames_from(t, frames_per_file[k]), kSide, kSide, "",
                                    R"({"Camera":"Prime","PixelSizeUm":0.65})", true);
    for (const std::uint32_t offset : offsets) {
      const std::string axes = R"({"time":)" + std::to_string(t++) + "}";
      put32(static_cast<std::uint32_t>(axes.size()));
      index += axes;
      put32(static_cast<std::uint32_t>(name.size()));
      index += name;
      for (const std::uint32_t v : {offset, std::uint32_t{kSide}, std::uint32_t{kSide}, 1u, 0u, 0u, 0u, 0u}) put32(v);
    }
  }
  write_file(dir / "NDTiff.index", index);
}

// The OME-XML Micro-Manager writes into its first file: one <TiffData> per
// plane naming the file that holds it; a second position's image beside it.
std::string ome_xml(const std::vector<std::pair<std::string, int>>& files, int width, int height,
                    const std::string& pixel_size_attributes, const std::string& extra_tiff_data = "") {
  int total = 0;
  for (const auto& f : files) total += f.second;
  std::string x = R"(<?xml version="1.0" encoding="UTF-8"?><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06">)";
  x += R"(<Image ID="Image:0" Name="movie"><Pixels BigEndian="false" DimensionOrder="XYCZT" ID="Pixels:0" )" +
       pixel_size_attributes + R"( SizeC="1" SizeT=")" + std::to_string(total) + R"(" SizeX=")" + std::to_string(width) +
       R"(" SizeY=")" + std::to_string(height) + R"(" SizeZ="1" Type="uint16"><Channel ID="Channel:0:0"/>)";
  int t = 0;
  for (const auto& [name, planes] : files)
    for (int ifd = 0; ifd < planes; ++ifd, ++t)
      x += R"(<TiffData FirstC="0" FirstT=")" + std::to_string(t) + R"(" FirstZ="0" IFD=")" + std::to_string(ifd) +
           R"(" PlaneCount="1"><UUID FileName=")" + name + R"(">urn:uuid:0</UUID></TiffData>)";
  x += extra_tiff_data;
  x += R"(</Pixels></Image><Image ID="Image:1" Name="movie_Pos1"><Pixels ID="Pixels:1" SizeT="1"><TiffData IFD="0" PlaneCount="1"><UUID FileName="movie_MMStack_Pos1.ome.tif">urn:uuid:1</UUID></TiffData></Pixels></Image></OME>)";
  return x;
}

const std::string kMicroManagerJson =
    R"({"Camera":"Andor","Exposure-ms":30.0,"PixelSizeUm":0.2,"Andor-Gain":{"PropVal":"300","PropType":"Integer"},"ElapsedTime-ms":12.5,"scopeDataKeys":["Camera"]})";
const std::vector<std::string> kNames = {"movie_MMStack_Pos0.ome.tif", "movie_MMStack_Pos0_1.ome.tif",
                                         "movie_MMStack_Pos0_2.ome.tif"};

// Three files of 3 frames, as Micro-Manager writes them: the first file's OME-XML describes the series, the
// others point at it (BinaryOnly); each file's first page also holds ImageJ's description, after the OME-XML.
void write_series(const fs::path& dir, bool with_ome = true, const std::string& mm_json = kMicroManagerJson) {
  const std::string xml = with_ome ? ome_xml({{kNames[0], 3}, {kNames[1], 3}, {kNames[2], 3}}, kSide, kSide,
                                             R"(PhysicalSizeX="0.117" PhysicalSizeXUnit="µm")")
                                   : "";
  const std::string pointer = with_ome ? R"(<?xml version="1.0"?><OME><BinaryOnly MetadataFile=")" + kNames[0] +
                                             R"(" UUID="urn:uuid:0"/></OME>)"
                                       : "";
  const std::string imagej = "ImageJ=1.53\nimages=9\nframes=9\nunit=cm\n";
  write_tiff(dir / kNames[0], frames_from(0, 3), kSide, kSide, xml, mm_json, false, imagej);
  write_tiff(dir / kNames[1], frames_from(3, 3), kSide, kSide, pointer, mm_json, false, imagej);
  write_tiff(dir / kNames[2], frames_from(6, 3), kSide, kSide, pointer, mm_json, false, imagej);
}

void check_frames(StackReader& reader, int first, int count) {
  std::vector<std::uint16_t> got(static_cast<std::size_t>(count * kSide * kSide));
  reader.read_raw(first, count, got.data());
  for (int k = 0; k < count; ++k) {
    const Frame want = frame_of(first + k);
    CAPTURE(first + k);
    CHECK(std::equal(want.begin(), want.end(), got.begin() + static_cast<std::ptrdiff_t>(k * kSide * kSide)));
  }
}

std::string metadata_value(const StackInfo& info, const std::string& key) {
  for (const auto& [k, v] : info.metadata)
    if (k == key) return v;
  return "";
}

}  // namespace

TEST_CASE("a series read from its first file: every frame in acquisition order, its pixel size and camera") {
  TempDir dir;
  write_series(dir.path());
  const auto reader = open_stack((dir / kNames[0]).string());
  const StackInfo& info = reader->info();
  CHECK(info.frames == 9);
  CHECK(info.width == kSide);
  CHECK(info.height == kSide);
  CHECK(info.type == PixelType::u16);
  CHECK(info.pixel_size_nm == doctest::Approx(117.0));  // OME PhysicalSizeX wins over PixelSizeUm
  CHECK(info.format == "ome-tiff, Micro-Manager series of 3 files");  // the OME-XML, not ImageJ's description
  CHECK(metadata_value(info, "Camera") == "Andor");
  CHECK(contains(info.metadata_yaml, "Micro-Manager Metadata"));
  CHECK(contains(info.metadata_yaml, "Andor-Gain: 300"));  // Micro-Manager 1.4's {"PropVal": ...} unwrapped
  CHECK(contains(info.metadata_yaml, "Exposure-ms: 30"));
  CHECK(!contains(info.metadata_yaml, "scopeDataKeys"));
  check_frames(*reader, 0, 9);
  check_frames(*reader, 2, 5);  // a read across two file boundaries
  check_frames(*reader, 8, 1);
}

TEST_CASE("a series decoded by several threads: each has its own reader of every file, the same frames") {
  TempDir dir;
  write_series(dir.path());
  const auto reader = open_stack((dir / kNames[0]).string());
  const auto other = reader->another_reader();
  REQUIRE(other);
  check_frames(*other, 0, 9);
  FrameReader frames(*reader, 3);
  CHECK(frames.threads() == 3);
  std::vector<std::uint16_t> got(static_cast<std::size_t>(9 * kSide * kSide));
  frames.read(0, 9, PixelType::u16, got.data());
  for (int k = 0; k < 9; ++k) {
    const Frame want = frame_of(k);
    CAPTURE(k);
    CHECK(std::equal(want.begin(), want.end(), got.begin() + static_cast<std::ptrdiff_t>(k * kSide * kSide)));
  }
}

TEST_CASE("naming a later file reads the whole series, as Picasso does from the first") {
  TempDir dir;
  write_series(dir.path());
  const auto reader = open_stack((dir / kNames[1]).string());
  CHECK(reader->info().frames == 9);
  CHECK(reader->info().path == (dir / kNames[1]).string());
  check_frames(*reader, 0, 9);
}

TEST_CASE("without OME-XML the file names make the series, and PixelSizeUm gives the pixel size") {
  TempDir dir;
  write_series(dir.path(), false);
  const auto reader = open_stack((dir / kNames[2]).string());
  CHECK(reader->info().frames == 9);
  CHECK(reader->info().pixel_size_nm == doctest::Approx(200.0));
  check_frames(*reader, 0, 9);
}

TEST_CASE("a file the OME-XML names is missing: the error names it") {
  TempDir dir;
  write_series(dir.path());
  fs::remove(dir / kNames[2]);
  for (const auto& named : {kNames[0], kNames[1]}) {
    const auto e = expect_error<InputError>([&] { open_stack((dir / named).string()); });
    CHECK(e.where() == (dir / kNames[2]).string());
    CHECK(contains(e.what(), "is missing"));
    CHECK(contains(e.what(), "file 3 of 3"));
  }
}

TEST_CASE("a gap in the numbering (_1, _3 without _2): the error names the missing file") {
  TempDir dir;
  write_series(dir.path(), false);
  fs::rename(dir / kNames[2], dir / "movie_MMStack_Pos0_3.ome.tif");
  fs::rename(dir / kNames[1], dir / kNames[2]);
  const auto e = expect_error<InputError>([&] { open_stack((dir / kNames[0]).string()); });
  CHECK(e.where() == (dir / kNames[1]).string());
  CHECK(contains(e.what(), "is missing from the Micro-Manager series"));
}

TEST_CASE("a truncated file: fewer pages than the OME-XML maps to it, or cut inside a page") {
  TempDir dir;
  write_series(dir.path());
  write_tiff(dir / kNames[1], frames_from(3, 2), kSide, kSide);
  auto e = expect_error<InputError>([&] { open_stack((dir / kNames[0]).string()); });
  CHECK(e.where() == (dir / kNames[1]).string());
  CHECK(contains(e.what(), "holds 2 frames but the OME-XML"));
  CHECK(contains(e.what(), "maps planes to 3 of its pages: the file is truncated"));

  // A plane an aborted acquisition never took: Micro-Manager points its TiffData at a page already mapped.
  write_tiff(dir / kNames[0], frames_from(0, 3), kSide, kSide,
             ome_xml({{kNames[0], 3}, {kNames[1], 2}}, kSide, kSide, "",
                     R"(<TiffData FirstT="5" IFD="1" PlaneCount="1"><UUID FileName=")" + kNames[1] + R"(">u</UUID></TiffData>)"));
  CHECK(open_stack((dir / kNames[0]).string())->info().frames == 5);

  write_series(dir.path());
  fs::resize_file(dir / kNames[2], fs::file_size(dir / kNames[2]) - 300);  // the last page's IFD and part of its pixels
  e = expect_error<InputError>([&] { open_stack((dir / kNames[1]).string()); });
  CHECK(e.where() == (dir / kNames[2]).string());
  CHECK(contains(e.what(), "truncated"));
  CHECK(contains(e.what(), "file 3 of 3 of the Micro-Manager series"));
}

TEST_CASE("a file of another frame size: the error names it") {
  TempDir dir;
  write_series(dir.path());
  write_tiff(dir / kNames[2], {frame_of(6, 8), frame_of(7, 8), frame_of(8, 8)}, 8, 8);
  const auto e = expect_error<InputError>([&] { open_stack((dir / kNames[0]).string()); });
  CHECK(e.where() == (dir / kNames[2]).string());
  CHECK(contains(e.what(), "holds 8x8 uint16 frames"));
}

TEST_CASE("files that are no series read as before") {
  TempDir dir;
  // A single OME-TIFF (its OME-XML names only itself) beside a numbered file of the same stem.
  write_tiff(dir / "plain.ome.tif", frames_from(0, 2), kSide, kSide,
             ome_xml({{"plain.ome.tif", 2}}, kSide, kSide, R"(PhysicalSizeX="90" PhysicalSizeXUnit="nm")"));
  write_tiff(dir / "plain_1.ome.tif", frames_from(5, 4), kSide, kSide);
  auto reader = open_stack((dir / "plain.ome.tif").string());
  CHECK(reader->info().frames == 2);
  CHECK(reader->info().format == "ome-tiff");
  CHECK(reader->info().pixel_size_nm == doctest::Approx(90.0));
  CHECK(reader->info().metadata.empty());
  reader = open_stack((dir / "plain_1.ome.tif").string());  // not named by plain.ome.tif, not Micro-Manager's
  CHECK(reader->info().frames == 4);
  CHECK(reader->info().format == "tiff");
  // A plain TIFF with numbered neighbours.
  write_tiff(dir / "movie.tif", frames_from(0, 3), kSide, kSide);
  write_tiff(dir / "movie_1.tif", frames_from(3, 3), kSide, kSide);
  reader = open_stack((dir / "movie.tif").string());
  CHECK(reader->info().frames == 3);
  CHECK(reader->info().pixel_size_nm == 0.0);
  check_frames(*reader, 0, 3);
  // One Micro-Manager file on its own: its metadata, one file.
  write_tiff(dir / "solo_MMStack_Pos0.ome.tif", frames_from(0, 3), kSide, kSide, "", kMicroManagerJson);
  reader = open_stack((dir / "solo_MMStack_Pos0.ome.tif").string());
  CHECK(reader->info().frames == 3);
  CHECK(reader->info().pixel_size_nm == doctest::Approx(200.0));
  CHECK(metadata_value(reader->info(), "Camera") == "Andor");
}

TEST_CASE("fit2d on a series equals fit2d on the same frames as one TIFF; a broken series is one error line") {
  TempDir dir;
  MovieSettings m;
  m.frames = 24;
  m.width = 32;
  m.height = 32;
  m.emitters = 8;
  m.seed = 7;
  const std::vector<std::uint16_t> movie = simulated_movie_u16(m);
  const auto pixels = static_cast<std::size_t>(m.width * m.height);
  const auto frames = [&](int first, int count) {
    std::vector<Frame> out;
    for (int t = first; t < first + count; ++t)
      out.emplace_back(movie.begin() + static_cast<std::ptrdiff_t>(t * pixels),
                       movie.begin() + static_cast<std::ptrdiff_t>((t + 1) * pixels));
    return out;
  };
  const std::string size = R"(PhysicalSizeX="0.108" PhysicalSizeXUnit="µm")";
  const int w = static_cast<int>(m.width), h = static_cast<int>(m.height);
  write_tiff(dir / "one.ome.tif", frames(0, 24), w, h, ome_xml({{"one.ome.tif", 24}}, w, h, size));
  write_tiff(dir / kNames[0], frames(0, 10), w, h, ome_xml({{kNames[0], 10}, {kNames[1], 10}, {kNames[2], 4}}, w, h, size),
             kMicroManagerJson);
  write_tiff(dir / kNames[1], frames(10, 10), w, h);
  write_tiff(dir / kNames[2], frames(20, 4), w, h);

  const auto fit = [&](const std::string& movie_name, const std::string& csv) {
    return run_tool("fit2d", "-q --device cpu " + shell_quote((dir / movie_name).string()) + " -o " +
                                 shell_quote((dir / csv).string()));
  };
  const auto single = fit("one.ome.tif", "one.csv");
  INFO(single.output);
  REQUIRE(single.exit_code == 0);
  const auto series = fit(kNames[1], "series.csv");  // named by its second file
  INFO(series.output);
  REQUIRE(series.exit_code == 0);
  CHECK(!contains(series.output, "reading the series"));  // -q: no notice
  const auto told = run_tool("fit2d", "--device cpu " + shell_quote((dir / kNames[1]).string()) + " -o " +
                                          shell_quote((dir / "told.csv").string()));
  CHECK(contains(told.output, "reading the series of 3 files"));
  const std::string one_csv = read_file(dir / "one.csv");
  CHECK(std::count(one_csv.begin(), one_csv.end(), '\n') > 10);
  CHECK(read_file(dir / "series.csv") == one_csv);

  fs::resize_file(dir / kNames[2], fs::file_size(dir / kNames[2]) / 2);
  const auto broken = fit(kNames[0], "broken.csv");
  check_one_line_error(broken, "fit2d", 3, kNames[2], "truncated");
}

TEST_CASE("an NDTiff dataset: from its folder or any file, in the order of NDTiff.index; a file it names is missing") {
  TempDir dir;
  write_ndtiff(dir.path(), {4, 4, 2});
  for (const fs::path& named : {dir.path(), dir / "ds_NDTiffStack.tif", dir / "ds_NDTiffStack_2.tif"}) {
    CAPTURE(named);
    const auto reader = open_stack(named.string());
    CHECK(reader->info().frames == 10);
    CHECK(reader->info().pixel_size_nm == doctest::Approx(650.0));
    CHECK(metadata_value(reader->info(), "Camera") == "Prime");
    check_frames(*reader, 0, 10);
  }
  // The last file: only the index knows it should be there.
  fs::remove(dir / "ds_NDTiffStack_2.tif");
  const auto e = expect_error<InputError>([&] { open_stack(dir.path().string()); });
  CHECK(e.where() == (dir / "ds_NDTiffStack_2.tif").string());
  CHECK(contains(e.what(), "NDTiff.index names it as file 3 of 3"));
  // Without its index the file names make the series, as Picasso reads NDTiff.
  fs::remove(dir / "NDTiff.index");
  write_tiff(dir / "ds_NDTiffStack_2.tif", frames_from(8, 2), kSide, kSide);
  CHECK(open_stack((dir / "ds_NDTiffStack_1.tif").string())->info().frames == 10);
  const auto none = expect_error<InputError>([&] { open_stack(dir.path().string()); });
  CHECK(contains(none.what(), "is a directory"));
}
