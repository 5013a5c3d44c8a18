// The bad-input catalogue: every tool (and every merge, and bench where it reads
// a user's file) against broken input. Each row is a command line with the exit
// code it must end with, a fragment naming the file or option and a fragment of
// the problem. Every row must exit with that code (never by a signal), print
// exactly one line "<tool>: error: <where>: <what>", and change nothing on disk:
// no file under the final name, no temporary file beside it, inputs untouched.
//
// Inputs: zero-byte and truncated TIFF/HDF5 (header only, half the first IFD,
// mid-pixel data; signature only, half a superblock, mid-chunk data), pages of
// different sizes, 1-D and 4-D datasets, pixel types the readers refuse (1-bit,
// RGB, complex, int64 TIFF; compound, complex, string HDF5), NaN and Inf pixels,
// frames smaller than the fit box, absurd parameters. Outputs: a missing
// directory, a path under a regular file, /proc, a symbolic link to /dev/full and
// a full disk (a 64 kB tmpfs filled up; skipped with a message where mount is
// not permitted). NaN/Inf policy: smre, sofi and frc refuse them (exit 3, the
// frame named); fit2d detects no spot near them and writes only finite numbers.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "nanoscopy/core/camera_maps.hpp"
#include "nanoscopy/io/hdf5_images.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

std::string q(const fs::path& p) { return shell_quote(p.string()); }

void require_ok(const CommandResult& r) { REQUIRE_MESSAGE(r.exit_code == 0, r.output); }

// A tmpfs of 64 kB mounted on `dir` and filled up; unmounted by the destructor.
class FullDisk {
 public:
  explicit FullDisk(const fs::path& dir) : dir_(dir) {
    fs::create_directories(dir);
    if (::geteuid() != 0) return;
    mounted_ = run_command("mount -t tmpfs -o size=64k tmpfs " + q(dir)).exit_code == 0;
    if (mounted_) write_file(dir / "filler", std::string(128 * 1024, '\0'));  // stops at the 64 kB
  }
  ~FullDisk() {
    if (mounted_) run_command("umount " + q(dir_));
  }
  FullDisk(const FullDisk&) = delete;
  FullDisk& operator=(const FullDisk&) = delete;
  bool mounted() const { return mounted_; }

 private:
  fs::path dir_;
  bool mounted_ = false;
};

// Little-endian 16/32-bit values of a classic TIFF.
std::uint32_t le(const std::string& bytes, std::size_t at, int size) {
  std::uint32_t v = 0;
  for (int i = size - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + static_cast<std::size_t>(i)]);
  return v;
}

struct Fixtures {
  TempDir root;
  fs::path in = root / "in", out = root / "out", parts = root / "parts", links = root / "links";
  fs::path full_dir = root / "full";
  FullDisk full{full_dir};
  fs::path movie = in / "movie.tif", movie_h5 = in / "movie.h5", tiny = in / "tiny.tif", plain = root / "afile.txt";

  Fixtures() {
    for (const auto& d : {in, out, parts, links, in / "adir.csv"}) fs::create_directories(d);
    const std::string bench = shell_quote(app_path("bench")) + " --quiet simulate movie --width 32 --height 24 ";
    require_ok(run_command(bench + "--frames 10 --emitters 20 --on-fraction 0.5 -o " + q(movie)));
    require_ok(run_command(bench + "--frames 10 --emitters 20 --on-fraction 0.5 -o " + q(movie_h5)));
    require_ok(run_command(shell_quote(app_path("bench")) +
                           " --quiet simulate movie --frames 3 --width 5 --height 5 --emitters 0 -o " + q(tiny)));
    for (const char* truth : {"movie_truth.csv", "tiny_truth.csv"}) fs::remove(in / truth);
    write_file(plain, "");

    // Truncations of our own writers' files.
    const std::string tif = read_file(movie), h5 = read_file(movie_h5);
    REQUIRE(tif.substr(0, 4) == std::string("II*\0", 4));
    const std::uint32_t ifd = le(tif, 4, 4), entries = le(tif, ifd, 2);
    std::uint32_t data = 0;  // StripOffsets of page 0
    for (std::uint32_t e = 0; e < entries; ++e)
      if (le(tif, ifd + 2 + 12 * e, 2) == 273) data = le(tif, ifd + 2 + 12 * e + 8, 4);
    REQUIRE(data > ifd);
    const std::size_t frame_bytes = 32 * 24 * 2;
    write_file(in / "empty.tif", "");
    write_file(in / "notes.tif", "these are my notes, not an image\n");
    write_file(in / "header_only.tif", tif.substr(0, 8));
    write_file(in / "half_ifd.tif", tif.substr(0, ifd + (2 + 12 * entries + 4) / 2));
    write_file(in / "mid_pixels.tif", tif.substr(0, data + 5 * frame_bytes / 2));
    write_file(in / "empty.h5", "");
    write_file(in / "signature_only.h5", h5.substr(0, 8));
    write_file(in / "half_superblock.h5", h5.substr(0, 48));
    write_file(in / "mid_data.h5", h5.substr(0, h5.size() * 6 / 10));

    // Files only other writers make (tifffile, Pillow, h5py).
    REQUIRE_MESSAGE(python_available(), "the bad-input fixtures need /usr/bin/python3 with numpy, tifffile and h5py");
    const auto made = run_python("bad_input_fixtures.py", {in.string(), movie.string()});
    REQUIRE_MESSAGE(made.exit_code == 0, made.output);

    // Part files of each tool, and broken ones.
    const std::string m = q(movie);
    require_ok(run_tool("fit2d", "--quiet " + m + " --frames 0:5 --partial " + q(parts / "fit2d_0.h5")));
    require_ok(run_tool("fit2d", "--quiet " + m + " --frames 5:10 --partial " + q(parts / "fit2d_1.h5")));
    const std::string smre = "--quiet --icd --psf 1 --iterations 3 " + m;
    require_ok(run_tool("smre", smre + " --frames 0:5 --partial " + q(parts / "smre_0.h5")));
    require_ok(run_tool("smre", smre + " --frames 5:10 --partial " + q(parts / "smre_1.h5")));
    const std::string sofi = "--quiet --device cpu --orders 2 --block 5 " + m;
    require_ok(run_tool("sofi", sofi + " --frames 0:5 --partial " + q(parts / "sofi_0.h5")));
    require_ok(run_tool("sofi", sofi + " --frames 5:10 --partial " + q(parts / "sofi_1.h5")));
    for (const std::string t : {"fit2d", "smre", "sofi"}) {
      write_file(parts / (t + "_empty.h5"), "");
      const std::string whole = read_file(parts / (t + "_0.h5"));
      write_file(parts / (t + "_half.h5"), whole.substr(0, whole.size() / 2));
    }

    // Symbolic links to /dev/full: AtomicOutput must not rename a file over the device.
    for (const char* ext : {".tif", ".h5", ".csv", ".hdf5", ".json", ".png"})
      fs::create_symlink("/dev/full", links / (std::string("devfull") + ext));
  }
};

Fixtures& fixtures() {
  static Fixtures f;
  return f;
}

// Everything under the scratch tree: names, types, sizes and link targets.
std::map<std::string, std::string> snapshot(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const auto& e = *it;
    std::string what;
    if (e.is_symlink()) what = "link " + fs::read_symlink(e.path()).string();
    else if (e.is_directory()) what = "dir";
    else what = "file " + std::to_string(e.file_size());
    out[fs::relative(e.path(), root).string()] = what;
  }
  return out;
}

struct Row {
  std::string args;  // after "<tool> --quiet"
  int code;
  std::string where, what;
  bool needs_full_disk = false;
};

void check_rows(const std::string& name, const std::vector<Row>& rows) {
  auto& f = fixtures();
  bool told = false;
  for (const auto& row : rows) {
    if (row.needs_full_disk && !f.full.mounted()) {
      if (!told) MESSAGE("mount -t tmpfs is not permitted here: the full-disk rows of " << name << " are skipped");
      told = true;
      continue;
    }
    CAPTURE(row.args);
    const auto before = snapshot(f.root.path());
    const auto r = run_tool(name, "--quiet " + row.args);
    check_one_line_error(r, name, row.code, row.where, row.what);
    CHECK(r.output.size() < 700);  // a huge value in the input is quoted by its head (clip_text.hpp)
    CHECK(snapshot(f.root.path()) == before);  // no output, no temporary file, inputs untouched
  }
}

struct BadStack {
  std::string file, what;
};

// Every stack reader's refusals, common to the four tools.
const std::vector<BadStack>& bad_stacks() {
  static const std::vector<BadStack> stacks = {
      {"missing.tif", "no such file"},
      {"empty.tif", "empty"},
      {"notes.tif", "not a TIFF"},
      {"header_only.tif", "truncated"},
      {"half_ifd.tif", "truncated"},
      {"mid_pixels.tif", "truncated"},
      {"empty.h5", "empty"},
      {"signature_only.h5", "cannot open the HDF5 file"},
      {"half_superblock.h5", "truncated"},
      {"mid_data.h5", "truncated"},
      {"pages_differ.tif", "all pages of a stack must have the same size"},
      {"rank1.h5", "rank 1"},
      {"rank4.h5", "rank 4"},
      {"bilevel.tif", "unsupported pixel type: 1-bit"},
      {"rgb.tif", "3 samples per pixel"},
      {"complex.tif", "unsupported pixel type: complex"},
      {"int64.tif", "unsupported pixel type: int64"},
      {"compound.h5", "compound values"},
      {"complex.h5", "compound values"},
      {"strings.h5", "string values"},
  };
  return stacks;
}

// One row per bad stack: `before` STACK `after`.
std::vector<Row> stack_rows(const std::string& before, const std::string& after) {
  std::vector<Row> rows;
  for (const auto& s : bad_stacks())
    rows.push_back({before + q(fixtures().in / s.file) + after, 3, s.file, s.what});
  return rows;
}

// /proc takes no new files: root (who passes the access check) fails to create one; anyone else is told first.
std::string proc_what() { return ::geteuid() == 0 ? "cannot create" : "is not writable"; }

void append(std::vector<Row>& rows, const std::vector<Row>& more) { rows.insert(rows.end(), more.begin(), more.end()); }

}  // namespace

TEST_CASE("fit2d: broken stacks, a frame smaller than the box, absurd parameters, unwritable outputs") {
  auto& f = fixtures();
  const std::string m = q(f.movie), out = " -o " + q(f.out / "locs.csv");
  auto rows = stack_rows("", out);
  append(rows, {
                   {"--box 7 " + q(f.tiny) + out, 3, "tiny.tif", "smaller than the detection box of 7"},
                   {"--box 4 " + m + out, 2, "--box", "must be odd"},
                   {"--box 1001 " + m + out, 2, "--box", "[3, 31]"},
                   {"--threshold -1 " + m + out, 2, "--threshold", "(0, inf)"},
                   {"--pixel-size -5 " + m + out, 2, "--pixel-size", "(0, inf)"},
                   {"--gain 0 " + m + out, 2, "Gain", ""},
                   {"--max-iterations -3 " + m + out, 2, "--max-iterations", ""},
                   {"--fit-precision half " + m + out, 2, "--fit-precision", "not a valid choice"},
                   {"--estimator foo " + m + out, 2, "--estimator", "not a valid choice"},
                   {"--estimator mle --camera-maps " + q(f.out / "nothere.h5") + " " + m + out, 3, "nothere.h5",
                    "no such file"},
                   {"--estimator lsq --camera-maps " + q(f.out / "nothere.h5") + " " + m + out, 2, "--camera-maps",
                    "wlsq or mle"},
                   {"--frames 3:3 " + m + out, 3, "movie.tif", "frame range 3:3"},
                   {"--frames 0:50 " + m + out, 3, "movie.tif", "outside the stack of 10 frames"},
                   {m + " -o " + q(f.out / "nodir" / "locs.csv"), 4, "nodir", "does not exist"},
                   {m + " -o " + q(f.plain / "locs.csv"), 4, "afile.txt", "is not a directory"},
                   {m + " -o " + q(f.out / "locs.xlsx"), 2, "locs.xlsx", ""},
                   {m + " -o " + q(f.out), 2, "out", "no file extension"},
                   {m + " -o " + q(f.in / "adir.csv"), 4, "adir.csv", "is a directory"},
                   {m + " -o /proc/locs.csv", 4, "/proc/locs.csv", proc_what()},
                   {m + " -o " + q(f.links / "devfull.csv"), 4, "devfull.csv", "is not a regular file"},
                   {m + " -o " + q(f.links / "devfull.hdf5"), 4, "devfull.hdf5", "is not a regular file"},
                   {m + " --frames 0:5 --partial " + q(f.plain / "p.h5"), 4, "afile.txt", "is not a directory"},
                   // The rows fill the disk; the .yaml beside them (written last) is the file that fails.
                   {m + " -o " + q(f.full_dir / "locs.csv"), 4, "locs.csv.yaml", "No space left on device", true},
                   {m + " -o " + q(f.full_dir / "locs.hdf5"), 4, "locs.hdf5", "No space left on device", true},
                   {m + " --frames 0:5 --partial " + q(f.full_dir / "p.h5"), 4, "p.h5", "No space left on device",
                    true},
               });
  check_rows("fit2d", rows);
}

TEST_CASE("smre: broken stacks, NaN and Inf pixels, absurd parameters, unwritable outputs") {
  auto& f = fixtures();
  const std::string run = "--icd --psf 1 --iterations 3 ", m = q(f.movie), out = " -o " + q(f.out / "x.tif");
  auto rows = stack_rows(run, out);
  append(rows, {
                   {run + q(f.in / "nan.tif") + out, 3, "nan.tif frame 3", "NaN or infinite"},
                   {run + q(f.in / "inf.tif") + out, 3, "inf.tif frame 5", "NaN or infinite"},
                   {run + q(f.in / "nan.h5") + out, 3, "nan.h5 frame 3", "NaN or infinite"},
                   {"--icd --psf 1 " + q(f.tiny) + out, 2, "--psf", "wider than the 5x5 image"},
                   {"--icd --psf -1 " + m + out, 2, "--psf", "(0, inf)"},
                   {"--icd --fwhm -2 " + m + out, 2, "--fwhm", "must be > 0"},
                   {"--icd --psf 1 --noise -2 " + m + out, 2, "gaussian noise", ""},
                   {"--icd --psf 1 --iterations 0 " + m + out, 2, "--iterations", "[1, inf)"},
                   {"--icd --psf 1 --mrdepth 0 " + m + out, 2, "MRdepth", ""},
                   {run + "--frames 4:4 " + m + out, 3, "movie.tif", "frame range 4:4"},
                   {run + m + " -o " + q(f.out / "nodir" / "x.tif"), 4, "nodir", "does not exist"},
                   {run + m + " -o " + q(f.plain / "x.tif"), 4, "afile.txt", "is not a directory"},
                   {run + m + " -o " + q(f.out / "x.png"), 2, "x.png", "unknown image extension"},
                   {run + m + " -o /proc/x.tif", 4, "/proc/x.tif", proc_what()},
                   {run + m + " -o " + q(f.links / "devfull.tif"), 4, "devfull.tif", "is not a regular file"},
                   {run + m + " --log " + q(f.plain / "log.csv") + out, 4, "afile.txt", "is not a directory"},
                   {run + m + " -o " + q(f.full_dir / "x.tif"), 4, "x.tif", "No space left on device", true},
                   {run + m + " -o " + q(f.full_dir / "x.h5"), 4, "x.h5", "No space left on device", true},
                   {run + m + " --frames 0:5 --partial " + q(f.full_dir / "p.h5"), 4, "p.h5",
                    "No space left on device", true},
               });
  check_rows("smre", rows);
}

TEST_CASE("sofi: broken stacks, NaN and Inf pixels, absurd parameters, unwritable outputs") {
  auto& f = fixtures();
  const std::string run = "--device cpu --orders 2 --block 5 ", m = q(f.movie), out = " -o " + q(f.out / "x.tif");
  auto rows = stack_rows(run, out);
  append(rows, {
                   {run + q(f.in / "nan.tif") + out, 3, "nan.tif frame 3", "NaN or infinite"},
                   {run + q(f.in / "inf.tif") + out, 3, "inf.tif frame 5", "NaN or infinite"},
                   {run + q(f.in / "nan.h5") + out, 3, "nan.h5 frame 3", "NaN or infinite"},
                   {run + "--frames 5:10 --partial " + q(f.out / "p.h5") + " " + q(f.in / "inf.tif"), 3,
                    "inf.tif frame 5", "NaN or infinite"},
                   {"--device cpu --orders 9 --block 5 " + m + out, 2, "--orders", "order 9 is outside 2..6"},
                   {"--device cpu --orders '' --block 5 " + m + out, 2, "--orders", "no cumulant order"},
                   {"--device cpu --orders 2 --block 1000000 " + m + out, 3, "movie.tif",
                    "shorter than one block of 1000000"},
                   {"--device cpu --orders 2 --block 0 " + m + out, 2, "--block", "[2, inf)"},
                   {"--device cpu --orders 2 --block 5 --lags 0,7 " + m + out, 2, "--lags", "largest lag (7)"},
                   {run + "--cross --psf-sigma -1 " + m + out, 2, "--psf-sigma", "(0, inf)"},
                   {run + "--balanced --psf-sigma 1.5 " + m + out, 2, "--balanced", "largest order 3 or 4"},
                   {"--device cpu --orders 2,3,4,5 --block 5 --balanced --psf-sigma 1.5 " + m + out, 2, "--balanced",
                    "largest order 3 or 4"},
                   {"--device cpu --orders 2,3,4 --block 5 --balanced " + m + out, 2, "--balanced",
                    "needs the camera PSF"},
                   {"--device cpu --orders 2,3 --block 5 --balanced --cross --psf-sigma 1.5 " + m + out, 2,
                    "--balanced", "leave out --cross"},
                   {"--device cpu --orders 2,3,4 --block 5 --balanced --psf-sigma 1.5 --rl-iterations 0 " + m + out, 2,
                    "--rl-iterations", "[1, 10000]"},
                   {"--device cpu --orders 2,3,4 --block 5 --balanced --psf-sigma 1.5 --deconvolution lucy " + m + out,
                    2, "--deconvolution", "lucy"},
                   {run + "--frames 2:2 " + m + out, 3, "movie.tif", "frame range 2:2"},
                   {run + q(f.tiny) + out, 3, "tiny.tif", "shorter than one block of 5"},
                   {run + m + " -o " + q(f.out / "nodir" / "x.tif"), 4, "nodir", "does not exist"},
                   {run + m + " -o " + q(f.plain / "x.tif"), 4, "afile.txt", "is not a directory"},
                   {run + m + " -o /proc/x.tif", 4, "/proc/x.tif", proc_what()},
                   {run + m + " -o " + q(f.links / "devfull.tif"), 4, "devfull.tif", "is not a regular file"},
                   {run + m + " -o " + q(f.links / "devfull.h5"), 4, "devfull.h5", "is not a regular file"},
                   {run + m + " --partial " + q(f.plain / "p.h5"), 4, "afile.txt", "is not a directory"},
                   {run + m + " -o " + q(f.full_dir / "x.tif"), 4, "x.tif", "No space left on device", true},
                   {run + m + " -o " + q(f.full_dir / "x.h5"), 4, "x.h5", "No space left on device", true},
                   {run + m + " --split odd-even -o " + q(f.full_dir / "s.tif"), 4, "s.tif",
                    "No space left on device", true},
                   {run + m + " --partial " + q(f.full_dir / "p.h5"), 4, "p.h5", "No space left on device", true},
               });
  check_rows("sofi", rows);
}

TEST_CASE("frc: broken stacks and images, NaN and Inf pixels, absurd parameters, unwritable outputs") {
  auto& f = fixtures();
  const std::string m = q(f.movie), json = " --json " + q(f.out / "frc.json"), image = q(f.in / "image.tif");
  auto rows = stack_rows("--split odd-even ", json);
  append(rows, stack_rows(image + " ", json));  // as the second of two images
  append(rows, {
                   {"--split odd-even " + q(f.in / "nan.tif") + json, 3, "nan.tif frame 3", "NaN or infinite"},
                   {"--split halves " + q(f.in / "inf.tif") + json, 3, "inf.tif frame 5", "NaN or infinite"},
                   {"--split odd-even " + q(f.in / "nan.h5") + json, 3, "nan.h5 frame 3", "NaN or infinite"},
                   {q(f.in / "nan_image.tif") + " " + image + json, 3, "nan_image.tif page 0", "NaN or infinite"},
                   {image + " " + q(f.in / "inf_image.tif") + json, 3, "inf_image.tif page 0", "NaN or infinite"},
                   {"--split odd-even --frames 3:4 " + m + json, 3, "movie.tif", "needs at least 2 frames"},
                   {"--split odd-even --frames 3:3 " + m + json, 3, "movie.tif", "frame range 3:3"},
                   {"--split odd-even --tukey -1 " + m + json, 2, "--tukey", "[0, 0.5]"},
                   {"--split odd-even --threshold 9 " + m + json, 2, "--threshold", "unknown FRC threshold"},
                   {"--split thirds " + m + json, 2, "split", "thirds"},
                   {"--split odd-even " + m + " --json " + q(f.out / "nodir" / "x.json"), 4, "nodir",
                    "does not exist"},
                   {"--split odd-even " + m + " --json " + q(f.plain / "x.json"), 4, "afile.txt", "is not a directory"},
                   {"--split odd-even " + m + " --curve /proc/c.csv", 4, "/proc/c.csv", proc_what()},
                   {"--split odd-even " + m + " --plot " + q(f.links / "devfull.png"), 4, "devfull.png",
                    "is not a regular file"},
                   {"--split odd-even " + m + " --json " + q(f.links / "devfull.json"), 4, "devfull.json",
                    "is not a regular file"},
                   {"--split odd-even " + m + " --json " + q(f.full_dir / "x.json"), 4, "x.json",
                    "No space left on device", true},
                   {"--split odd-even " + m + " --curve " + q(f.full_dir / "c.csv"), 4, "c.csv",
                    "No space left on device", true},
                   {"--split odd-even " + m + " --plot " + q(f.full_dir / "p.png"), 4, "p.png", "cannot write the PNG",
                    true},
               });
  check_rows("frc", rows);
}

TEST_CASE("fit2d merge, smre merge, sofi merge: broken parts and unwritable outputs") {
  auto& f = fixtures();
  const std::map<std::string, std::string> not_a_part = {{"fit2d", "not a part file of this tool"},
                                                         {"smre", "not a part file of this tool"},
                                                         {"sofi", "not a sofi partial file"}};
  for (const std::string t : {"fit2d", "smre", "sofi"}) {
    CAPTURE(t);
    const std::string ext = t == "fit2d" ? ".csv" : ".tif";
    const std::string p0 = q(f.parts / (t + "_0.h5")), p1 = q(f.parts / (t + "_1.h5"));
    const std::string other = q(f.parts / (t == "sofi" ? "fit2d_0.h5" : "sofi_0.h5"));
    const std::string out = " -o " + q(f.out / ("merged" + ext));
    check_rows(t, {
                      {"merge " + q(f.parts / (t + "_empty.h5")) + " " + p1 + out, 3, t + "_empty.h5",
                       "not an HDF5 file"},
                      {"merge " + q(f.parts / (t + "_half.h5")) + " " + p1 + out, 3, t + "_half.h5", "truncated"},
                      {"merge " + q(f.parts / "missing.h5") + " " + p1 + out, 3, "missing.h5", "no such file"},
                      {"merge " + q(f.movie_h5) + out, 3, "movie.h5", not_a_part.at(t)},
                      {"merge " + q(f.movie) + out, 3, "movie.tif", "not an HDF5 file"},
                      {"merge " + other + " " + p1 + out, 3, t == "sofi" ? "fit2d_0.h5" : "sofi_0.h5",
                       not_a_part.at(t)},
                      {"merge " + p1 + out, 3, t + "_1.h5", "missing"},
                      {"merge" + out, 2, "command line", "parts is required"},
                      {"merge " + p0 + " " + p1 + " -o " + q(f.out / "nodir" / ("m" + ext)), 4, "nodir",
                       "does not exist"},
                      {"merge " + p0 + " " + p1 + " -o " + q(f.plain / ("m" + ext)), 4, "afile.txt",
                       "is not a directory"},
                      {"merge " + p0 + " " + p1 + " -o " + q(f.links / ("devfull" + ext)), 4, "devfull" + ext,
                       "is not a regular file"},
                      // fit2d's CSV rows fill the disk; the .yaml beside them (written last) is the file that fails.
                      {"merge " + p0 + " " + p1 + " -o " + q(f.full_dir / ("m" + ext)), 4,
                       t == "fit2d" ? std::string("m.csv.yaml") : "m" + ext, "No space left on device", true},
                  });
  }
}

TEST_CASE("bench: broken --truth and --smre-params files, unwritable outputs") {
  auto& f = fixtures();
  check_rows("bench", {
                          {"smre --devices cpu --truth " + q(f.in / "missing.tif"), 3, "missing.tif", "no such file"},
                          {"smre --devices cpu --truth " + q(f.in / "half_ifd.tif"), 3, "half_ifd.tif", "truncated"},
                          {"smre --devices cpu --truth " + q(f.in / "rank4.h5"), 3, "rank4.h5", "rank 4"},
                          {"smre --devices cpu --truth " + q(f.in / "rgb.tif"), 3, "rgb.tif", "3 samples per pixel"},
                          {"smre --devices cpu --truth " + q(f.in / "image.tif") + " --json " + q(f.plain / "b.json"),
                           4, "afile.txt", "is not a directory"},
                          {"sofi --devices cpu --smre-params " + q(f.in / "missing.prm"), 2, "missing.prm",
                           "not found"},
                          {"sofi --devices cpu --json " + q(f.out / "nodir" / "b.json"), 4, "nodir", "does not exist"},
                          {"simulate movie --frames 5 -o " + q(f.links / "devfull.tif"), 4, "devfull.tif",
                           "is not a regular file"},
                          {"simulate blinking --frames 50 --size 16 -o " + q(f.links / "devfull.h5"), 4,
                           "devfull.h5", "is not a regular file"},
                          {"simulate movie --frames 5 -o " + q(f.full_dir / "m.tif"), 4, "m.tif",
                           "No space left on device", true},
                          {"simulate blinking --frames 50 --size 16 -o " + q(f.full_dir / "b.h5"), 4, "b.h5",
                           "No space left on device", true},
                      });
}

TEST_CASE("bench simulate movie: broken --camera-maps and --calibration files") {
  auto& f = fixtures();
  const fs::path d = f.in / "camera";
  fs::create_directories(d);
  CameraMaps good;
  good.width = 32;
  good.height = 24;
  good.offset.assign(32 * 24, 100.0f);
  good.gain.assign(32 * 24, 2.0f);
  good.variance.assign(32 * 24, 5.0f);
  write_camera_maps_hdf5((d / "good.h5").string(), good);
  auto bad = good;
  bad.gain[40] = std::nanf("");
  write_camera_maps_hdf5((d / "nan.h5").string(), bad);
  bad = good;
  bad.gain[3] = 0;
  write_camera_maps_hdf5((d / "zero_gain.h5").string(), bad);
  write_camera_maps_tiff((d / "o.tif").string(), (d / "g.tif").string(), (d / "v.tif").string(), bad);
  bad = good;
  bad.variance[0] = -2;
  write_camera_maps_hdf5((d / "negative_variance.h5").string(), bad);
  write_hdf5_images((d / "two.h5").string(),
                    {{"offset", 32, 24, good.offset.data(), "", 0}, {"gain", 32, 24, good.gain.data(), "", 0}}, "");
  write_file(d / "astig.json", "{\"pixel_size_nm\": 100, \"z_range_nm\": [-400, 400], \"x\": {\"sigma0\": 120,");
  write_file(d / "astig_no_y.json",
             R"({"pixel_size_nm": 100, "z_range_nm": [-400, 400], "x": {"sigma0": 120, "c": -200, "d": 350}})");
  const std::string sim = "simulate movie --frames 5 --width 32 --height 24 -o " + q(f.out / "m.tif") + " ";
  const std::string scmos = sim + "--camera scmos --camera-maps ";
  check_rows("bench", {
                          {scmos + q(d / "missing.h5"), 3, "missing.h5", "no such file"},
                          {scmos + q(d / "two.h5"), 3, "two.h5", "no dataset /variance"},
                          {scmos + q(d / "nan.h5"), 3, "nan.h5:/gain", "gain map: pixel (8, 1) = nan is not a finite number"},
                          {scmos + q(d / "zero_gain.h5"), 3, "zero_gain.h5:/gain", "is not positive"},
                          {scmos + q(d / "negative_variance.h5"), 3, "negative_variance.h5:/variance", "is negative"},
                          {scmos + q(d / "o.tif") + "," + q(d / "g.tif") + "," + q(d / "v.tif"), 3, "g.tif",
                           "gain map: pixel (3, 0) = 0 is not positive"},
                          {scmos + q(d / "o.tif"), 3, "o.tif", "not an HDF5 file"},
                          {scmos + q(d / "o.tif") + "," + q(d / "g.tif"), 2, "--camera-maps",
                           "expected one HDF5 file (maps.h5) or three"},
                          {"simulate movie --frames 5 --width 40 --height 24 -o " + q(f.out / "m.tif") +
                               " --camera scmos --camera-maps " + q(d / "good.h5"),
                           3, "good.h5", "the camera maps are 32x24 pixels but the frames of"},
                          {sim + "--camera-maps " + q(d / "good.h5"), 2, "--camera-maps", "only with --camera scmos"},
                          {sim + "--calibration " + q(d / "astig.json"), 3, "astig.json", "not a valid JSON calibration"},
                          {sim + "--calibration " + q(d / "astig_no_y.json"), 3, "astig_no_y.json", "the key \"y\""},
                          {sim + "--calibration " + q(d / "none.json"), 3, "none.json", "cannot open"},
                          {sim + "--astigmatic --z-max 900", 2, "--z-min/--z-max", "outside the range -600 to 600 nm"},
                          {sim + "--z-min -100", 2, "--z-min", "only with --astigmatic, --calibration or --z-stack"},
                          {sim + "--astigmatic --beads 3", 2, "--beads", "only with --z-stack"},
                      });
}

TEST_CASE("several outputs of one run: a later one that cannot be written takes the earlier ones with it") {
  // sofi --split writes the image, then each half; bench simulate the stack, then its truth.
  // A directory in the place of the last output fails the run after the first files
  // are finished: none of this run's files may appear, and a previous run's stay.
  auto& f = fixtures();
  const fs::path d = f.root / "multi";
  fs::create_directories(d);
  write_file(d / "s.tif", "a previous sofi image");
  write_file(d / "m.tif", "a previous movie");
  for (const char* blocker : {"s_odd.tif", "m_truth.csv", "b_mean.tif"}) fs::create_directories(d / blocker);
  const struct {
    std::string tool, args, where;
  } rows[] = {
      {"sofi", "--device cpu --orders 2 --block 5 --split odd-even " + q(f.movie) + " -o " + q(d / "s.tif"),
       "s_odd.tif"},
      {"bench", "simulate movie --frames 5 --width 16 --height 16 -o " + q(d / "m.tif"), "m_truth.csv"},
      {"bench", "simulate blinking --frames 50 --size 16 -o " + q(d / "b.tif"), "b_mean.tif"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.args);
    const auto before = snapshot(d);
    check_one_line_error(run_tool(row.tool, "--quiet " + row.args), row.tool, 4, row.where, "is a directory");
    CHECK(snapshot(d) == before);  // no output of this run, no temporary file
  }
  CHECK(read_file(d / "s.tif") == "a previous sofi image");
  CHECK(read_file(d / "m.tif") == "a previous movie");
}

TEST_CASE("NaN and Inf pixels: fit2d detects no spot near them and writes only finite localizations") {
  auto& f = fixtures();
  const auto clean = run_tool("fit2d", "--quiet " + q(f.movie) + " -o " + q(f.out / "clean.csv"));
  require_ok(clean);
  const auto found = read_localizations((f.out / "clean.csv").string(), 100).size();
  REQUIRE(found > 0);
  // tests/python/bad_input_fixtures.py: NaN at (16, 12) of frame 3, +Inf at (2, 1) of frame 5.
  struct Bad {
    std::string input;
    std::int64_t frame;
    double x, y;
  };
  for (const Bad& bad : {Bad{"nan.tif", 3, 16, 12}, Bad{"inf.tif", 5, 2, 1}, Bad{"nan.h5", 3, 16, 12}})
    for (const std::string ext : {".csv", ".hdf5"}) {
      const std::string& input = bad.input;
      CAPTURE(input);
      CAPTURE(ext);
      const fs::path out = f.out / ("locs" + ext);
      const auto r = run_tool("fit2d", "--quiet " + q(f.in / input) + " -o " + q(out));
      require_ok(r);
      const auto locs = read_localizations(out.string(), 100);
      CHECK(locs.size() > 0);  // one bad pixel does not silence the stack
      // and breeds no spot of its own. (Elsewhere in that frame the detection level
      // may differ a little: the noise is estimated from the finite pixels.)
      CHECK(locs.size() <= found + 5);
      for (const auto& l : locs)
        if (l.frame == bad.frame) CHECK(std::hypot(l.x - bad.x, l.y - bad.y) > 3.0);
      for (const auto& l : locs)
        for (double v : {l.x, l.y, l.sigma, l.photons, l.background, l.lpx, l.lpy, l.chi2})
          CHECK(std::isfinite(v));
      if (ext == ".csv") {  // the rows, after the header
        std::string text = read_file(out);
        text.erase(0, text.find('\n'));
        std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
        CHECK(text.find("nan") == std::string::npos);
        CHECK(text.find("inf") == std::string::npos);
      }
      fs::remove(out);
      fs::remove(f.out / ("locs.yaml"));      // the .hdf5's
      fs::remove(f.out / ("locs.csv.yaml"));  // the .csv's
      fs::remove(f.out / ("locs" + ext + ".run.json"));  // the run's manifest (core/run_files.hpp)
    }
  fs::remove(f.out / "clean.csv");
  fs::remove(f.out / "clean.csv.yaml");
  fs::remove(f.out / "clean.csv.run.json");
  CHECK(fs::is_empty(f.out));
}

namespace {

// `text` with `from` (which must occur) replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return text.replace(at, from.size(), to);
}

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

}  // namespace

TEST_CASE("hostile inputs (issue 24): deep expressions and files, absurd grids, maps and metadata, per tool") {
  auto& f = fixtures();
  const fs::path d = f.in / "hostile";
  fs::create_directories(d);
  const fs::path h5 = d / "l.hdf5", csv = d / "c.csv";
  require_ok(run_tool("fit2d", "--quiet " + q(f.movie) + " -o " + q(h5)));
  require_ok(run_tool("fit2d", "--quiet " + q(f.movie) + " -o " + q(csv)));
  const std::string yaml = read_file(d / "l.yaml");
  // A row in frame 9 of a file whose metadata says 3 frames; a camera frame 1e8 pixels wide.
  fs::copy_file(h5, d / "beyond.hdf5");
  write_file(d / "beyond.yaml", replaced(yaml, "Frames: 10", "Frames: 3"));
  fs::copy_file(h5, d / "wide.hdf5");
  write_file(d / "wide.yaml", replaced(yaml, "Width: 32", "Width: 100000000"));
  // A CSV whose frame value in the first row is 20 MB long.
  {
    const std::string text = read_file(csv);
    const auto eol = text.find('\n'), eol2 = text.find('\n', eol + 1);
    const std::string header = text.substr(0, eol), row = text.substr(eol + 1, eol2 - eol - 1);
    std::vector<std::string> labels, fields;
    for (std::size_t s = 0, e = 0; e != std::string::npos; s = e + 1) labels.push_back(header.substr(s, (e = header.find(',', s)) - s));
    for (std::size_t s = 0, e = 0; e != std::string::npos; s = e + 1) fields.push_back(row.substr(s, (e = row.find(',', s)) - s));
    REQUIRE(labels.size() == fields.size());
    std::string bad = header + "\n";
    for (std::size_t c = 0; c < fields.size(); ++c)
      bad += (c ? "," : "") + (contains(labels[c], "frame") ? std::string(20'000'000, '9') + "z" : fields[c]);
    write_file(d / "hugefield.csv", bad + "\n");
    fs::copy_file(d / "c.csv.yaml", d / "hugefield.csv.yaml");
  }
  // A JSON parameter file nested 100,000 deep; a .prm value of 30 MB; the undrift grid pixel in a file.
  write_file(d / "deep.json", repeat("{\"a\":", 100000) + "1" + std::string(100000, '}'));
  write_file(d / "huge.prm", "subsection Undrift\n  set pixel = " + std::string(30'000'000, '7') + "x\nend\n");
  write_file(d / "tiny_pixel.prm", "subsection Undrift\n  set pixel = 1e-9\nend\n");
  const std::string l = q(h5), c = q(csv), o = " -o " + q(f.out / "x.hdf5"), tif = " -o " + q(f.out / "r.tif");
  const std::string maps = q(f.in / "huge_maps.h5"), frc = " --time-blocks 2 --json " + q(f.out / "frc.json");
  const std::string parens = repeat("(", 10000) + "x" + repeat(")", 10000);
  const std::string sqrts = repeat("sqrt(", 7000) + "x" + repeat(")", 7000);

  check_rows("fit2d", {
      // --where: bounded depth, unknown functions.
      {"filter " + l + o + " --where '" + parens + "'", 2, "--where", "nests too deeply"},
      {"filter " + l + o + " --where '" + sqrts + "'", 2, "--where", "nests too deeply"},
      {"filter " + l + o + " --where 'x" + repeat(" + x", 5000) + " > 0'", 2, "--where", "nests too deeply"},
      {"filter " + l + o + " --where 'foo(x) > 1'", 2, "--where", "unknown function 'foo' (functions: abs, sqrt)"},
      // RCC grids: refused before any search, naming the option given (and the file's line).
      {"undrift " + l + o + " --segment 5 --pixel 1e-9", 2, "--pixel", "needs a correlation grid of"},
      {"undrift " + l + o + " --segment 5 --pixel 0.0001", 2, "--pixel", "give a grid pixel of at least"},
      {"undrift " + l + o + " --segment 5 --max-drift 1e12", 2, "--max-drift", "or a smaller largest drift"},
      {"--params " + q(d / "tiny_pixel.prm") + " undrift " + l + o + " --segment 5", 2, "tiny_pixel.prm:2",
       "needs a correlation grid of"},
      {"--pixel-size 100 " + q(f.movie) + o + " --undrift --undrift-segment 5 --undrift-pixel 1e-9", 2,
       "--undrift-pixel", "needs a correlation grid of"},
      {"--pixel-size 100 " + q(f.movie) + o + " --undrift --undrift-segment 5 --undrift-max-drift 1e12", 2,
       "--undrift-max-drift", "needs a correlation grid of"},
      // Parameter files: depth bounded, values quoted by their head.
      {"--params " + q(d / "deep.json") + " " + q(f.movie) + o, 2, "deep.json:1", "nested deeper than 32 levels"},
      {"--params " + q(d / "huge.prm") + " " + q(f.movie) + o, 2, "huge.prm:2", "\u2026' is not a valid real"},
      // Sizes from a file checked before memory is allocated.
      {"--estimator mle --camera-maps " + maps + " " + q(f.movie) + o, 3, "huge_maps.h5:/offset",
       "the camera maps are 100000x100000 pixels but the frames of"},
      // Metadata that contradicts the rows, or is absurd: the input file's fault (exit 3).
      {"filter " + q(d / "beyond.hdf5") + o + " --where 'x > 0'", 3, "beyond.hdf5", "beyond the 3 frames"},
      {"link " + q(d / "beyond.hdf5") + o, 3, "beyond.hdf5", "beyond the 3 frames"},
      {"undrift " + q(d / "beyond.hdf5") + o + " --segment 5", 3, "beyond.hdf5", "beyond the 3 frames"},
      {"filter " + q(d / "wide.hdf5") + o + " --where 'x > 0'", 3, "wide.yaml", "Width 100000000"},
      {"render " + q(d / "wide.hdf5") + tif, 3, "wide.yaml", "Width 100000000"},
      {"filter " + q(d / "hugefield.csv") + o + " --where 'x > 0'", 3, "hugefield.csv:2", "\u2026' is not a"},
      // --color z on 2D localizations.
      {"render " + l + tif + " --color z", 2, "--color z", "l.hdf5 holds 2D localizations"},
      {"render " + c + tif + " --color z", 2, "--color z", "c.csv holds 2D localizations"},
  });
  check_rows("frc", {
      {q(d / "beyond.hdf5") + frc, 3, "beyond.hdf5", "beyond the 3 frames"},
      {q(d / "wide.hdf5") + frc, 3, "wide.yaml", "Width 100000000"},
      {q(d / "hugefield.csv") + frc, 3, "hugefield.csv:2", "\u2026' is not a"},
      {l + frc + " --field 1000000000x1000000000", 2, "--field", "more than 16384 pixels a side"},
      {"--params " + q(d / "deep.json") + " " + l + frc, 2, "deep.json:1", "nested deeper than 32 levels"},
  });
  check_rows("smre", {{"--params " + q(d / "deep.json") + " " + q(f.movie) + tif, 2, "deep.json:1",
                       "nested deeper than 32 levels"}});
  check_rows("sofi", {{"--params " + q(d / "deep.json") + " " + q(f.movie) + tif, 2, "deep.json:1",
                       "nested deeper than 32 levels"}});
  check_rows("bench", {{"simulate movie --frames 5 --width 32 --height 24 -o " + q(f.out / "m.tif") +
                            " --camera scmos --camera-maps " + maps,
                        3, "huge_maps.h5:/offset", "the camera maps are 100000x100000 pixels but the frames of"}});

  // fit2d link on rows out of frame order: linked as the sorted file is (no error).
  {
    const std::string text = read_file(csv);
    const auto eol = text.find('\n');
    std::vector<std::string> rows;
    for (std::size_t s = eol + 1; s < text.size();) {
      const auto e = text.find('\n', s);
      rows.push_back(text.substr(s, e - s));
      s = e + 1;
    }
    REQUIRE(rows.size() > 10);
    std::string reversed = text.substr(0, eol + 1);
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) reversed += *it + "\n";
    write_file(d / "unsorted.csv", reversed);
    fs::copy_file(d / "c.csv.yaml", d / "unsorted.csv.yaml");
    require_ok(run_tool("fit2d", "--quiet link " + c + " -o " + q(f.out / "sorted_link.csv")));
    require_ok(run_tool("fit2d", "--quiet link " + q(d / "unsorted.csv") + " -o " + q(f.out / "unsorted_link.csv")));
    CHECK(read_localizations((f.out / "unsorted_link.csv").string(), 100).size() ==
          read_localizations((f.out / "sorted_link.csv").string(), 100).size());
    for (const char* name : {"sorted_link.csv", "sorted_link.csv.yaml", "unsorted_link.csv", "unsorted_link.csv.yaml"})
      fs::remove(f.out / name);
  }
  fs::remove_all(d);
}
