// A read-only file mapping's pages registered with the driver for DMA, a window of fixed pieces at a time, so
// that the GPU copies frames straight from the page cache (io/mapped_stack.hpp). On the GPU machine (H100 host,
// kernel 6.18) registering a cached file ran at 37-57 GB/s and the copies from it at 55 GB/s, the PCIe link's
// rate (docs/benchmarks.md, fifteenth session). Pieces, not chunks, are registered: the chunks of a SOFI run
// overlap by the largest lag, and the driver refuses to register a page twice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

#include "nanoscopy/io/page_registry.hpp"

namespace nanoscopy::cuda {

// Registered portable (every GPU of the process may copy from it) from whichever thread calls: fit2d's reader
// thread registers, the engines' threads copy.
class RegisteredPieces final : public PageRegistry {
 public:
  // The mapping [base, base + size) (base page-aligned, as mmap returns it), registered on the current device.
  RegisteredPieces(const unsigned char* base, std::size_t size);
  ~RegisteredPieces() override;  // unregisters what is left; call once no copy reads it
  RegisteredPieces(const RegisteredPieces&) = delete;
  RegisteredPieces& operator=(const RegisteredPieces&) = delete;

  const unsigned char* base() const { return base_; }
  // Registers the pieces holding [p, p + bytes) that are not yet, and marks them used by copy `serial`. False
  // (and nothing marked) when the driver refuses: the device cannot map read-only memory, or the pages are gone
  // (a file truncated since it was opened); the caller then reads the frames as before.
  bool cover(const unsigned char* p, std::size_t bytes, std::uint64_t serial) override;
  // Unregisters the pieces whose last copy (serial) is at most `done`: copies that have finished.
  void release_done(std::uint64_t done) override;
  void split(const unsigned char* p, std::size_t bytes, std::vector<HostSegment>& out) const override;
  std::size_t pieces() const { return last_use_.size(); }

  static constexpr std::size_t piece_bytes = std::size_t{64} << 20;

 private:
  const unsigned char* base_;
  std::size_t size_;
  int device_;
  std::map<std::size_t, std::uint64_t> last_use_;  // registered piece index -> serial of its last copy
};

}  // namespace nanoscopy::cuda
