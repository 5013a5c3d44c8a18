// libFuzzer target: the sCMOS camera map reader (read_camera_maps of an HDF5 recipe, with the movie's frame size).
// The input -> reader call is nanoscopy::fuzz::run_camera_maps (fuzz_entry.hpp).
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return nanoscopy::fuzz::run_input(nanoscopy::fuzz::run_camera_maps, data, size);
}
