// libFuzzer target: the --where expression parser (fit2d filter): WhereFilter, then keeps() on rows with NaN and Inf.
// The input -> reader call is nanoscopy::fuzz::run_where (fuzz_entry.hpp).
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return nanoscopy::fuzz::run_input(nanoscopy::fuzz::run_where, data, size);
}
