// fit2d --regions FILE: the parts of the frame to localize in (the rest is
// ignored). One region per line, "x0 y0 width height" in pixels (columns
// x0 … x0+width−1, rows y0 … y0+height−1), separated by spaces, tabs or commas;
// '#' starts a comment.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nanoscopy {

struct Region {
  std::int64_t x0 = 0, y0 = 0, width = 0, height = 0;
  bool contains(std::int64_t x, std::int64_t y) const { return x >= x0 && y >= y0 && x < x0 + width && y < y0 + height; }
};

// InputError naming file:line for a malformed line, a region with a size ≤ 0 or
// one reaching outside the frame, or a file without regions.
std::vector<Region> parse_regions(const std::string& path, std::int64_t frame_width, std::int64_t frame_height);

// True when `regions` is empty (no restriction) or one of them holds (x, y).
bool in_regions(const std::vector<Region>& regions, std::int64_t x, std::int64_t y);

// in_regions for every pixel of a width × height frame, row-major: 1 inside, 0
// outside (the CUDA localize engine drops candidates by this map on the device).
std::vector<unsigned char> region_mask(const std::vector<Region>& regions, int width, int height);

}  // namespace nanoscopy
