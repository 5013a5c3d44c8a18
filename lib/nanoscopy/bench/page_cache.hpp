// A cold file for the benchmarks: its pages dropped from the page cache
// before a timed pass, so the pass reads from the disk, and a count of how
// much of it is still cached to say whether that worked.
#pragma once

#include <string>

namespace nanoscopy {

struct CacheDrop {
  std::string method;  // what was done, e.g. "fdatasync + posix_fadvise(DONTNEED)"
  double resident_after = 0;  // fraction of the file's pages still cached afterwards (mincore); -1: unknown
};

// Writes the file's dirty pages back (fdatasync), then asks the kernel to drop
// its cached pages (posix_fadvise POSIX_FADV_DONTNEED: clean pages of a file
// go without root); as root also writes 1 to /proc/sys/vm/drop_caches, a
// failure of which is ignored. Throws InputError when the file cannot be opened.
CacheDrop drop_file_cache(const std::string& path);

// Fraction of the file's pages in the page cache (mmap + mincore); -1 when it cannot tell.
double resident_fraction(const std::string& path);

}  // namespace nanoscopy
