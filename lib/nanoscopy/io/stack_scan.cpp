#include "nanoscopy/io/stack_scan.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <ostream>

#include "nanoscopy/core/progress.hpp"
#include "nanoscopy/io/frame_source.hpp"

namespace nanoscopy {

StackScan scan_stack(const std::string& spec, const FrameRange& frames, std::int64_t chunk_frames, bool quiet) {
  const auto start = std::chrono::steady_clock::now();
  auto reader = open_stack(spec);
  StackScan scan;
  scan.info = reader->info();
  scan.range = frames.resolve(scan.info.frames, scan.info.path);

  FrameSource source(*reader, scan.range, chunk_frames);
  Progress progress("reading " + scan.info.path, scan.range.count(), quiet);
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
  std::int64_t finite = 0;
  FrameChunk c;
  while (source.next(c)) {
    for (float v : c.floats()) {
      if (!std::isfinite(v)) {
        ++scan.nonfinite_pixels;
        continue;
      }
      lo = std::min<double>(lo, v);
      hi = std::max<double>(hi, v);
      sum += v;
      ++finite;
    }
    progress.update(c.first + c.count - scan.range.first);
  }
  progress.finish();
  scan.min = finite ? lo : 0;
  scan.max = finite ? hi : 0;
  scan.mean = finite ? sum / static_cast<double>(finite) : 0;
  scan.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return scan;
}

void print_scan(std::ostream& out, const StackScan& s) {
  out << "input:       " << s.info.path << " (" << s.info.format << ")\n"
      << "frames:      " << s.range.first << ":" << s.range.last << " of " << s.info.frames << "\n"
      << "frame size:  " << s.info.width << " x " << s.info.height << " " << to_string(s.info.type) << "\n";
  if (s.info.pixel_size_nm > 0) out << "pixel size:  " << s.info.pixel_size_nm << " nm\n";
  out << "intensity:   min " << s.min << ", mean " << s.mean << ", max " << s.max << "\n";
  if (s.nonfinite_pixels > 0) out << "non-finite:  " << s.nonfinite_pixels << " pixels (NaN/Inf)\n";
  const double mb = static_cast<double>(s.range.count() * s.info.bytes_per_frame()) / 1e6;
  out << "read:        " << mb << " MB in " << s.seconds << " s (" << (s.seconds > 0 ? static_cast<double>(s.range.count()) / s.seconds : 0)
      << " frames/s)\n";
}

}  // namespace nanoscopy
