// libFuzzer target: the TIFF/BigTIFF stack reader (open_stack on a .tif, then frames).
// The input -> reader call is nanoscopy::fuzz::run_tiff (fuzz_entry.hpp).
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return nanoscopy::fuzz::run_input(nanoscopy::fuzz::run_tiff, data, size);
}
