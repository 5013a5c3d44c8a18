// Inputs that the fuzz targets (tests/fuzz, scripts/fuzz) found crashing, kept
// in tests/fuzz/regressions/<target>/ and replayed through the target's own
// entry (tests/fuzz/fuzz_entry.hpp): each must now be accepted or rejected with
// a nanoscopy::Error; a crash, a sanitizer report (in a sanitizer build) or any
// other exception fails.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <typeinfo>
#include <vector>

#include "fuzz/fuzz_entry.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
namespace fuzz = nanoscopy::fuzz;

namespace {

const fs::path kRegressions = fs::path(NANOSCOPY_SOURCE_DIR) / "tests" / "fuzz" / "regressions";

std::vector<fs::path> inputs_of(const fs::path& dir) {
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("fuzz regressions: every folder names a fuzz target") {
  REQUIRE(fs::is_directory(kRegressions));
  for (const auto& e : fs::directory_iterator(kRegressions)) {
    CAPTURE(e.path());
    CHECK((e.is_directory() && fuzz::entry(e.path().filename().string()) != nullptr));
  }
}

TEST_CASE("fuzz regressions: saved inputs are accepted or rejected with a nanoscopy::Error") {
  fuzz::raw_hdf5 = true;  // an input that starts with the HDF5 signature is the file itself
  int replayed = 0;
  for (const auto& target : fuzz::kTargets) {
    for (const auto& file : inputs_of(kRegressions / target.name)) {
      const std::string where = std::string(target.name) + ": " + file.filename().string();
      CAPTURE(where);
      const std::string bytes = nanoscopy::test::read_file(file);
      nanoscopy::test::TempDir scratch;
      try {
        target.run(bytes, scratch.path());
      } catch (const nanoscopy::Error&) {
        // a clean rejection
      } catch (const std::exception& e) {
        const std::string what = where + ": " + typeid(e).name() + " escaped: " + e.what();
        FAIL_CHECK(what);
      }
      ++replayed;
    }
  }
  MESSAGE(replayed << " saved fuzz inputs replayed");
  CHECK(replayed > 0);
}
