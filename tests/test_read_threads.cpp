// The results do not depend on Input/read threads: fit2d's localizations and
// sofi's image from one and from four read threads are the same bytes, on a
// generated TIFF stack read in chunks small enough that every chunk is split.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "support/test_support.hpp"

using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

std::string q(const fs::path& p) { return shell_quote(p.string()); }

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE_MESSAGE(in, p.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A parameter file with chunks of 16 frames read by `threads` threads.
fs::path params(const TempDir& dir, int threads) {
  const fs::path prm = dir / ("threads" + std::to_string(threads) + ".prm");
  std::ofstream(prm) << "subsection Input\n  set chunk frames = 16\n  set read threads = " << threads << "\nend\n";
  return prm;
}

}  // namespace

TEST_CASE("fit2d: the same localizations from 1 and 4 read threads") {
  TempDir dir;
  const fs::path movie = dir / "movie.tif";
  const auto sim = run_tool("bench", "--quiet simulate movie -o " + q(movie) +
                                         " --frames 150 --width 40 --height 32 --emitters 12 --seed 3");
  REQUIRE_MESSAGE(sim.exit_code == 0, sim.output);
  for (const int threads : {1, 4}) {
    const auto r = run_tool("fit2d", "--quiet --device cpu --params " + q(params(dir, threads)) + " " + q(movie) +
                                         " -o " + q(dir / ("locs" + std::to_string(threads) + ".csv")));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  }
  const std::string one = bytes_of(dir / "locs1.csv"), four = bytes_of(dir / "locs4.csv");
  CHECK(std::count(one.begin(), one.end(), '\n') > 100);  // localizations, not just a header
  CHECK(one == four);
}

TEST_CASE("sofi: the same image from 1 and 4 read threads") {
  TempDir dir;
  const fs::path stack = dir / "qd.tif";
  const auto sim = run_tool("bench", "simulate blinking --quiet -o " + q(stack) +
                                         " --frames 300 --size 24 --emitters 20 --seed 5");
  REQUIRE_MESSAGE(sim.exit_code == 0, sim.output);
  for (const int threads : {1, 4}) {
    const auto r = run_tool("sofi", "--quiet --device cpu --block 100 --params " + q(params(dir, threads)) + " " +
                                        q(stack) + " -o " + q(dir / ("sofi" + std::to_string(threads) + ".tif")));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  }
  CHECK(bytes_of(dir / "sofi1.tif") == bytes_of(dir / "sofi4.tif"));
}
