// A stack file mapped read-only, so that a GPU engine can copy a warm file's frames straight from the page
// cache (registered with the driver, kernels/common/host_registration.hpp) instead of reading them into pinned
// buffers first. On the GPU machine reading the page cache with 8 threads and uploading meanwhile contend for
// the host's memory: 8 threads copied 48 GB/s alone and 38 GB/s beside a 47 GB/s upload (docs/benchmarks.md,
// fifteenth session); copying from the mapping leaves the one DMA read per byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace nanoscopy {

class StackReader;

class MappedStack {
 public:
  // nullptr where the reader's frames are not stored plainly (StackReader::direct_layout) or the file cannot be
  // mapped: the caller reads the frames as before.
  static std::unique_ptr<MappedStack> map(const StackReader& reader);
  ~MappedStack();
  MappedStack(const MappedStack&) = delete;
  MappedStack& operator=(const MappedStack&) = delete;

  const unsigned char* base() const { return base_; }
  std::size_t size() const { return size_; }
  std::size_t frame_bytes() const { return frame_bytes_; }
  // Stack frame i in the mapping. The CPU never reads through it (a file truncated by someone else meanwhile
  // would kill the process with SIGBUS there): it only hands the address to the GPU's copies.
  const unsigned char* frame(std::int64_t i) const { return base_ + offsets_[static_cast<std::size_t>(i)]; }
  // Whether every page of these stack frames is in the page cache (mincore). A cold file is read as before,
  // by FrameReader's threads with read-ahead, which the disk's speed needs.
  bool resident(std::span<const std::int64_t> frames) const;

 private:
  MappedStack() = default;
  const unsigned char* base_ = nullptr;
  std::size_t size_ = 0;
  std::size_t frame_bytes_ = 0;
  std::vector<std::uint64_t> offsets_;
  std::string path_;
  mutable std::vector<unsigned char> pages_;  // mincore's answer
};

// NANOSCOPY_ZERO_COPY=1 turns the mapped path on. Off by default until its speed is measured on a GPU and its copies
// across registered pieces have run there (docs/benchmarks.md, fifteenth session); the GPU test runs it either way.
bool zero_copy_enabled();

}  // namespace nanoscopy
