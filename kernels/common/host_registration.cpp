#include "common/host_registration.hpp"

#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/owners.hpp"

namespace nanoscopy::cuda {

RegisteredPieces::RegisteredPieces(const unsigned char* base, std::size_t size) : base_(base), size_(size) {
  NANOSCOPY_CUDA_CHECK(cudaGetDevice(&device_));
}

RegisteredPieces::~RegisteredPieces() {
  try {
    release_done(UINT64_MAX);
  } catch (...) {  // DeviceGuard's: the device is gone, and its registrations with it
  }
}

void RegisteredPieces::split(const unsigned char* p, std::size_t bytes, std::vector<HostSegment>& out) const {
  while (bytes > 0) {
    const auto at = static_cast<std::size_t>(p - base_);
    const std::size_t n = std::min(bytes, (at / piece_bytes + 1) * piece_bytes - at);
    out.push_back({p, n});
    p += n;
    bytes -= n;
  }
}

bool RegisteredPieces::cover(const unsigned char* p, std::size_t bytes, std::uint64_t serial) {
  if (bytes == 0) return true;
  if (p < base_ || static_cast<std::size_t>(p - base_) > size_ || bytes > size_ - static_cast<std::size_t>(p - base_))
    return false;
  const std::size_t at = static_cast<std::size_t>(p - base_);
  DeviceGuard guard(device_);
  static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t first = at / piece_bytes, last = (at + bytes - 1) / piece_bytes;
  std::vector<std::size_t> added;
  for (std::size_t i = first; i <= last; ++i) {
    if (last_use_.count(i)) continue;
    const std::size_t start = i * piece_bytes;
    // Whole pages: the mapping holds the file's last page whole (zeros past its end), and the driver pins pages.
    const std::size_t length = std::min(piece_bytes, (size_ - start + page - 1) / page * page);
    // Read-only: the mapping is PROT_READ, and the devices only read it.
    if (cudaHostRegister(const_cast<unsigned char*>(base_ + start), length,
                         cudaHostRegisterReadOnly | cudaHostRegisterPortable) != cudaSuccess) {
      cudaGetLastError();  // not sticky: clear it so later checks do not report it
      for (const std::size_t j : added) {
        cudaHostUnregister(const_cast<unsigned char*>(base_ + j * piece_bytes));
        last_use_.erase(j);
      }
      return false;
    }
    last_use_[i] = 0;
    added.push_back(i);
  }
  for (std::size_t i = first; i <= last; ++i) last_use_[i] = serial;
  return true;
}

void RegisteredPieces::release_done(std::uint64_t done) {
  if (last_use_.empty()) return;
  DeviceGuard guard(device_);
  for (auto it = last_use_.begin(); it != last_use_.end();) {
    if (it->second > done) {
      ++it;
      continue;
    }
    if (cudaHostUnregister(const_cast<unsigned char*>(base_ + it->first * piece_bytes)) != cudaSuccess)
      cudaGetLastError();  // nothing to do about it (the context may be gone); keep it from later checks
    it = last_use_.erase(it);
  }
}

}  // namespace nanoscopy::cuda
