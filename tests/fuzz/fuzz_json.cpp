// libFuzzer target: the JSON parameter reader (load_param_file on a .json) and the round trip of every tool's schema.
// The input -> reader call is nanoscopy::fuzz::run_json (fuzz_entry.hpp).
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return nanoscopy::fuzz::run_input(nanoscopy::fuzz::run_json, data, size);
}
