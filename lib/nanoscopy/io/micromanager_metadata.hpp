// Internal: Micro-Manager's own per-image metadata (private TIFF tag 51123 of
// its MMStack and NDTiff files): a JSON object of every device property at the
// time of the image ("Camera", "Exposure-ms", "PixelSizeUm", "<Camera>-Gain",
// ...). Micro-Manager 1.4 wraps each value as {"PropVal": v, ...}; 2.0 writes v.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nanoscopy/io/stack_reader.hpp"

namespace nanoscopy::detail {

struct MicroManagerMetadata {
  // Every key with its value as text, in file order ("scopeDataKeys", an index
  // of the other keys, left out as Picasso does); objects and lists as JSON text.
  std::vector<std::pair<std::string, std::string>> values;
  std::string camera;          // "Camera", the active camera's device label; empty if none
  double pixel_size_um = 0.0;  // "PixelSizeUm" when calibrated (> 0); else 0
};

// The metadata of one image; empty (no values) when `json` is not a JSON object.
MicroManagerMetadata parse_micromanager_metadata(std::string_view json);

// Fills `info` from the first image's metadata, as Picasso's movie info holds it:
// metadata "Camera" and, in metadata_yaml, "Micro-Manager Metadata" (every key).
// The pixel size only where the file gave none (OME PhysicalSizeX comes first).
// Nothing changes for empty metadata.
void apply_micromanager_metadata(const MicroManagerMetadata& metadata, StackInfo& info);

}  // namespace nanoscopy::detail
