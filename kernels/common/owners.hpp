// Non-copyable, movable owners of CUDA resources. Destructors never throw
// (errors at release are ignored: the context may already be gone).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "common/cuda_check.hpp"
#include "common/pinned_memory.hpp"

namespace nanoscopy::cuda {

// Selects a device for the lifetime of the guard, restoring the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    NANOSCOPY_CUDA_CHECK(cudaGetDevice(&previous_));
    NANOSCOPY_CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceGuard() { cudaSetDevice(previous_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

// Device memory for `count` elements of T.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) NANOSCOPY_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), count_ * sizeof(T)));
  }
  ~DeviceBuffer() { if (ptr_) cudaFree(ptr_); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      if (ptr_) cudaFree(ptr_);
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// Page-locked host memory (fast, asynchronous transfers; common/pinned_memory.hpp).
template <typename T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) ptr_ = static_cast<T*>(pinned_allocate(count_ * sizeof(T)));
  }
  ~PinnedBuffer() { pinned_free(ptr_); }
  PinnedBuffer(PinnedBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      pinned_free(ptr_);
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  T& operator[](std::size_t i) const { return ptr_[i]; }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

class Stream {
 public:
  Stream() { NANOSCOPY_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() { if (stream_) cudaStreamDestroy(stream_); }
  Stream(Stream&& o) noexcept : stream_(std::exchange(o.stream_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept {
    if (this != &o) {
      if (stream_) cudaStreamDestroy(stream_);
      stream_ = std::exchange(o.stream_, nullptr);
    }
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  cudaStream_t get() const { return stream_; }
  void synchronize() const { NANOSCOPY_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  explicit Event(unsigned flags = cudaEventDefault) { NANOSCOPY_CUDA_CHECK(cudaEventCreateWithFlags(&event_, flags)); }
  ~Event() { if (event_) cudaEventDestroy(event_); }
  Event(Event&& o) noexcept : event_(std::exchange(o.event_, nullptr)) {}
  Event& operator=(Event&& o) noexcept {
    if (this != &o) {
      if (event_) cudaEventDestroy(event_);
      event_ = std::exchange(o.event_, nullptr);
    }
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  cudaEvent_t get() const { return event_; }
  void record(cudaStream_t stream) const { NANOSCOPY_CUDA_CHECK(cudaEventRecord(event_, stream)); }
  void synchronize() const { NANOSCOPY_CUDA_CHECK(cudaEventSynchronize(event_)); }
  // Milliseconds from `start` to this event (both recorded and complete).
  float elapsed_ms_since(const Event& start) const {
    float ms = 0.f;
    NANOSCOPY_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, event_));
    return ms;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

// Grows a plan's reusable buffer to at least n elements (contents not kept).
template <typename T>
void grow(DeviceBuffer<T>& b, std::size_t n) {
  if (b.size() < n) {
    b = DeviceBuffer<T>();  // free first: the old and new buffers need not fit at once
    b = DeviceBuffer<T>(n);
  }
}
template <typename T>
void grow(PinnedBuffer<T>& b, std::size_t n) {
  if (b.size() < n) {
    b = PinnedBuffer<T>();
    b = PinnedBuffer<T>(n);
  }
}

// Whether `p` points into page-locked host memory (cudaMallocHost or
// cudaHostRegister): such memory is copied to the device without staging.
inline bool is_pinned(const void* p) {
  if (!p) return false;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();  // a query, not a failure: clear the error it left
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

}  // namespace nanoscopy::cuda
