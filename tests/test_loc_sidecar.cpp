// The metadata beside a localization file (issue 25): a CSV's own .yaml (X.csv.yaml), so that
// X.csv and X.hdf5 from one stem never overwrite each other's; the X.yaml of an older CSV read only
// when it can be nobody else's; Picasso 0.11's /metadata JSON read when an HDF5 file has no .yaml.
#include <doctest/doctest.h>

#include <filesystem>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "support/test_support.hpp"

namespace {

using namespace nanoscopy;
namespace fs = std::filesystem;

LocWriterContext context(std::int64_t width, double pixel_size_nm) {
  LocWriterContext ctx;
  ctx.camera.pixel_size_nm = pixel_size_nm;
  ctx.width = width;
  ctx.height = 40;
  ctx.frames = 10;
  ctx.version = "0.1.0";
  return ctx;
}

std::vector<Localization> some_locs() {
  std::vector<Localization> locs;
  for (int k = 0; k < 6; ++k) {
    Localization l;
    l.frame = k;
    l.x = 3.25 + k;
    l.y = 4.5 + k;
    l.sigma = 1.2;
    l.photons = 900;
    l.background = 3;
    l.lpx = l.lpy = 0.04;
    locs.push_back(l);
  }
  return locs;
}

LocalizationFile read(const fs::path& path, double pixel_size_nm = 0) {
  LocReadOptions options;
  options.pixel_size_nm = pixel_size_nm;
  return read_localization_file(path.string(), options);
}

}  // namespace

TEST_CASE("x.csv and x.hdf5 of one stem: each its own .yaml, both survive and read back") {
  test::TempDir dir;
  const auto locs = some_locs();
  // Two runs: the CSV first, then the HDF5 of the same stem, with other metadata.
  write_localizations((dir / "x.csv").string(), "", context(64, 160), locs);
  const std::string csv_yaml = test::read_file(dir / "x.csv.yaml");
  write_localizations((dir / "x.hdf5").string(), "", context(80, 130), locs);
  REQUIRE(fs::exists(dir / "x.csv.yaml"));
  REQUIRE(fs::exists(dir / "x.yaml"));  // Picasso's own name for the .hdf5's
  CHECK(test::read_file(dir / "x.csv.yaml") == csv_yaml);
  const LocalizationFile csv = read(dir / "x.csv"), h5 = read(dir / "x.hdf5");
  CHECK(csv.width == 64);
  CHECK(csv.pixel_size_nm == 160);
  CHECK(csv.locs.size() == locs.size());
  CHECK(h5.width == 80);
  CHECK(h5.pixel_size_nm == 130);
  CHECK(h5.locs.size() == locs.size());
  // --format csv on another extension: still the file's name + .yaml.
  auto writer = create_localization_writer((dir / "t.txt").string(), "csv", context(64, 160));
  CHECK(writer->files() == std::vector<std::string>{(dir / "t.txt").string(), (dir / "t.txt.yaml").string()});
}

TEST_CASE("an older CSV's x.yaml is read only while it can be nobody else's") {
  test::TempDir dir;
  const auto locs = some_locs();
  write_localizations((dir / "old.csv").string(), "", context(64, 160), locs);
  fs::rename(dir / "old.csv.yaml", dir / "old.yaml");  // as fit2d wrote CSVs before
  CHECK(read(dir / "old.csv").width == 64);
  // A Picasso file of the stem claims x.yaml: the CSV no longer reads it.
  write_localizations((dir / "old.hdf5").string(), "", context(80, 130), locs);
  const LocalizationFile csv = read(dir / "old.csv", 160);
  CHECK(csv.width == 0);
  CHECK_FALSE(csv.pixel_size_from_yaml);
  // A movie's own metadata (one document) is not a CSV's.
  write_localizations((dir / "m.csv").string(), "", context(64, 160), locs);
  fs::remove(dir / "m.csv.yaml");
  test::write_file(dir / "m.yaml", "Width: 99\nHeight: 40\nFrames: 10\n");
  CHECK(read(dir / "m.csv", 160).width == 0);
}

TEST_CASE("Picasso 0.11's /metadata: read when the .yaml is missing; the .yaml wins when both are there") {
  if (!test::python_available()) return;
  test::TempDir dir;
  for (const char* kind : {"variable", "fixed"}) {
    CAPTURE(kind);
    const fs::path path = dir / (std::string(kind) + ".hdf5");
    const auto made = test::run_python("picasso011_locs.py", {path.string(), "32", "24", "10", "130", kind});
    REQUIRE_MESSAGE(made.exit_code == 0, made.output);
    REQUIRE_FALSE(fs::exists(fs::path(path).replace_extension(".yaml")));
    const LocalizationFile file = read(path);
    CHECK(file.width == 32);
    CHECK(file.height == 24);
    CHECK(file.frames == 10);
    CHECK(file.pixel_size_nm == 130);
    CHECK(file.pixel_size_from_yaml);
    CHECK(file.metadata_source == path.string() + ":/metadata");
    CHECK(file.locs.size() == 5);
    REQUIRE(file.carried.yaml.size() == 3);  // every info object, carried into a rewrite's .yaml
    CHECK(test::contains(file.carried.yaml[1], "Min. Net Gradient: 5000"));
  }
  // Picasso's load_info reads the .yaml first: so do we.
  const fs::path both = dir / "variable.hdf5";
  test::write_file(dir / "variable.yaml", "Width: 50\nHeight: 24\nFrames: 10\n---\nPixelsize: 100\n");
  const LocalizationFile file = read(both);
  CHECK(file.width == 50);
  CHECK(file.pixel_size_nm == 100);
  CHECK(file.metadata_source == (dir / "variable.yaml").string());
  // /metadata that is not a JSON list: one line naming the file.
  const auto bad = test::run_command("/usr/bin/python3 -c \"import h5py,sys; f=h5py.File(sys.argv[1],'a'); "
                                     "del f['metadata']; f['metadata']='{not json'\" " +
                                     test::shell_quote((dir / "fixed.hdf5").string()));
  REQUIRE_MESSAGE(bad.exit_code == 0, bad.output);
  const auto e = test::expect_error<InputError>([&] { read(dir / "fixed.hdf5"); });
  CHECK(test::contains(e.where(), "fixed.hdf5"));
  CHECK(test::contains(e.where(), "/metadata"));
}
