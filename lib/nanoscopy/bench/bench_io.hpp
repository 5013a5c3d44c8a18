// `bench io`: how fast a long TIFF stack is indexed (opened) and streamed.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

namespace nanoscopy {

struct IoBenchOptions {
  std::int64_t pages = 100000;
  std::int64_t size = 8;
  std::string dir;   // default: system temp dir
  std::string json;  // optional output
};

// Writes an N-page uint16 TIFF, then times open (index) and a full streamed
// read over `repeats` runs; prints a Markdown table.
void run_io_bench(const IoBenchOptions& options, std::int64_t repeats, std::ostream& out);

}  // namespace nanoscopy
