// Page-locked (pinned) host memory: what the GPUs upload from without a
// staging copy. Large blocks are mapped on 2 MiB boundaries with transparent
// huge pages and then registered with the driver (cudaHostRegister), so it pins
// one page per 2 MiB instead of one per 4 KiB. On the GPU machine (H200 host)
// cudaMallocHost pinned 1.6-2.6 GB/s: 236-289 ms for sofi's 512 MB of chunk
// buffers, most of its set-up; mapped with huge pages and registered, 73 ms,
// and 10 ms instead of 49-68 to release; uploads from either run at 55 GB/s.
// Small blocks, and large ones whose registration fails (no THP: still pinned,
// in 4 KiB pages), come from cudaMallocHost. Portable: pinned for every GPU.
#pragma once

#include <cstddef>

#include "nanoscopy/core/host_buffer.hpp"

namespace nanoscopy::cuda {

// Throws DeviceError (via the CUDA check) when no pinned memory can be had.
void* pinned_allocate(std::size_t bytes);
// A block from pinned_allocate; null is ignored. Never throws.
void pinned_free(void* p) noexcept;
// pinned_allocate's block owned by a HostBuffer that frees it with pinned_free (call with the GPU current).
HostBuffer pinned_host_buffer(std::size_t bytes);

}  // namespace nanoscopy::cuda
