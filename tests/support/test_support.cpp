#include "support/test_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "nanoscopy/io/stack_reader.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace nanoscopy::test {

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto candidate = fs::temp_directory_path() / ("nanoscopy-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    std::error_code ec;
    if (fs::create_directory(candidate, ec)) {
      path_ = candidate;
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary directory");
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

CommandResult run_command(const std::string& command_line) {
  CommandResult result;
  const std::string cmd = command_line + " 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed: " + command_line);
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  // The shell reports a child killed by a signal as exit 128+N.
  if (result.exit_code > 128 && result.exit_code < 160) result.signal = result.exit_code - 128;
  return result;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

CommandResult run_python(const std::string& script, const std::vector<std::string>& args) {
  std::ostringstream cmd;
  cmd << shell_quote(NANOSCOPY_TEST_PYTHON) << ' ' << shell_quote(std::string(NANOSCOPY_TEST_SCRIPTS) + "/" + script);
  for (const auto& a : args) cmd << ' ' << shell_quote(a);
  return run_command(cmd.str());
}

bool python_available() {
  static const bool ok = run_command(shell_quote(NANOSCOPY_TEST_PYTHON) + " -c 'import numpy, tifffile, h5py'").exit_code == 0;
  return ok;
}

// NANOSCOPY_TEST_BIN=DIR: the programs are DIR/<app> (a device bundle's bin/).
std::string app_path(const std::string& app) {
  if (const char* bin = std::getenv("NANOSCOPY_TEST_BIN"); bin && *bin) return std::string(bin) + "/" + app;
  return std::string(NANOSCOPY_APPS_DIR) + "/" + app + "/" + app;
}

void check_gpu_close(const std::string& what, std::span<const float> gpu, std::span<const float> cpu, double rel_tol,
                     double floor) {
  REQUIRE(gpu.size() == cpu.size());
  double diff = 0, largest = floor;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < gpu.size(); ++i) {
    if (!std::isfinite(gpu[i])) ++bad;
    diff = std::max(diff, std::fabs(static_cast<double>(gpu[i]) - cpu[i]));
    largest = std::max(largest, std::fabs(static_cast<double>(cpu[i])));
  }
  INFO(what << ": max |gpu - cpu| = " << diff << ", max |cpu| = " << largest << ", relative " << diff / largest);
  CHECK(bad == 0);
  CHECK(diff <= rel_tol * largest);
}

CommandResult run_tool(const std::string& app, const std::string& args) {
  return run_command(shell_quote(app_path(app)) + " " + args);
}

fs::path peer_file(const std::string& name) { return fs::path(NANOSCOPY_SOURCE_DIR) / "tests" / "data" / "picasso" / name; }

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::vector<double>> read_numeric_csv(const fs::path& path, std::vector<std::string>* header) {
  std::istringstream in(read_file(path));
  std::string line;
  std::getline(in, line);
  if (header) {
    std::istringstream h(line);
    std::string cell;
    while (std::getline(h, cell, ',')) {
      cell.erase(std::remove(cell.begin(), cell.end(), '"'), cell.end());
      header->push_back(cell);
    }
  }
  std::vector<std::vector<double>> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<double> row;
    std::istringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) row.push_back(std::stod(cell));
    rows.push_back(row);
  }
  return rows;
}

std::vector<std::uint16_t> simulated_movie_u16(const MovieSettings& settings) {
  TempDir dir;
  const std::string path = (dir / "movie.tif").string();
  simulate_movie(settings, path);
  auto reader = open_stack(path);
  std::vector<std::uint16_t> frames(static_cast<std::size_t>(settings.frames * settings.width * settings.height));
  reader->read_raw(0, settings.frames, frames.data());
  return frames;
}

void check_one_line_error(const CommandResult& r, const std::string& tool, int code, const std::string& where,
                          const std::string& what) {
  INFO(r.output);
  CHECK(r.signal == 0);
  CHECK(r.exit_code == code);
  CHECK(r.output.rfind(tool + ": error: ", 0) == 0);
  CHECK(contains(r.output, where));
  CHECK(contains(r.output, what));
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
}

}  // namespace nanoscopy::test
