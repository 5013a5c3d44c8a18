// Every tool and subcommand goes through the run's plan of files (core/run_files.hpp): an output
// that is a file the run reads, or that two outputs share, is refused with exit 2 and one line
// naming both before anything is written; a second run on the same outputs is refused while the
// first holds them; a run's files are one set (a later step's failure keeps the earlier set, a
// mixed set is told); SIGHUP removes what was pending.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "nanoscopy/core/run_files.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

std::string q(const fs::path& p) { return shell_quote(p.string()); }

// Every file of a folder with its bytes: inputs byte-identical, nothing added or left behind.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() || e.is_symlink())
      files[fs::relative(e.path(), dir).string()] = e.is_regular_file() ? read_file(e.path()) : "link";
  return files;
}

// The files the tests run on, made once: a 32×32 movie with its .yaml (pixel size 100 nm),
// its localizations (Picasso HDF5 + .yaml), a blinking stack for sofi and two part files.
struct Data {
  TempDir root;
  fs::path movie = root / "m.tif", locs = root / "locs.hdf5", blink = root / "blink.tif";
  fs::path p0 = root / "p0.h5", p1 = root / "p1.h5";
  Data() {
    auto r = run_tool("bench", "-q simulate movie -o " + q(movie) +
                                   " --frames 60 --width 32 --height 32 --emitters 6 --pixel-size 100");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    fs::remove(root / "m_truth.csv");
    r = run_tool("fit2d", "-q " + q(movie) + " -o " + q(locs));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    fs::remove(root / "locs.hdf5.run.json");
    r = run_command(shell_quote(app_path("bench")) + " simulate blinking --quiet -o " + q(blink) +
                    " --frames 40 --width 16 --height 16");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    for (const auto& e : fs::directory_iterator(root.path()))
      if (e.path().filename().string().starts_with("blink") && e.path() != blink) fs::remove(e.path());
    // sCMOS maps of the movie's size, for the rows that read camera maps.
    r = run_tool("bench", "-q simulate movie -o " + q(root / "mm.tif") +
                              " --frames 2 --width 32 --height 32 --camera scmos --pixel-size 100");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    fs::rename(root / "mm_maps.h5", root / "n_maps.h5");
    for (const char* name : {"mm.tif", "mm.yaml", "mm_truth.csv"}) fs::remove(root / name);
    r = run_tool("fit2d", "-q " + q(movie) + " --frames 0:30 --partial " + q(p0));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    r = run_tool("fit2d", "-q " + q(movie) + " --frames 30:60 --partial " + q(p1));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  }
};

Data& data() {
  static Data d;
  return d;
}

struct Clash {
  std::string tool, args;  // run in the data folder's copy
  std::string where, what;
};

// Runs `c` in a fresh copy of the data, then requires exit 2, one line naming the output and the file
// it would replace, and the folder exactly as before.
void check_clash(const Clash& c) {
  TempDir dir;
  fs::copy(data().root.path(), dir.path(), fs::copy_options::recursive);
  const auto before = snapshot(dir.path());
  std::string args = c.args;
  for (std::size_t at; (at = args.find("@/")) != std::string::npos;) args.replace(at, 1, dir.path().string());
  const auto r = run_command("cd " + q(dir.path()) + " && " + shell_quote(app_path(c.tool)) + " -q " + args);
  CAPTURE(c.tool + " " + args);
  check_one_line_error(r, c.tool, 2, c.where, c.what);
  CHECK(snapshot(dir.path()) == before);
}

}  // namespace

TEST_CASE("an output that is a file the run reads is refused before any work, per tool and output kind") {
  const std::vector<Clash> clashes = {
      // fit2d's main run: the localizations, their .yaml, tracks and drift, parts, each pipeline step.
      {"fit2d", "@/blink.tif -o @/blink.tif --format csv", "blink.tif", "the localizations (-o) would write over the input stack"},
      {"fit2d", "@/m.tif -o @/z.hdf5 --track --camera-maps @/z_drift.csv", "z_drift.csv", "would write over the camera maps"},
      {"fit2d", "@/m.tif -o @/m.h5", "m.yaml", "the .yaml of the localizations (-o) would write over the movie's metadata"},
      {"fit2d", "@/m.tif -o @/m.hdf5", "m.yaml", "the .yaml of the localizations (-o) would write over the movie's metadata"},
      {"fit2d", "@/m.tif -o @/x.hdf5 --params @/x.hdf5", "x.hdf5", "the parameter file (--params)"},
      {"fit2d", "@/m.tif -o @/x.hdf5 --track --regions @/x_tracks.csv", "x_tracks.csv", "the regions (--regions)"},
      {"fit2d", "@/m.tif -o @/x.hdf5 --track --regions @/x_drift.txt", "x_drift.txt", "the regions (--regions)"},
      {"fit2d", "@/m.tif -o @/x.hdf5 --track --regions @/x_drift.csv", "x_drift.csv", "the regions (--regions)"},
      {"fit2d", "@/m.tif --frames 0:10 --partial @/m.tif", "m.tif", "the part file (--partial)"},
      {"fit2d", "@/m.tif --roi @/r.txt -o @/r.txt", "r.txt", "the marker ROIs (--roi)"},
      {"fit2d", "@/m.tif -o @/m_locs.hdf5 --render --params @/m_locs.tif", "m_locs.tif", "the picture (--render)"},
      {"fit2d", "@/m.tif -o @/m_locs.hdf5 --render --params @/m_locs.png", "m_locs.png", "preview (--render)"},
      {"fit2d", "@/m.tif -o @/q.hdf5 --undrift --undrift-segment 20 --params @/q_undrift.hdf5", "q_undrift.hdf5",
       "the undrifted localizations"},
      {"fit2d", "@/m.tif -o @/q.hdf5 --undrift --undrift-segment 20 --params @/q_undrift_drift.png", "q_undrift_drift.png",
       "the drift plot"},
      {"fit2d", "@/m.tif -o @/q.hdf5 --link --params @/q_link.hdf5", "q_link.hdf5", "the linked localizations"},
      // The subcommands.
      {"fit2d", "filter @/locs.hdf5 -o @/locs.hdf5 --where 'photons > 0'", "locs.hdf5", "would write over"},
      {"fit2d", "filter @/locs.hdf5 -o @/m.h5 --where 'photons > 0'", "m.yaml", "is the movie's own metadata"},
      {"fit2d", "link @/locs.hdf5 -o @/locs.hdf5", "locs.hdf5", "would write over"},
      {"fit2d", "render @/locs.hdf5 -o @/locs.hdf5", "locs.hdf5", "the picture (-o) would write over"},
      {"fit2d", "render @/locs.hdf5 -o @/out.tif --png @/locs.yaml", "locs.yaml", "the preview (--png) would write over"},
      {"fit2d", "render @/locs.hdf5 -o @/out.tif --png @/out.tif", "out.tif", "are the same file"},
      {"fit2d", "undrift @/locs.hdf5 -o @/locs.hdf5", "locs.hdf5", "would write over"},
      {"fit2d", "undrift @/x_drift.csv -o @/x.csv --pixel-size 100", "x_drift.csv", "the drift table (_drift.csv)"},
      {"fit2d", "merge @/p0.h5 @/p1.h5 -o @/p0.h5", "p0.h5", "would write over the part file"},
      {"fit2d", "calibrate @/m.tif -o @/c.json --z-step 20 --plot @/m.tif", "m.tif", "the plot (--plot)"},
      {"fit2d", "calibrate @/m.tif -o @/m.yaml --z-step 20", "m.yaml", "the calibration (-o) would write over"},
      // The other tools.
      {"sofi", "@/blink.tif -o @/blink.tif", "blink.tif", "would write over the input stack"},
      {"sofi", "@/blink.tif -o @/s.tif --split odd-even --params @/s_even.tif", "s_even.tif", "--split"},
      {"sofi", "@/blink.tif -o @/s.tif --balanced --orders 2,3,4 --psf-sigma 1.5 --params @/s_balanced.png", "s_balanced.png",
       "the balanced SOFI image"},
      {"smre", "@/m.tif -o @/m.tif", "m.tif", "the restored image (-o) would write over"},
      {"smre", "@/m.tif -o @/r.tif --log @/m.yaml", "m.yaml", "the convergence log (--log)"},
      {"frc", "@/m.tif --split odd-even --json @/m.tif", "m.tif", "the results (--json)"},
      {"frc", "@/locs.hdf5 --plot @/locs.yaml", "locs.yaml", "the plot (--plot)"},
      {"frc", "@/m.tif --split odd-even --json @/o.json --curve @/o.json", "o.json", "are the same file"},
      {"bench", "simulate movie -o @/n.tif --width 32 --height 32 --camera scmos --camera-maps @/n_maps.h5", "n_maps.h5", "the camera maps"},
  };
  // Inputs the rows above name as outputs of a step (they only have to exist).
  write_file(data().root / "r.txt", "10 10\n");
  write_file(data().root / "x_tracks.csv", "0 0 8 8\n");
  write_file(data().root / "x_drift.txt", "0 0 8 8\n");
  write_file(data().root / "x_drift.csv", "0 0 8 8\n");
  for (const char* name : {"x.hdf5", "m_locs.tif", "m_locs.png", "q_undrift.hdf5", "q_undrift_drift.png", "q_link.hdf5",
                           "s_even.tif", "s_balanced.png"})
    write_file(data().root / name, "# a parameter file named like an output of the run\n");
  fs::copy_file(data().root / "n_maps.h5", data().root / "z_drift.csv");
  for (const auto& c : clashes) {
    if (c.what.empty()) continue;
    check_clash(c);
  }
}

TEST_CASE("a symbolic or hard link to an input is the input") {
  TempDir dir;
  fs::copy(data().locs, dir / "locs.hdf5");
  fs::copy(data().root / "locs.yaml", dir / "locs.yaml");
  fs::create_symlink(dir / "locs.hdf5", dir / "soft.hdf5");
  fs::create_hard_link(dir / "locs.hdf5", dir / "hard.hdf5");
  const auto before = snapshot(dir.path());
  for (const char* name : {"soft.hdf5", "hard.hdf5"}) {
    const auto r = run_tool("fit2d", "-q filter " + q(dir / "locs.hdf5") + " -o " + q(dir / name) +
                                         " --where 'photons > 0'");
    check_one_line_error(r, "fit2d", 2, name, "would write over the localizations");
  }
  CHECK(snapshot(dir.path()) == before);
}

TEST_CASE("a second run on the same outputs is refused while the first holds them; a dead run's lock is taken over") {
  TempDir dir;
  const fs::path out = dir / "f.hdf5";
  // A live run of this host (this test program) holds f.hdf5.
  write_file(dir / ".f.hdf5.lock", run_host_name() + " " + std::to_string(::getpid()) + "\n");
  auto r = run_tool("fit2d", "-q filter " + q(data().locs) + " -o " + q(out) + " --where 'photons > 0'");
  check_one_line_error(r, "fit2d", 4, "f.hdf5", "another run is writing it");
  CHECK_FALSE(fs::exists(out));
  // Its PID gone: stale, taken over, and released at the end.
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  write_file(dir / ".f.hdf5.lock", run_host_name() + " " + std::to_string(child) + "\n");
  write_file(dir / (".f.hdf5.part-" + run_host_name() + "-" + std::to_string(child)), "half a file");
  r = run_tool("fit2d", "-q filter " + q(data().locs) + " -o " + q(out) + " --where 'photons > 0'");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path())) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"f.hdf5", "f.hdf5.run.json", "f.yaml"});
}

TEST_CASE("runs started together on one output set never mix their files") {
  TempDir dir;
  const fs::path out = dir / "c.hdf5";
  for (int pair = 0; pair < 5; ++pair) {
    // Two filters with different expressions on the same outputs, side by side.
    const auto a = "( " + shell_quote(app_path("fit2d")) + " -q filter " + q(data().locs) + " -o " + q(out) +
                   " --where 'photons > 0' 2>&1; echo A$? ) ";
    const auto b = "( " + shell_quote(app_path("fit2d")) + " -q filter " + q(data().locs) + " -o " + q(out) +
                   " --where 'photons > 1e9' 2>&1; echo B$? ) ";
    const auto r = run_command(a + "& " + b + "& wait");
    CAPTURE(r.output);
    const bool a_ok = contains(r.output, "A0"), b_ok = contains(r.output, "B0");
    CHECK((a_ok || b_ok));
    if (!a_ok) CHECK(contains(r.output, "another run is writing it"));
    if (!b_ok) CHECK(contains(r.output, "another run is writing it"));
    // The .hdf5 and the .yaml are of one run: the .yaml's count is the table's.
    const std::string yaml = read_file(dir / "c.yaml");
    const auto rows = run_command(shell_quote(NANOSCOPY_TEST_PYTHON) +
                                  " -c \"import h5py,sys; print(len(h5py.File(sys.argv[1],'r')['locs']), end='')\" " +
                                  q(out));
    REQUIRE(rows.exit_code == 0);
    CHECK(contains(yaml, "Localizations: " + rows.output + "\n"));
  }
}

TEST_CASE("a later step's failure keeps the previous run's whole set; a mixed set is told") {
  TempDir dir;
  const fs::path movie = dir / "m.tif";
  fs::copy(data().movie, movie);
  fs::copy(data().root / "m.yaml", dir / "m.yaml");
  const std::string run = "-q " + q(movie) + " -o " + q(dir / "p.hdf5") + " --undrift --undrift-segment 20 --link";
  auto r = run_tool("fit2d", run);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  REQUIRE(fs::exists(dir / "p.hdf5.run.json"));
  CHECK(contains(read_file(dir / "p.yaml"), "Run manifest: p.hdf5.run.json"));
  const auto before = snapshot(dir.path());
  // The undrift step fails this time, after the fit of 40 frames was written (no fiducial markers
  // among blinking molecules): nothing of the new run stays, the 60-frame set is whole.
  r = run_tool("fit2d", run + " --frames 0:40 --undrift-method fiducial");
  CHECK(r.exit_code != 0);
  CHECK(snapshot(dir.path()) == before);

  // A run killed between its renames (SIGKILL): p.yaml from a new run, p_undrift.yaml from the old one.
  std::string yaml = read_file(dir / "p.yaml");
  const auto at = yaml.find("Run generation: ");
  REQUIRE(at != std::string::npos);
  yaml.replace(at + 16, 16, "0123456789abcdef");
  write_file(dir / "p.yaml", yaml);
  r = run_tool("fit2d", "-q link " + q(dir / "p_undrift.hdf5") + " -o " + q(dir / "other.hdf5"));
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "fit2d: warning: "));
  CHECK(contains(r.output, "is mixed"));
  r = run_tool("fit2d", "-q link " + q(dir / "p.hdf5") + " -o " + q(dir / "other2.hdf5"));
  CHECK(contains(r.output, "another run than the rest of its set"));
}

TEST_CASE("SIGHUP (the terminal or SSH session closed) removes the pending outputs and keeps the earlier ones") {
  TempDir dir;
  fs::copy(data().movie, dir / "m.tif");
  fs::copy(data().root / "m.yaml", dir / "m.yaml");
  const auto before = snapshot(dir.path());
  const pid_t child = ::fork();
  if (child == 0) {
    ::execl(app_path("smre").c_str(), "smre", "-q", (dir / "m.tif").c_str(), "-o", (dir / "r.tif").c_str(),
            "--device", "cpu", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Once its output is open (its lock is there), hang up.
  for (int i = 0; i < 3000 && !fs::exists(dir / ".r.tif.lock"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ::kill(child, SIGHUP);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    MESSAGE("smre finished before the hang-up: nothing to interrupt");
    fs::remove(dir / "r.tif");
  } else {
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 129);
  }
  CHECK(snapshot(dir.path()) == before);
}
