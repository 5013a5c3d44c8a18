// Internal: one TIFF file as a stack, with what its first page says about the
// acquisition. open_tiff() (tiff_series_reader.cpp) builds on it: it reads the
// OME-XML and Micro-Manager metadata from here to decide whether the file is
// one of a Micro-Manager series and to fill in the stack's metadata.
#pragma once

#include <memory>
#include <string>

#include "nanoscopy/io/stack_reader.hpp"

namespace nanoscopy::detail {

class TiffStack : public StackReader {
 public:
  // The first page's ImageDescription (OME-XML, ImageJ's key=value lines, ...); empty if none.
  virtual const std::string& description() const = 0;
  // The first page's Micro-Manager metadata (private tag 51123, a JSON object); empty if none.
  virtual const std::string& micromanager_json() const = 0;
  // StackInfo is the reader's own: the series reader fills in its metadata.
  StackInfo& mutable_info() { return info_; }
};

// One TIFF file on its own (classic, BigTIFF, ImageJ > 4 GB, OME), indexed at open.
std::unique_ptr<TiffStack> open_tiff_file(const std::string& path);

}  // namespace nanoscopy::detail
