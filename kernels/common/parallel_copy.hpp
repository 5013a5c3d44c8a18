// Host memcpy into and out of pinned staging buffers, split over a few
// persistent threads: one thread moves ~6–10 GB/s, PCIe ~50 GB/s, so a single
// memcpy would bound every host-to-host transfer. Small copies stay on the
// calling thread (waking workers costs more than they save).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

namespace nanoscopy::cuda {

class ParallelCopy {
 public:
  explicit ParallelCopy(unsigned threads = 4);
  ~ParallelCopy();
  ParallelCopy(const ParallelCopy&) = delete;
  ParallelCopy& operator=(const ParallelCopy&) = delete;

  // Copies `bytes` from src to dst (no overlap); returns when done.
  void copy(void* dst, const void* src, std::size_t bytes);

 private:
  void work(unsigned index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  char* dst_ = nullptr;
  const char* src_ = nullptr;
  std::size_t bytes_ = 0, step_ = 0;
  unsigned generation_ = 0;
  unsigned pending_ = 0;
  bool stop_ = false;
};

}  // namespace nanoscopy::cuda
