// common/pinned_memory: small blocks from cudaMallocHost, large ones mapped with huge pages and registered; both
// must be page-locked for every GPU (uploaded without staging) and carry the bytes exactly.
#include <doctest/doctest.h>

#include "nanoscopy/config.hpp"

#if NANOSCOPY_HAVE_CUDA
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "common/owners.hpp"
#include "common/pinned_memory.hpp"

using namespace nanoscopy::cuda;

TEST_CASE("pinned memory, small and large: page-locked, uploaded and read back exactly, freed") {
  const int devices = [] {
    int n = 0;
    cudaGetDeviceCount(&n);
    return n;
  }();
  REQUIRE(devices > 0);
  for (const std::size_t bytes : {std::size_t{1}, std::size_t{4096}, std::size_t{3} << 20, (std::size_t{33} << 20) + 7}) {
    CAPTURE(bytes);
    auto* p = static_cast<unsigned char*>(pinned_allocate(bytes));
    REQUIRE(p);
    CHECK(is_pinned(p));
    CHECK(is_pinned(p + bytes - 1));  // the whole block, not only its start
    for (std::size_t i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(i * 131u + 7u);
    for (int d = 0; d < devices; ++d) {  // portable: every GPU of the process
      DeviceGuard guard(d);
      DeviceBuffer<unsigned char> dev(bytes);
      std::vector<unsigned char> back(bytes);
      REQUIRE(cudaMemcpy(dev.get(), p, bytes, cudaMemcpyHostToDevice) == cudaSuccess);
      REQUIRE(cudaMemcpy(back.data(), dev.get(), bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
      CHECK(std::memcmp(back.data(), p, bytes) == 0);
    }
    pinned_free(p);
    CHECK(cudaGetLastError() == cudaSuccess);
  }
  pinned_free(nullptr);  // ignored
  PinnedBuffer<float> moved(std::size_t{8} << 20);
  PinnedBuffer<float> target(std::move(moved));
  CHECK(target.get() != nullptr);
  CHECK(moved.get() == nullptr);
}
#endif
