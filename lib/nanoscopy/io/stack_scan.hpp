// Streams a stack (or a frame range of it) once, in bounded memory, with a
// progress display, and gathers what a user wants to know before processing
// it: size, type, pixel size and intensity statistics. The first step of every
// tool, and what `fit2d --scan` prints.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "nanoscopy/core/frame_range.hpp"
#include "nanoscopy/io/stack_reader.hpp"

namespace nanoscopy {

struct StackScan {
  StackInfo info;
  FrameRange::Resolved range{0, 0};
  double min = 0, max = 0, mean = 0;
  std::int64_t nonfinite_pixels = 0;  // NaN/Inf (float stacks)
  double seconds = 0;                 // time spent reading and scanning
};

// Reads `chunk_frames` frames at a time.
StackScan scan_stack(const std::string& spec, const FrameRange& frames, std::int64_t chunk_frames, bool quiet);

// Human-readable summary, one fact per line.
void print_scan(std::ostream& out, const StackScan& scan);

}  // namespace nanoscopy
