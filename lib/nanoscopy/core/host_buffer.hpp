// Host memory released by its own deleter. Engines hand it out (page-locked for
// CUDA, so a chunk uploads without a staging copy) and the frame source reads
// chunks into it; the buffer may outlive the engine that allocated it.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

namespace nanoscopy {

using HostBuffer = std::unique_ptr<void, void (*)(void*)>;

// Plain (pageable) host memory: the default where no engine asks for more.
inline HostBuffer allocate_plain_host(std::size_t bytes) {
  void* p = std::malloc(bytes > 0 ? bytes : 1);
  if (!p) throw std::bad_alloc();
  return HostBuffer(p, [](void* q) { std::free(q); });
}

}  // namespace nanoscopy
