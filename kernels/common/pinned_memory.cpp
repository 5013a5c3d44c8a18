#include "common/pinned_memory.hpp"

#include <cuda_runtime.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/cuda_check.hpp"

namespace nanoscopy::cuda {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
// Below this, the mapping's own cost is not worth it (the localizer's result buffers, staging pieces).
constexpr std::size_t kMapAtLeast = std::size_t{4} << 20;
// touch_in_parallel: a thread for every 16 MB at most, and one write per 4 KiB page.
constexpr std::size_t kTouchPerThreadAtLeast = std::size_t{16} << 20;
constexpr std::size_t kPage = 4096;

// The mappings behind registered blocks (the aligned pointer handed out → the mapping), so that
// pinned_free knows how a block was made: a handful live at a time.
struct Mappings {
  std::mutex mutex;
  std::unordered_map<void*, std::pair<void*, std::size_t>> live;
};

Mappings& mappings() {
  static Mappings m;
  return m;
}

// Fresh anonymous memory is zeroed page by page where it is first touched, and cudaHostRegister touches all of
// it on the calling thread (sofi's set-up, mostly pinning 2 x 270 MB then, took about 0.07 s of a 0.265 s run on
// the H200 host: docs/benchmarks.md, twelfth session; the gain of touching in parallel is not yet measured).
// Touched first by several threads, the pages are zeroed in parallel; the registration then finds them present.
void touch_in_parallel(void* p, std::size_t bytes) {
  const std::size_t hardware = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t parts = std::min({hardware, std::size_t{8}, bytes / kTouchPerThreadAtLeast});
  if (parts < 2) return;
  auto* bytes_of = static_cast<volatile unsigned char*>(p);
  const auto touch = [=](std::size_t i) {
    const std::size_t lo = (bytes * i / parts) & ~(kHugePage - 1);
    const std::size_t hi = i + 1 == parts ? bytes : (bytes * (i + 1) / parts) & ~(kHugePage - 1);
    for (std::size_t o = lo; o < hi; o += kPage) bytes_of[o] = 0;  // already zero: only the fault matters
  };
  std::vector<std::thread> threads;
  try {
    for (std::size_t i = 1; i < parts; ++i) threads.emplace_back(touch, i);
  } catch (const std::system_error&) {
    // no thread to spare: the registration touches what is left
  }
  touch(0);
  for (auto& t : threads) t.join();
}

// A registered mapping of `bytes` on a 2 MiB boundary, or null (then cudaMallocHost serves).
void* map_and_register(std::size_t bytes) {
  const std::size_t length = bytes + kHugePage;
  void* raw = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  auto* p = reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(raw) + kHugePage - 1) & ~(kHugePage - 1));
  madvise(p, bytes, MADV_HUGEPAGE);  // a hint: without THP the block is pinned in 4 KiB pages, still correct
  touch_in_parallel(p, bytes);
  if (cudaHostRegister(p, bytes, cudaHostRegisterPortable) != cudaSuccess) {
    cudaGetLastError();  // not sticky: clear it, cudaMallocHost gets its chance
    munmap(raw, length);
    return nullptr;
  }
  Mappings& m = mappings();
  std::lock_guard lock(m.mutex);
  m.live[p] = {raw, length};
  return p;
}

}  // namespace

void* pinned_allocate(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes >= kMapAtLeast)
    if (void* p = map_and_register(bytes)) return p;
  void* p = nullptr;
  NANOSCOPY_CUDA_CHECK(cudaMallocHost(&p, bytes));
  return p;
}

void pinned_free(void* p) noexcept {
  if (!p) return;
  std::pair<void*, std::size_t> mapping{nullptr, 0};
  {
    Mappings& m = mappings();
    std::lock_guard lock(m.mutex);
    const auto it = m.live.find(p);
    if (it != m.live.end()) {
      mapping = it->second;
      m.live.erase(it);
    }
  }
  if (!mapping.first) {
    cudaFreeHost(p);
    return;
  }
  cudaHostUnregister(p);
  munmap(mapping.first, mapping.second);
}

HostBuffer pinned_host_buffer(std::size_t bytes) {
  return HostBuffer(pinned_allocate(bytes), [](void* q) { pinned_free(q); });
}

}  // namespace nanoscopy::cuda
