// Helpers shared by the test programs: scratch directories, running the
// independent Python readers/writers, running the built apps.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <cstdint>
#include <cstdlib>
#include <locale>
#include <vector>

#include "nanoscopy/sim/movie.hpp"

namespace nanoscopy::test {

// A fresh directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

struct CommandResult {
  int exit_code = -1;   // -1 if killed by a signal
  int signal = 0;       // the signal, if any
  std::string output;   // stdout and stderr together
};

// Runs a shell command line, capturing stdout+stderr.
CommandResult run_command(const std::string& command_line);

// Runs tests/python/<script> with Debian's python3; arguments are shell-quoted.
CommandResult run_python(const std::string& script, const std::vector<std::string>& args);

// True when the Python cross-check modules (numpy, tifffile, h5py) import.
bool python_available();

// Path of a built app (fit2d, smre, sofi, frc, bench).
std::string app_path(const std::string& app);

// A GPU result against the CPU reference: every GPU value finite and max |gpu - cpu| <= rel_tol * max(floor,
// max |cpu|), with both maxima reported (doctest CHECKs).
void check_gpu_close(const std::string& what, std::span<const float> gpu, std::span<const float> cpu, double rel_tol,
                     double floor);

// Runs a built app with `args` (already quoted as the shell needs): run_command(app_path(app) + " " + args).
CommandResult run_tool(const std::string& app, const std::string& args);

// tests/data/picasso/<name>: Picasso's own files (MIT, see tests/data/README.md)
std::filesystem::path peer_file(const std::string& name);

std::string shell_quote(const std::string& s);

// The exception of type E thrown by `f`; fails the test if none is thrown.
template <typename E>
E expect_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e;
  }
  FAIL("the expected exception was not thrown");
  return E("", "");
}

// A simulated movie's frames as uint16 (T, Y, X), through a temporary TIFF.
std::vector<std::uint16_t> simulated_movie_u16(const MovieSettings& settings);

// A numpunct that writes "1.234,5": what a German global locale would do to iostreams.
struct CommaNumpunct : std::numpunct<char> {
  char do_decimal_point() const override { return ','; }
  char do_thousands_sep() const override { return '.'; }
  std::string do_grouping() const override { return "\3"; }
};

// Sets the global locale for the lifetime of the object.
class GlobalLocale {
 public:
  explicit GlobalLocale(const std::locale& locale) : previous_(std::locale::global(locale)) {}
  ~GlobalLocale() { std::locale::global(previous_); }
  GlobalLocale(const GlobalLocale&) = delete;
  GlobalLocale& operator=(const GlobalLocale&) = delete;

 private:
  std::locale previous_;
};

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Under compute-sanitizer (scripts/gpu-checks sets NANOSCOPY_GPU_SANITIZER=1)
// the GPU tests use their small sizes only: every kernel and path still runs,
// in the minutes the checkers allow.
inline bool gpu_sanitizer_run() { return std::getenv("NANOSCOPY_GPU_SANITIZER") != nullptr; }

// Under ASan + UBSan (scripts/test-sanitize; tests/CMakeLists.txt sets
// NANOSCOPY_SANITIZER_RUN=1) the few tests that iterate to convergence run fewer
// iterations: the sanitizers look for memory errors and UB, which the first
// iterations exercise as well as the last; convergence is the normal suite's job.
inline bool sanitizer_run() { return std::getenv("NANOSCOPY_SANITIZER_RUN") != nullptr; }

// A tool's answer to bad input: exit `code`, not a signal, and exactly one line
// "<tool>: error: ..." that contains `where` (the file or option) and `what`.
void check_one_line_error(const CommandResult& r, const std::string& tool, int code, const std::string& where,
                          const std::string& what);

// Writes `bytes` to a file (for fixtures such as truncated or fake files).
void write_file(const std::filesystem::path& path, const std::string& bytes);
std::string read_file(const std::filesystem::path& path);

// The rows of a CSV of numbers under one header line (bench's truth and emitter files, fit2d's drift CSV);
// blank lines skipped. `header` (if given) receives the labels, quotes removed.
std::vector<std::vector<double>> read_numeric_csv(const std::filesystem::path& path,
                                                  std::vector<std::string>* header = nullptr);

}  // namespace nanoscopy::test
