// The five tools as a user meets them: --help, --version, --print-params, and
// bad input answered by one error line, a distinct exit code and no output.
#include <doctest/doctest.h>

#include <algorithm>
#include <unistd.h>

#include <filesystem>

#include "support/test_support.hpp"

using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kApps = {"fit2d", "smre", "sofi", "frc", "bench"};

CommandResult app(const std::string& name, const std::string& args) {
  return run_command(shell_quote(app_path(name)) + " " + args);
}

// Exactly one line on stderr+stdout, of the form "<tool>: error: ..." naming `where`.
void check_one_error_line(const CommandResult& r, const std::string& tool, const std::string& where) {
  INFO(r.output);
  CHECK(r.signal == 0);
  CHECK(r.output.rfind(tool + ": error: ", 0) == 0);
  CHECK(r.output.find(where) != std::string::npos);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
}

std::string simulate(const TempDir& dir, const std::string& name, int frames) {
  const auto path = (dir / name).string();
  const auto r = app("bench", "--quiet simulate movie -o " + shell_quote(path) + " --frames " + std::to_string(frames) +
                                  " --width 32 --height 24 --emitters 5");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return path;
}

}  // namespace

TEST_CASE("every app has --help and --version") {
  for (const auto& name : kApps) {
    INFO(name);
    const auto help = app(name, "--help");
    CHECK(help.exit_code == 0);
    CHECK(help.output.find("--params") != std::string::npos);
    CHECK(help.output.find("--print-params") != std::string::npos);
    CHECK(help.output.find("--device") != std::string::npos);
    CHECK(help.output.find("--quiet") != std::string::npos);
    CHECK(help.output.find("Exit codes") != std::string::npos);
    const auto version = app(name, "--version");
    CHECK(version.exit_code == 0);
    CHECK(version.output.find(name + " (nanoscopy) ") == 0);
  }
}

TEST_CASE("--print-params writes a file that --params accepts, in prm and json") {
  TempDir dir;
  for (const auto& name : kApps) {
    INFO(name);
    for (const std::string format : {"prm", "json"}) {
      const auto printed = app(name, "--print-params " + format);
      REQUIRE(printed.exit_code == 0);
      const auto file = dir / (name + "." + format);
      write_file(file, printed.output);
      const auto again = app(name, "--params " + shell_quote(file.string()) + " --print-params " + format);
      CHECK(again.exit_code == 0);
    }
  }
}

TEST_CASE("a parameter file with an unknown key names the file, the line and the closest key") {
  TempDir dir;
  const auto prm = dir / "bad.prm";
  write_file(prm, "# fit2d settings\nsubsection Fit\n  set max iteration = 30\nend\n");
  const auto r = app("fit2d", "--params " + shell_quote(prm.string()) + " x.tif");
  CHECK(r.exit_code == 2);
  check_one_error_line(r, "fit2d", "bad.prm:3");
  CHECK(r.output.find("max iterations") != std::string::npos);
}

TEST_CASE("the tools read a simulated stack, honour --frames and report the summary") {
  TempDir dir;
  const auto movie = simulate(dir, "movie.tif", 20);
  CHECK(fs::exists(dir / "movie_truth.csv"));
  const auto r = app("sofi", "--quiet --orders 2 --block 5 --frames 5:15 " + shell_quote(movie));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(fs::exists(dir / "movie_sofi.tif"));  // order 2 and the mean of frames 5..14
  const auto f = app("fit2d", "--quiet --frames 5:15 " + shell_quote(movie) + " -o " + shell_quote((dir / "l.csv").string()));
  INFO(f.output);
  CHECK(f.exit_code == 0);
  CHECK(f.output.find(": 10 frames (32x24 uint16)") != std::string::npos);
  const auto lone = app("frc", "--quiet " + shell_quote(movie));  // one stack needs --split
  CHECK(lone.exit_code == 2);
  check_one_error_line(lone, "frc", "--split");
  const auto split = app("frc", "--quiet --split odd-even --frames 5:15 " + shell_quote(movie));
  INFO(split.output);
  CHECK(split.exit_code == 0);
  CHECK(split.output.find("frames 5:15 of 32x24 px, 5 even + 5 odd") != std::string::npos);
  CHECK(split.output.find("resolution:") != std::string::npos);
}

TEST_CASE("progress: a line per 10 % when stderr is not a terminal, nothing with --quiet") {
  TempDir dir;
  const auto movie = simulate(dir, "movie.tif", 50);
  const auto prm = dir / "chunks.prm";
  write_file(prm, "subsection Input\n  set chunk frames = 2\nend\n");
  // Only stderr (the parentheses keep run_command's own 2>&1 from undoing the redirection).
  const auto r = run_command("(" + shell_quote(app_path("fit2d")) + " --params " + shell_quote(prm.string()) + " " +
                             shell_quote(movie) + " -o " + shell_quote((dir / "p.csv").string()) + " 2>&1 >/dev/null)");
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("100%") != std::string::npos);
  std::size_t progress_lines = 0;
  for (std::size_t at = 0; (at = r.output.find("% (", at)) != std::string::npos; ++at) ++progress_lines;
  CHECK(progress_lines == 10);  // 10 %, 20 %, ... 100 %
  const auto q = run_command("(" + shell_quote(app_path("fit2d")) + " --quiet " + shell_quote(movie) + " -o " +
                             shell_quote((dir / "q.csv").string()) + " 2>&1 >/dev/null)");
  CHECK(q.output.empty());
}

TEST_CASE("bad input: one line, a distinct exit code, no output file") {
  TempDir dir;
  const auto movie = simulate(dir, "movie.tif", 10);
  write_file(dir / "empty.tif", "");
  write_file(dir / "notes.tif", "these are my notes, not an image\n");
  const std::string text = read_file(movie);
  write_file(dir / "truncated.tif", text.substr(0, text.size() / 2));

  struct Case {
    std::string args;
    int code;
    std::string where;
  };
  const std::vector<Case> cases = {
      {shell_quote((dir / "missing.tif").string()), 3, "missing.tif: no such file"},
      {shell_quote((dir / "empty.tif").string()), 3, "empty.tif"},
      {shell_quote((dir / "notes.tif").string()), 3, "notes.tif"},
      {shell_quote((dir / "truncated.tif").string()), 3, "truncated.tif"},
      {"--frames 5:50 " + shell_quote(movie), 3, "movie.tif: frame range 5:50 is outside"},
      {"--frames x " + shell_quote(movie), 2, "--frames"},
      {"--device nowhere " + shell_quote(movie), 2, "--device"},
      {"--no-such-option " + shell_quote(movie), 2, "command line"},
      {"--params " + shell_quote((dir / "none.prm").string()) + " " + shell_quote(movie), 2, "none.prm"},
      {"--max-iterations 0 " + shell_quote(movie), 2, "max iterations"},
  };
  for (const auto& c : cases) {
    const auto r = app("fit2d", "--quiet " + c.args);
    INFO(c.args);
    CHECK(r.exit_code == c.code);
    check_one_error_line(r, "fit2d", c.where);
  }
  // An output directory that does not exist: exit 4, nothing written.
  const auto r = app("bench", "--quiet simulate movie -o " + shell_quote((dir / "nope" / "m.tif").string()));
  CHECK(r.exit_code == 4);
  check_one_error_line(r, "bench", "nope");
  CHECK_FALSE(fs::exists(dir / "nope"));

  // A directory the user may not write to (run as nobody: root writes anywhere).
  if (::geteuid() == 0 && fs::exists("/usr/bin/setpriv")) {
    fs::create_directory(dir / "ro");
    fs::permissions(dir / "ro", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                    fs::perms::others_read | fs::perms::others_exec);
    fs::permissions(dir.path(), fs::perms::others_exec | fs::perms::others_read, fs::perm_options::add);
    const auto ro = run_command("setpriv --reuid=65534 --regid=65534 --clear-groups " + shell_quote(app_path("bench")) +
                                " -q simulate movie --frames 2 -o " + shell_quote((dir / "ro" / "m.tif").string()));
    CHECK(ro.exit_code == 4);
    check_one_error_line(ro, "bench", "is not writable");
    CHECK(fs::is_empty(dir / "ro"));
  }
}

TEST_CASE("--device cuda without a usable GPU is a device error (exit 5), never a CPU run") {
  TempDir dir;
  const auto movie = simulate(dir, "movie.tif", 3);
  const auto probe = app("fit2d", "--device cuda --quiet " + shell_quote(movie));
  if (probe.exit_code == 0) {
    MESSAGE("a GPU is present: skipping the no-GPU check");
    return;
  }
  CHECK(probe.exit_code == 5);
  check_one_error_line(probe, "fit2d", "--device cuda");
}
