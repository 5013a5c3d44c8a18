// libFuzzer target: the Picasso .raw reader (input: the .yaml, the split line, the .raw; then frames).
// The input -> reader call is nanoscopy::fuzz::run_raw (fuzz_entry.hpp).
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return nanoscopy::fuzz::run_input(nanoscopy::fuzz::run_raw, data, size);
}
