// The libFuzzer side of a target: a scratch directory per process for the
// input files, the catch of nanoscopy::Error (the expected answer to bad input)
// and a check that no HDF5 file or object was left open. Everything else that
// escapes (a crash, a sanitizer report, another exception) is a finding.
#pragma once

#include <hdf5.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "fuzz_entry.hpp"

namespace nanoscopy::fuzz {

// $NANOSCOPY_FUZZ_DIR, else /dev/shm, else the temp directory; plus
// nanoscopy-fuzz-<pid>, created once and removed at exit.
class ScratchDir {
 public:
  ScratchDir() {
    std::filesystem::path base;
    if (const char* env = std::getenv("NANOSCOPY_FUZZ_DIR"); env && *env)
      base = env;
    else if (::access("/dev/shm", W_OK) == 0)
      base = "/dev/shm";
    else
      base = std::filesystem::temp_directory_path();
    path_ = base / ("nanoscopy-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline int run_input(Entry run, const std::uint8_t* data, std::size_t size) {
  static const ScratchDir dir;
  static const bool verbose = std::getenv("NANOSCOPY_FUZZ_VERBOSE") != nullptr;
  static const bool raw = raw_hdf5 = std::getenv("NANOSCOPY_FUZZ_RAW_HDF5") != nullptr;
  static_cast<void>(raw);
  try {
    run(std::string_view(reinterpret_cast<const char*>(data), size), dir.path());
    if (verbose) std::fprintf(stderr, "nanoscopy fuzz: accepted\n");
  } catch (const Error& e) {
    // a clean rejection
    if (verbose) std::fprintf(stderr, "nanoscopy fuzz: rejected: %s\n", e.message().c_str());
  }
  // A leaked HDF5 file would stay open in the library and be reused, stale,
  // for the next input written under the same name.
  const ssize_t open_objects = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
  if (open_objects != 0) {
    std::fprintf(stderr, "nanoscopy fuzz: %zd HDF5 objects left open after the input\n", open_objects);
    std::abort();
  }
  return 0;
}

}  // namespace nanoscopy::fuzz
