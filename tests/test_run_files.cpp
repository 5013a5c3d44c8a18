// The run's plan of files (core/run_files.hpp): an output that is an input or another output is
// refused before anything is written; outputs are locked (O_EXCL, host and PID) and a dead run's
// lock and temporary files are taken over; temporary names fit the 255-byte limit; the run's
// files appear together and a manifest names them; a mixed set is told.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

// A PID that belonged to a process of this host and is gone now.
long dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

void write_through(const fs::path& path, const std::string& text) {
  AtomicOutput out(path);
  { std::ofstream(out.temp_path()) << text; }
  out.commit();
}

std::size_t entries(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace

TEST_CASE("an output that is an input is refused before anything is written, naming both") {
  TempDir dir;
  write_file(dir / "movie.tif", "movie");
  {
    RunFiles run("test");
    plan_input((dir / "movie.tif").string(), "the movie");
    plan_output((dir / "movie.tif").string(), "the picture (--render)");
    const auto e = expect_error<UsageError>([] { check_run_plan(); });
    CHECK(contains(e.message(), "the picture (--render) would write over the movie"));
    CHECK(contains(e.message(), (dir / "movie.tif").string()));
  }
  // The same file by another spelling, through a symbolic link, and through a hard link.
  fs::create_symlink(dir / "movie.tif", dir / "link.tif");
  fs::create_hard_link(dir / "movie.tif", dir / "hard.tif");
  for (const fs::path& other : {dir / "." / "movie.tif", dir / "link.tif", dir / "hard.tif"}) {
    CAPTURE(other);
    RunFiles run("test");
    plan_input((dir / "movie.tif").string(), "the movie");
    plan_output(other.string(), "the localizations (-o)");
    CHECK_THROWS_AS(check_run_plan(), UsageError);
  }
  // An input found after the check (the movie's .yaml names camera maps) is checked at once.
  {
    RunFiles run("test");
    plan_output((dir / "maps.h5").string(), "the localizations (-o)");
    check_run_plan();
    CHECK_THROWS_AS(plan_input((dir / "maps.h5").string(), "the camera maps"), UsageError);
  }
  CHECK(read_file(dir / "movie.tif") == "movie");
  CHECK(entries(dir.path()) == 3);  // movie, link, hard: no lock or temporary file left
}

TEST_CASE("two outputs of a run that are one file are refused") {
  TempDir dir;
  fs::create_directories(dir / "sub");
  {
    RunFiles run("test");
    plan_output((dir / "out.tif").string(), "the picture (-o)");
    const auto e = expect_error<UsageError>(
        [&] { plan_output((dir / "sub" / ".." / "out.tif").string(), "the preview (--png)"); });
    CHECK(contains(e.message(), "are the same file"));
    CHECK(contains(e.message(), "the preview (--png)"));
    CHECK(contains(e.message(), "the picture (-o)"));
  }
  // Through a symbolic link to the folder: found when the plan is checked.
  fs::create_directory_symlink(dir.path(), dir / "alias");
  {
    RunFiles run("test");
    plan_output((dir / "out.tif").string(), "the picture (-o)");
    plan_output((dir / "alias" / "out.tif").string(), "the preview (--png)");
    CHECK_THROWS_AS(check_run_plan(), UsageError);
  }
  // A writer confirming the tool's own declaration is no clash; the same name written twice is.
  {
    RunFiles run("test");
    plan_output((dir / "out.tif").string(), "the picture (-o)");
    confirm_output((dir / "out.tif").string(), "the output out.tif");
    check_run_plan();
    AtomicOutput first((dir / "out.tif").string());
    CHECK_THROWS_AS(AtomicOutput((dir / "out.tif").string()), UsageError);
  }
}

TEST_CASE("an undeclared output is still checked against the inputs when it is opened") {
  TempDir dir;
  write_file(dir / "locs.csv", "x");
  RunFiles run("test");
  static_cast<void>(input_path((dir / "locs.csv").string(), "the localizations"));
  CHECK_THROWS_AS(AtomicOutput((dir / "locs.csv").string()), UsageError);
  CHECK(read_file(dir / "locs.csv") == "x");
}

TEST_CASE("outputs are locked: a live run refuses a second one, a dead run's lock is taken over") {
  TempDir dir;
  const fs::path out = dir / "out.hdf5";
  const fs::path lock = lock_path_for(out);
  CHECK(lock.filename().string() == ".out.hdf5.lock");
  {
    RunFiles run("test");
    plan_output(out.string(), "the localizations");
    check_run_plan();
    REQUIRE(fs::exists(lock));
    CHECK(read_file(lock) == run_host_name() + " " + std::to_string(::getpid()) + "\n");
  }
  CHECK_FALSE(fs::exists(lock));  // released with the run

  // Another host's lock: its PID means nothing here, so it is never taken over.
  write_file(lock, "some-other-host 1\n");
  {
    RunFiles run("test");
    plan_output(out.string(), "the localizations");
    const auto e = expect_error<OutputError>([] { check_run_plan(); });
    CHECK(contains(e.message(), "another run is writing it (host some-other-host, PID 1"));
    CHECK(contains(e.message(), lock.string()));
  }
  CHECK(fs::exists(lock));
  // A live process of this host (this one's parent).
  write_file(lock, run_host_name() + " " + std::to_string(::getppid()) + "\n");
  {
    RunFiles run("test");
    plan_output(out.string(), "the localizations");
    CHECK_THROWS_AS(check_run_plan(), OutputError);
  }
  // A dead process of this host: stale, taken over.
  write_file(lock, run_host_name() + " " + std::to_string(dead_pid()) + "\n");
  {
    RunFiles run("test");
    plan_output(out.string(), "the localizations");
    check_run_plan();
    CHECK(read_file(lock) == run_host_name() + " " + std::to_string(::getpid()) + "\n");
  }
  CHECK_FALSE(fs::exists(lock));
}

TEST_CASE("temporary names carry host and PID, fit 255 bytes, and a dead run's are removed") {
  TempDir dir;
  const fs::path out = dir / "locs.csv";
  const std::string temp = temporary_path_for(out).filename().string();
  CHECK(temp == ".locs.csv.part-" + run_host_name() + "-" + std::to_string(::getpid()));

  // A legal 246-byte name (and a 255-byte one) gets temporary and lock names within the limit.
  for (std::size_t length : {246, 255}) {
    const fs::path longest = dir / (std::string(length - 4, 'n') + ".csv");
    CAPTURE(length);
    CHECK(temporary_path_for(longest).filename().string().size() <= 255);
    CHECK(lock_path_for(longest).filename().string().size() <= 255);
    RunFiles run("test");
    write_through(longest, "rows\n");
    run.commit();
    CHECK(read_file(longest) == "rows\n");
  }
  // Multi-byte names are not cut inside a character.
  std::string accents;
  while (accents.size() < 240) accents += "é";
  const std::string shortened = temporary_path_for(dir / (accents + ".tif")).filename().string();
  CHECK(shortened.size() <= 255);
  CHECK(shortened.find('~') != std::string::npos);

  // A temporary file of a killed run on this host goes; a live run's and another host's stay.
  const std::string prefix = ".locs.csv.part-" + run_host_name() + "-";
  const fs::path stale = dir / (prefix + std::to_string(dead_pid()));
  const fs::path live = dir / (prefix + std::to_string(::getppid()));
  const fs::path other_host = dir / ".locs.csv.part-elsewhere-1";
  for (const auto& f : {stale, live, other_host}) write_file(f, "half");
  {
    RunFiles run("test");
    write_through(out, "new\n");
    run.commit();
  }
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(live));
  CHECK(fs::exists(other_host));
  CHECK(read_file(out) == "new\n");
}

TEST_CASE("a run's files appear together, with a manifest written last; an error keeps the earlier set") {
  TempDir dir;
  const fs::path a = dir / "set.hdf5", b = dir / "set.yaml";
  std::string generation;
  {
    RunFiles run("test");
    generation = run.generation();
    plan_output(a.string(), "the localizations");
    plan_output(b.string(), "their metadata");
    check_run_plan();
    write_through(a, "table 1");
    write_through(b, "yaml 1");
    CHECK_FALSE(fs::exists(a));  // nothing under a final name before the run commits
    run.commit();
  }
  CHECK(generation.size() == 16);
  REQUIRE(fs::exists(dir / "set.hdf5.run.json"));  // the main output's whole name: set.csv's would be another
  const std::string manifest = read_file(dir / "set.hdf5.run.json");
  CHECK(contains(manifest, "\"generation\": \"" + generation + "\""));
  CHECK(contains(manifest, "\"file\": \"set.hdf5\""));
  CHECK(contains(manifest, "\"file\": \"set.yaml\""));

  // A later run that fails after writing its first file changes nothing.
  {
    RunFiles run("test");
    plan_output(a.string(), "the localizations");
    plan_output(b.string(), "their metadata");
    check_run_plan();
    write_through(a, "table 2");
  }
  CHECK(read_file(a) == "table 1");
  CHECK(read_file(b) == "yaml 1");
  CHECK(read_file(dir / "set.hdf5.run.json") == manifest);
  CHECK(entries(dir.path()) == 3);
}

TEST_CASE("a file from another run than its set's manifest is told") {
  TempDir dir;
  // set.run.json names generation G1 and the files p.yaml and p_undrift.yaml.
  write_file(dir / "p.run.json", R"({"format": "nanoscopy run manifest", "version": 1, "generation": "G1",
    "files": [{"file": "p.yaml"}, {"file": "p_undrift.yaml"}]})");
  const auto records = [](const fs::path& p) {
    RunRecord r;
    if (p.filename() == "p.yaml") r = {"G2", "p.run.json"};  // rewritten by a run killed before its manifest
    return r;
  };
  CHECK(contains(check_run_set(dir / "p_undrift.yaml", "G1", "p.run.json", records), "is mixed"));
  CHECK(contains(check_run_set(dir / "p.yaml", "G2", "p.run.json", records), "another run than the rest of its set"));
  // A file made again by a later step names its own manifest: no mix.
  const auto remade = [](const fs::path&) { return RunRecord{"G9", "p_undrift.run.json"}; };
  CHECK(check_run_set(dir / "p.yaml", "G1", "p.run.json", remade).empty());
  // No manifest (a set copied without it): nothing to tell.
  CHECK(check_run_set(dir / "q.yaml", "G1", "q.run.json", records).empty());
}
