// libFuzzer target: the Picasso HDF5 localization reader (input: the .yaml, the split line, the .hdf5).
// The input -> reader call is nanoscopy::fuzz::run_locs_picasso (fuzz_entry.hpp).
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return nanoscopy::fuzz::run_input(nanoscopy::fuzz::run_locs_picasso, data, size);
}
