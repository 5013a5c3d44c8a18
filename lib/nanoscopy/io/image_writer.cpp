#include "nanoscopy/io/image_writer.hpp"

#include <algorithm>
#include <filesystem>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

std::unique_ptr<ImageWriter> create_image_writer(const std::string& path, const ImageMeta& meta) {
  if (meta.type != PixelType::u16 && meta.type != PixelType::f32)
    throw UsageError(path, "images are written as uint16 or float32, not " + to_string(meta.type));
  if (meta.width <= 0 || meta.height <= 0 || meta.frames <= 0)
    throw UsageError(path, "nothing to write (empty image)");
  if (!meta.labels.empty() && static_cast<std::int64_t>(meta.labels.size()) != meta.frames)
    throw std::logic_error("image writer: " + std::to_string(meta.labels.size()) + " labels for " +
                           std::to_string(meta.frames) + " frames");
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".tif" || ext == ".tiff") return detail::create_tiff_writer(path, meta);
  if (ext == ".h5" || ext == ".hdf5") return detail::create_hdf5_writer(path, meta);
  throw UsageError(path, "unknown image extension '" + ext + "' (use .tif, .tiff, .h5 or .hdf5)");
}

void write_float_pages(const std::string& path, std::int64_t width, std::int64_t height,
                       std::span<const float* const> pages, double pixel_size_nm, const std::string& software,
                       const std::vector<std::string>& labels, const TextAttributes& notes) {
  auto writer = create_image_writer(path, ImageMeta{.width = width,
                                                    .height = height,
                                                    .frames = static_cast<std::int64_t>(pages.size()),
                                                    .type = PixelType::f32,
                                                    .pixel_size_nm = pixel_size_nm,
                                                    .software = software,
                                                    .axis = StackAxis::pages,
                                                    .labels = labels,
                                                    .notes = notes});
  for (const float* page : pages) writer->write(page, 1);
  writer->close();
}

}  // namespace nanoscopy
