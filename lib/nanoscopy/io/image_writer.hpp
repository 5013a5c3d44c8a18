// Image and stack output. Frames are streamed in (T, Y, X) order; the file
// appears under its final name only when close() succeeds (AtomicOutput).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/io/pixel_type.hpp"
#include "nanoscopy/io/stack_axis.hpp"
#include "nanoscopy/io/text_attributes.hpp"

namespace nanoscopy {

struct ImageMeta {
  std::int64_t width = 0;
  std::int64_t height = 0;
  std::int64_t frames = 1;      // the exact number of frames that will be written
  PixelType type = PixelType::f32;  // u16 or f32
  double pixel_size_nm = 0.0;   // 0: unknown (not written)
  std::string software;         // e.g. "nanoscopy smre 0.1.0"
  StackAxis axis = StackAxis::time;  // TIFF: ImageJ frames= (T), slices= (Z) or images= only (pages)
  std::vector<std::string> labels;   // one per frame or none: ImageJ slice labels (TIFF), attribute "labels" (HDF5)
  std::string dataset = "data"; // HDF5 only
  TextAttributes root_attributes = {};  // HDF5 only: on the root group (a TIFF writer refuses them)
  // Facts about the picture that both formats carry: TIFF as `name=value` lines after the ImageJ
  // description's own (ImageJ lists them under Image > Show Info), HDF5 as root attributes.
  TextAttributes notes = {};
};

class ImageWriter {
 public:
  virtual ~ImageWriter() = default;
  // Appends `count` frames of meta.type pixels (count * width * height values).
  virtual void write(const void* frames, std::int64_t count) = 0;
  // Finishes the file and renames it into place. Throws OutputError if fewer
  // frames than announced were written. Without close(), nothing is left behind.
  virtual void close() = 0;
};

// TIFF (uint16/float32, BigTIFF automatically past 4 GB, ImageJ-readable
// description with the pixel size) for .tif/.tiff; HDF5 (T,Y,X) or (Y,X) for
// .h5/.hdf5. Unknown extension or pixel type: UsageError.
std::unique_ptr<ImageWriter> create_image_writer(const std::string& path, const ImageMeta& meta);

// Whole float32 images (one page each, width x height) as one file, atomically:
// result pages (StackAxis::pages), each named by `labels` when given.
void write_float_pages(const std::string& path, std::int64_t width, std::int64_t height,
                       std::span<const float* const> pages, double pixel_size_nm = 0, const std::string& software = "",
                       const std::vector<std::string>& labels = {}, const TextAttributes& notes = {});

namespace detail {
std::unique_ptr<ImageWriter> create_tiff_writer(const std::string& path, const ImageMeta& meta);
std::unique_ptr<ImageWriter> create_hdf5_writer(const std::string& path, const ImageMeta& meta);
}  // namespace detail

}  // namespace nanoscopy
