// libFuzzer target: fit2d/smre part files (read_part_file, then the part's localizations or frames).
// The input -> reader call is nanoscopy::fuzz::run_part_file (fuzz_entry.hpp).
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return nanoscopy::fuzz::run_input(nanoscopy::fuzz::run_part_file, data, size);
}
