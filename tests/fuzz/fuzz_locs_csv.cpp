// libFuzzer target: the ThunderSTORM CSV localization reader (read_localization_file on a .csv).
// The input -> reader call is nanoscopy::fuzz::run_locs_csv (fuzz_entry.hpp).
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return nanoscopy::fuzz::run_input(nanoscopy::fuzz::run_locs_csv, data, size);
}
