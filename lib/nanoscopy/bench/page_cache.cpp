#include "nanoscopy/bench/page_cache.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {
namespace {

// Closes the descriptor however the caller leaves.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

double resident_fraction(const std::string& path) {
  const Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  struct stat st {};
  if (file.fd < 0 || ::fstat(file.fd, &st) != 0) return -1;
  if (st.st_size == 0) return 0;
  const auto bytes = static_cast<std::size_t>(st.st_size);
  void* map = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, file.fd, 0);
  if (map == MAP_FAILED) return -1;
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident((bytes + page - 1) / page);
  const int rc = ::mincore(map, bytes, resident.data());
  ::munmap(map, bytes);
  if (rc != 0) return -1;
  std::size_t cached = 0;
  for (const unsigned char r : resident) cached += r & 1u;
  return static_cast<double>(cached) / static_cast<double>(resident.size());
}

CacheDrop drop_file_cache(const std::string& path) {
  CacheDrop drop;
  {
    const Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (file.fd < 0) throw InputError(path, std::string("cannot open the file to drop its cached pages: ") + std::strerror(errno));
    // Dirty pages (a stack just written) are not dropped: write them back first.
    ::fdatasync(file.fd);
    const int rc = ::posix_fadvise(file.fd, 0, 0, POSIX_FADV_DONTNEED);
    drop.method = rc == 0 ? "fdatasync + posix_fadvise(DONTNEED)"
                          : std::string("posix_fadvise failed (") + std::strerror(rc) + ")";
  }
  if (::geteuid() == 0) {
    std::ofstream drop_caches("/proc/sys/vm/drop_caches");
    drop_caches << "1\n";
    drop_caches.flush();
    if (drop_caches) drop.method += " + drop_caches";
  }
  drop.resident_after = resident_fraction(path);
  return drop;
}

}  // namespace nanoscopy
