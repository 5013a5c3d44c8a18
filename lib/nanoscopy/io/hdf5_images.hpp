// Several 2-D float32 images of different sizes in one HDF5 file, one dataset
// each (sofi's cumulant orders and mean image), written atomically.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nanoscopy {

struct NamedImage {
  std::string name;  // dataset path, e.g. "order2"
  std::int64_t width = 0, height = 0;
  const float* pixels = nullptr;  // height x width, row-major
  std::string description;        // stored as the "description" attribute
  double pixel_size_nm = 0;       // stored as "pixel_size_nm" when > 0
};

// OutputError naming `path` on failure; nothing is left under `path` then.
void write_hdf5_images(const std::string& path, const std::vector<NamedImage>& images, const std::string& software);

}  // namespace nanoscopy
