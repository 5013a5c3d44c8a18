#include "common/parallel_copy.hpp"

#include <algorithm>
#include <cstring>

namespace nanoscopy::cuda {
namespace {
constexpr std::size_t kSplitAbove = 256u << 10;  // below: one memcpy on the caller's thread
}

ParallelCopy::ParallelCopy(unsigned threads) {
  const unsigned n = std::min(threads, std::max(1u, std::thread::hardware_concurrency()));
  for (unsigned i = 1; i < n; ++i) workers_.emplace_back([this, i] { work(i); });
}

ParallelCopy::~ParallelCopy() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  start_.notify_all();
  for (auto& t : workers_) t.join();
}

void ParallelCopy::copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes < kSplitAbove || workers_.empty()) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const std::size_t parts = workers_.size() + 1;
  std::size_t step = (bytes + parts - 1) / parts;
  step = (step + 63) & ~std::size_t{63};  // whole cache lines per part
  {
    std::lock_guard lock(mutex_);
    dst_ = static_cast<char*>(dst);
    src_ = static_cast<const char*>(src);
    bytes_ = bytes;
    step_ = step;
    pending_ = static_cast<unsigned>(workers_.size());
    ++generation_;
  }
  start_.notify_all();
  std::memcpy(dst, src, std::min(bytes, step));  // part 0 on this thread
  std::unique_lock lock(mutex_);
  done_.wait(lock, [this] { return pending_ == 0; });
}

void ParallelCopy::work(unsigned index) {
  unsigned seen = 0;
  for (;;) {
    std::unique_lock lock(mutex_);
    start_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    char* dst = dst_;
    const char* src = src_;
    const std::size_t begin = std::min(bytes_, index * step_), end = std::min(bytes_, begin + step_);
    lock.unlock();
    if (end > begin) std::memcpy(dst + begin, src + begin, end - begin);
    lock.lock();
    if (--pending_ == 0) done_.notify_one();
  }
}

}  // namespace nanoscopy::cuda
