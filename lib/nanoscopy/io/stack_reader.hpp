// One interface over every stack format. Opening a stack learns its frame
// count, frame size and pixel type up front (for TIFF: one walk of the IFD
// chain, kept as an index); frames are then read in chunks on demand, so the
// memory used never depends on the stack length.
//
// Layout: a frame is `height` rows of `width` pixels, row-major, contiguous;
// a chunk of n frames is n such frames back to back (T, Y, X).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "nanoscopy/core/frame_range.hpp"
#include "nanoscopy/io/pixel_type.hpp"
#include "nanoscopy/io/stack_axis.hpp"

namespace nanoscopy {

struct StackInfo {
  std::int64_t frames = 0;
  std::int64_t width = 0;
  std::int64_t height = 0;
  PixelType type = PixelType::u16;
  double pixel_size_nm = 0.0;  // physical pixel size when the file says (OME, ImageJ); 0 if unknown
  StackAxis axis = StackAxis::time;  // ImageJ slices= (Z) when the file says so; else time (frames)
  std::string format;          // "tiff", "bigtiff", "imagej-tiff", "ome-tiff", "hdf5", "picasso-raw"
  std::string path;            // the file as the user named it (for error messages)
  // The movie's own metadata: the scalar keys of the first document of <stem>.yaml
  // beside the stack (Picasso's movie info: Width, Height, ..., and the camera as
  // Baseline, Sensitivity, Gain, Qe, Pixelsize), in file order; empty when none.
  std::vector<std::pair<std::string, std::string>> metadata;
  std::string metadata_yaml;   // that whole first document (nested entries too), as YAML text
  std::string metadata_path;   // that .yaml, when there is one

  // The metadata value of `key` as a number, if present; InputError naming the
  // .yaml when it is not a finite number.
  std::optional<double> metadata_number(const std::string& key) const;

  std::int64_t pixels_per_frame() const { return width * height; }
  std::int64_t bytes_per_frame() const { return pixels_per_frame() * static_cast<std::int64_t>(bytes_per_pixel(type)); }
};

class StackReader {
 public:
  virtual ~StackReader() = default;
  const StackInfo& info() const { return info_; }

  // Reads frames [first, first + count) in the file's own pixel type into
  // `dst` (count * bytes_per_frame() bytes). Throws InputError naming the file
  // and the frame on a read or decode failure. Not thread-safe.
  virtual void read_raw(std::int64_t first, std::int64_t count, void* dst) = 0;

  // Same, converted to float32 (dst holds count * pixels_per_frame() floats).
  void read_float(std::int64_t first, std::int64_t count, float* dst);

  // A second reader of the same stack for another thread (this one is not
  // thread-safe), sharing what opening learnt: the TIFF page index (re-walking
  // a chain of a million IFDs would cost seconds), the metadata; the file is
  // opened again (a descriptor, and read-ahead, of its own), and refused if it
  // was replaced since. nullptr where a second thread would gain nothing: HDF5 (see
  // hdf5_reader.cpp) and one-frame PNGs. Called from the thread that owns this
  // reader; the new one may then be used in any one thread.
  virtual std::unique_ptr<StackReader> another_reader() const { return nullptr; }

  // A hint that frames [first, first + count) are read next: a reader of a file
  // asks the kernel to read their bytes now, as one sequential stream
  // (posix_fadvise WILLNEED), without waiting for it. Threads that then read
  // parts of the span from a cold file wait on that stream instead of each
  // making small requests of its own (FrameReader): 1.29 → 1.67 GB/s with 8
  // threads on the GPU machine's disk (docs/benchmarks.md). Pages already in
  // the page cache cost a lookup each (FrameReader announces a span only after
  // a slow one). Does nothing where there is no such file.
  virtual void will_read(std::int64_t /*first*/, std::int64_t /*count*/) {}

  // Attaches the movie's metadata file (open_stack does, for every format); its
  // Pixelsize fills in a pixel size the image file itself does not give.
  void attach_metadata(const std::string& yaml_path);

 protected:
  StackInfo info_;

 private:
  std::vector<unsigned char> scratch_;
};

// Opens a stack by name; the format comes from the content (TIFF magic, HDF5
// signature) or the extension (.raw with its .yaml). HDF5 datasets are named
// `file.h5:/path/to/dataset`, or found among the usual names. Throws InputError
// (missing, empty, truncated, not an image, unsupported pixel type ...).
std::unique_ptr<StackReader> open_stack(const std::string& spec);

}  // namespace nanoscopy
