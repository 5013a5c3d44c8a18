// libFuzzer target: the astigmatic calibration JSON reader (read_astigmatic_calibration) and its round trip.
// The input -> reader call is nanoscopy::fuzz::run_calibration (fuzz_entry.hpp).
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return nanoscopy::fuzz::run_input(nanoscopy::fuzz::run_calibration, data, size);
}
