// Pages of a mapped stack file (io/mapped_stack.hpp) made readable by a GPU's copy engine, so that a warm file's
// frames go from the page cache to the device without the host copying them first. The CUDA backend implements
// it (kernels/common/host_registration.hpp, cudaHostRegister in fixed pieces); FrameSource uses it for fit2d's
// pipeline, the SOFI engine for sofi.
#pragma once

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <span>
#include <vector>

namespace nanoscopy {

// Bytes of host memory a copy may read in one go: inside one registered piece.
struct HostSegment {
  const unsigned char* bytes = nullptr;
  std::size_t size = 0;
};

class PageRegistry {
 public:
  virtual ~PageRegistry() = default;  // unregisters what is left: only once no copy reads it
  // Registers what of [p, p + bytes) is not yet, and marks it used by `serial` (increasing from one use to the
  // next). False, with nothing marked, where the driver refuses (the caller then reads the frames).
  virtual bool cover(const unsigned char* p, std::size_t bytes, std::uint64_t serial) = 0;
  // Lets go of what no use after `done` needs: the copies of uses up to `done` have finished.
  virtual void release_done(std::uint64_t done) = 0;
  // One copy may not read across two registrations: [p, p + bytes) cut where a piece ends, appended to `out`.
  virtual void split(const unsigned char* p, std::size_t bytes, std::vector<HostSegment>& out) const = 0;
};

// The bytes [offset, offset + bytes) of a run of segments laid end to end, as segments (a chunk cut in pieces).
inline std::vector<HostSegment> slice_segments(std::span<const HostSegment> segments, std::size_t offset,
                                               std::size_t bytes) {
  std::vector<HostSegment> out;
  for (const HostSegment& s : segments) {
    if (bytes == 0) break;
    if (offset >= s.size) {
      offset -= s.size;
      continue;
    }
    const std::size_t n = std::min(s.size - offset, bytes);
    out.push_back({s.bytes + offset, n});
    offset = 0;
    bytes -= n;
  }
  return out;
}

}  // namespace nanoscopy
