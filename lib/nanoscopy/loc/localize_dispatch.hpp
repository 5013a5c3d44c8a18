// fit2d on several GPUs (--device cuda:all): chunks of frames handed to
// whichever of N localize engines is free, each engine in its own host thread
// (its own stream and pinned buffers), the results taken back in the order the
// chunks were given. Every engine runs the same detect-cut-fit on its chunk, so
// the localizations, in chunk order, are those of one engine: fit2d's output is
// byte-identical with one GPU or several. Generic over LocalizeEngine, so it
// runs (and is tested) with CPU engines too.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "nanoscopy/loc/localization.hpp"
#include "nanoscopy/loc/localize_engine.hpp"

namespace nanoscopy {

// What one engine made of one chunk (LocalizeEngine::localize's outputs).
struct LocalizedChunk {
  std::int64_t first = 0, count = 0;  // the chunk's stack frames
  std::int64_t detected = 0;
  std::vector<Candidate> candidates;
  std::vector<RoiOrigin> origins;
  std::vector<FitResult> fits;
  // Filled by the dispatcher's `finish` step, when one is given (fit2d's pipeline: the fits as localizations).
  std::vector<Localization> accepted;
  std::int64_t rejected = 0;
};

class LocalizeDispatcher {
 public:
  // `engines` (not owned, at least one) may be of the same GPU twice: each is
  // used by one thread only. `per_engine`: chunks in flight per engine (queued
  // or being localized), so a fast engine need not wait while the oldest
  // chunk, which must be taken first, is finished by a slower one. `finish`,
  // when given, runs on the engine's thread right after each chunk's localize
  // (several chunks at once: it must only touch its chunk); its error is the
  // chunk's, rethrown by take() in chunk order.
  using Finish = std::function<void(LocalizedChunk&)>;
  explicit LocalizeDispatcher(std::span<LocalizeEngine* const> engines, int per_engine = 2, Finish finish = {});
  ~LocalizeDispatcher();  // lets the running chunks end, drops the rest, joins the threads
  LocalizeDispatcher(const LocalizeDispatcher&) = delete;
  LocalizeDispatcher& operator=(const LocalizeDispatcher&) = delete;

  // Chunks that may be in flight at once (submitted, not yet taken).
  int capacity() const { return capacity_; }
  int in_flight() const;

  // Queues `chunk` for the next free engine. Its pixels must stay valid until
  // its result is taken. std::logic_error when capacity() chunks are in flight.
  void submit(const ChunkPixels& chunk);

  // The oldest chunk's result, waiting for it; rethrows the error its engine
  // threw (DeviceError naming the frames, as fit2d's pipeline reports them),
  // so errors come in chunk order. std::logic_error when none is in flight.
  LocalizedChunk take();

 private:
  struct Slot {
    ChunkPixels chunk;
    LocalizedChunk result;
    std::exception_ptr error;
    bool done = false;
  };
  void work(LocalizeEngine& engine);  // one engine's thread

  int capacity_;
  Finish finish_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  // In flight, oldest first: a deque keeps references to its elements while
  // it grows at the back and shrinks at the front, so a worker fills its slot
  // outside the lock.
  std::deque<Slot> slots_;
  std::size_t started_ = 0;  // slots_[0, started_) are taken by a worker
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace nanoscopy
