// libFuzzer target: sofi partial files (read_sofi_partial through merge_sofi_partials of one part).
// The input -> reader call is nanoscopy::fuzz::run_sofi_partial (fuzz_entry.hpp).
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return nanoscopy::fuzz::run_input(nanoscopy::fuzz::run_sofi_partial, data, size);
}
