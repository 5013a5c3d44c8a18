#include "nanoscopy/io/mapped_stack.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>

#include "nanoscopy/io/stack_reader.hpp"

namespace nanoscopy {

std::unique_ptr<MappedStack> MappedStack::map(const StackReader& reader) {
  const auto layout = reader.direct_layout();
  if (!layout || layout->file_size == 0 || layout->offsets.empty()) return nullptr;
  const auto frame_bytes = static_cast<std::uint64_t>(reader.info().bytes_per_frame());
  for (const std::uint64_t o : layout->offsets)
    if (o > layout->file_size || frame_bytes > layout->file_size - o) return nullptr;  // the reader reports it
  void* p = ::mmap(nullptr, layout->file_size, PROT_READ, MAP_SHARED, layout->fd, 0);
  if (p == MAP_FAILED) return nullptr;
  std::unique_ptr<MappedStack> m(new MappedStack());
  m->base_ = static_cast<const unsigned char*>(p);
  m->size_ = layout->file_size;
  m->frame_bytes_ = frame_bytes;
  m->offsets_ = layout->offsets;
  m->path_ = reader.info().path;
  return m;
}

MappedStack::~MappedStack() {
  if (base_) ::munmap(const_cast<unsigned char*>(base_), size_);
}

bool MappedStack::resident(std::span<const std::int64_t> frames) const {
  static const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  for (std::size_t j = 0; j < frames.size();) {
    // Frames that follow each other in the file are asked about in one call.
    const std::uint64_t start = offsets_[static_cast<std::size_t>(frames[j])];
    std::uint64_t end = start + frame_bytes_;
    std::size_t k = j + 1;
    while (k < frames.size() && offsets_[static_cast<std::size_t>(frames[k])] == end) {
      end += frame_bytes_;
      ++k;
    }
    const std::uint64_t first_page = start / page * page;
    const std::uint64_t length = end - first_page;
    pages_.resize((length + page - 1) / page);
    if (::mincore(const_cast<unsigned char*>(base_) + first_page, length, pages_.data()) != 0) return false;
    for (const unsigned char in : pages_)
      if (!(in & 1)) return false;
    j = k;
  }
  return true;
}

bool zero_copy_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("NANOSCOPY_ZERO_COPY");
    return v && std::string(v) == "1";
  }();
  return on;
}

}  // namespace nanoscopy
