#include "nanoscopy/loc/localize_dispatch.hpp"

#include <algorithm>
#include <stdexcept>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

LocalizeDispatcher::LocalizeDispatcher(std::span<LocalizeEngine* const> engines, int per_engine, Finish finish)
    : capacity_(static_cast<int>(engines.size()) * std::max(per_engine, 1)), finish_(std::move(finish)) {
  if (engines.empty()) throw std::logic_error("LocalizeDispatcher: no engine");
  for (LocalizeEngine* engine : engines) {
    if (!engine) throw std::logic_error("LocalizeDispatcher: a null engine");
    threads_.emplace_back([this, engine] { work(*engine); });
  }
}

LocalizeDispatcher::~LocalizeDispatcher() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  for (auto& t : threads_) t.join();
}

int LocalizeDispatcher::in_flight() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(slots_.size());
}

void LocalizeDispatcher::submit(const ChunkPixels& chunk) {
  {
    std::lock_guard lock(mutex_);
    if (static_cast<int>(slots_.size()) >= capacity_) throw std::logic_error("LocalizeDispatcher: too many chunks in flight");
    Slot& slot = slots_.emplace_back();
    slot.chunk = chunk;
    slot.result.first = chunk.first_frame;
    slot.result.count = chunk.count;
  }
  changed_.notify_all();
}

LocalizedChunk LocalizeDispatcher::take() {
  std::unique_lock lock(mutex_);
  if (slots_.empty()) throw std::logic_error("LocalizeDispatcher: no chunk in flight");
  changed_.wait(lock, [&] { return slots_.front().done; });
  Slot slot = std::move(slots_.front());
  slots_.pop_front();
  --started_;  // the front slot was started (it is done)
  lock.unlock();
  if (slot.error) std::rethrow_exception(slot.error);
  return std::move(slot.result);
}

void LocalizeDispatcher::work(LocalizeEngine& engine) {
  for (;;) {
    Slot* slot = nullptr;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || started_ < slots_.size(); });
      if (stop_) return;
      slot = &slots_[started_++];
    }
    try {
      LocalizedChunk& r = slot->result;
      on_frames(r.first, r.count, [&] {
        r.detected = engine.localize(slot->chunk, r.candidates, r.origins, r.fits);
        if (finish_) finish_(r);
      });
    } catch (...) {
      slot->error = std::current_exception();
    }
    {
      std::lock_guard lock(mutex_);
      slot->done = true;
    }
    changed_.notify_all();
  }
}

}  // namespace nanoscopy
