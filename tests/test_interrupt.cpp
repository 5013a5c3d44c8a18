// An interrupted run (SIGINT, SIGTERM) leaves either the complete previous
// output or none: the tool removes its temporary file, prints one line
// "<tool>: interrupted" and exits with 128 + the signal (130, 143).
//
// smre opens its output before restoring anything and, with --tolerance 0 and
// an iteration cap of millions, restores one frame for as long as the test
// needs: the temporary file exists while the signal arrives, whatever the speed
// of the machine.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "nanoscopy/core/run_files.hpp"
#include "support/test_support.hpp"

extern char** environ;

using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

struct Interrupted {
  int exit_code = -1;  // -1: killed by a signal
  int signal = 0;
  std::string stderr_text;
  bool temp_seen = false;
  double seconds_to_temp = 0;
};

// Starts smre writing `output`, waits (up to 60 s) until its temporary file
// exists, lets it work for half a second, sends `sig` and waits for the end.
Interrupted interrupt_smre(const fs::path& input, const fs::path& output, const fs::path& log, int sig) {
  std::vector<std::string> args = {app_path("smre"), "--quiet", "--icd", "--psf", "1.5", "--weights", "closed-form",
                                   "--tolerance", "0", "--iterations", "100000000", input.string(), "-o",
                                   output.string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  // The tool must install its own handlers: start it with SIGINT/SIGTERM at their defaults and unblocked,
  // whatever this test inherited (a background job ignores SIGINT).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, both;
  sigemptyset(&none);
  sigemptyset(&both);
  sigaddset(&both, SIGINT);
  sigaddset(&both, SIGTERM);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &both);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  REQUIRE(spawned == 0);

  Interrupted result;
  // The child's temporary name: .NAME.part-HOST-PID (core/run_files.hpp).
  const fs::path temp = output.parent_path() / ("." + output.filename().string() + ".part-" +
                                                nanoscopy::run_host_name() + "-" + std::to_string(pid));
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  int status = 0;
  bool ended = false;
  while (elapsed() < 60) {
    if (fs::exists(temp)) {
      result.temp_seen = true;
      result.seconds_to_temp = elapsed();
      break;
    }
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      ended = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!ended) {
    if (result.temp_seen) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ::kill(pid, sig);
    ::waitpid(pid, &status, 0);
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.stderr_text = read_file(log);
  return result;
}

}  // namespace

TEST_CASE("SIGINT and SIGTERM: the previous output stays byte for byte, or nothing is left; no temporary file") {
  TempDir scratch;
  const fs::path input = scratch / "frame.tif", logs = scratch / "logs";
  fs::create_directories(logs);
  const auto made = run_command(shell_quote(app_path("bench")) + " --quiet simulate movie --frames 1 --width 64 "
                                "--height 64 --emitters 20 -o " + shell_quote(input.string()));
  REQUIRE_MESSAGE(made.exit_code == 0, made.output);

  for (const int sig : {SIGINT, SIGTERM})
    for (const bool previous : {true, false}) {
      CAPTURE(sig);
      CAPTURE(previous);
      TempDir dir;
      const fs::path output = dir / "restored.tif";
      const std::string before = "a complete previous output, not to be touched\n";
      if (previous) write_file(output, before);
      const auto r = interrupt_smre(input, output, logs / "stderr.txt", sig);
      INFO("stderr: " << r.stderr_text);
      REQUIRE(r.temp_seen);  // the run was under way, its temporary file written
      CHECK(r.signal == 0);
      CHECK(r.exit_code == 128 + sig);
      CHECK(r.stderr_text == "smre: interrupted\n");
      if (previous) {
        CHECK(names_in(dir.path()) == std::set<std::string>{"restored.tif"});
        CHECK(read_file(output) == before);
      } else {
        CHECK(fs::is_empty(dir.path()));
      }
    }
}
