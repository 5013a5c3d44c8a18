// libFuzzer target: the HDF5 stack reader (open_stack on a .h5, dataset auto-detected, then frames).
// The input -> reader call is nanoscopy::fuzz::run_hdf5 (fuzz_entry.hpp).
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return nanoscopy::fuzz::run_input(nanoscopy::fuzz::run_hdf5, data, size);
}
