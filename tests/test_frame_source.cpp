// The frame source every tool streams through (io/frame_source.hpp): chunks in
// order with the last one short, u16 kept or converted to f32, a read error
// reaching the consumer with its type and message after the chunks before it,
// prefetch bounded, parallel readers and strided spans reading the same frames.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/frame_source.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/sofi/runner.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;

namespace {

// A uint16 stack in memory: pixel i of frame t is t * 100 + i. Counts the frames
// read (by it and the readers another_reader() made) and the threads that read,
// and fails on frame `bad` the way a file reader does.
class CountingStack final : public StackReader {
 public:
  CountingStack(std::int64_t frames, std::int64_t w, std::int64_t h, std::int64_t bad = -1)
      : tally_(std::make_shared<Tally>()), bad_(bad) {
    info_.frames = frames;
    info_.width = w;
    info_.height = h;
    info_.type = PixelType::u16;
    info_.path = "memory.tif";
  }
  void read_raw(std::int64_t first, std::int64_t count, void* dst) override {
    {
      std::lock_guard lock(tally_->mutex);
      tally_->threads.insert(std::this_thread::get_id());
    }
    if (bad_ >= first && bad_ < first + count)
      throw InputError(info_.path, "frame " + std::to_string(bad_) + ": cannot decode the strip");
    auto* out = static_cast<std::uint16_t*>(dst);
    const std::int64_t n = info_.pixels_per_frame();
    for (std::int64_t t = 0; t < count; ++t)
      for (std::int64_t i = 0; i < n; ++i) out[t * n + i] = value(first + t, i);
    tally_->frames += count;
  }
  void will_read(std::int64_t first, std::int64_t count) override {
    std::lock_guard lock(tally_->mutex);
    tally_->hints.push_back({first, count});
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> hints() const {
    std::lock_guard lock(tally_->mutex);
    return tally_->hints;
  }
  std::unique_ptr<StackReader> another_reader() const override {
    return std::unique_ptr<StackReader>(new CountingStack(*this));  // the copy constructor is private
  }
  static std::uint16_t value(std::int64_t t, std::int64_t i) { return static_cast<std::uint16_t>(t * 100 + i); }
  std::int64_t frames_read() const { return tally_->frames; }
  std::size_t reading_threads() const {
    std::lock_guard lock(tally_->mutex);
    return tally_->threads.size();
  }

 private:
  struct Tally {
    std::atomic<std::int64_t> frames{0};
    mutable std::mutex mutex;
    std::set<std::thread::id> threads;
    std::vector<std::pair<std::int64_t, std::int64_t>> hints;  // will_read(first, count) calls
  };
  CountingStack(const CountingStack& other) : StackReader(other), tally_(other.tally_), bad_(other.bad_) {}
  std::shared_ptr<Tally> tally_;  // shared with the readers another_reader() made
  std::int64_t bad_;
};

struct Seen {
  std::int64_t first, count;
};

std::vector<Seen> walk(FrameSource& source, CountingStack& stack, PixelType type) {
  std::vector<Seen> seen;
  FrameChunk c;
  const std::int64_t n = stack.info().pixels_per_frame();
  while (source.next(c)) {
    REQUIRE(c.type == type);
    for (std::int64_t t = 0; t < c.count; ++t)
      for (std::int64_t i = 0; i < n; ++i) {
        const auto want = CountingStack::value(c.first + t, i);
        if (type == PixelType::u16)
          REQUIRE(static_cast<const std::uint16_t*>(c.pixels)[t * n + i] == want);
        else
          REQUIRE(c.floats()[static_cast<std::size_t>(t * n + i)] == static_cast<float>(want));
      }
    seen.push_back({c.first, c.count});
  }
  return seen;
}

}  // namespace

TEST_CASE("frame source: chunks in order, the last one short, u16 kept and f32 converted") {
  for (const int prefetch : {0, 1, 3})
    for (const int threads : {1, 2, 4})
    for (const PixelType type : {PixelType::u16, PixelType::f32}) {
      CAPTURE(prefetch);
      CAPTURE(threads);
      CountingStack stack(23, 3, 2);
      FrameSourceOptions o;
      o.type = type;
      o.prefetch = prefetch;
      o.read_threads = threads;
      FrameSource source(stack, {2, 21}, 5, o);
      const auto seen = walk(source, stack, type);
      REQUIRE(seen.size() == 4);
      CHECK(seen[0].first == 2);
      CHECK(seen[1].first == 7);
      CHECK(seen[2].first == 12);
      CHECK(seen[3].first == 17);
      CHECK(seen[3].count == 4);  // 2..20: 5 + 5 + 5 + 4
      CHECK(stack.frames_read() == 19);
      CHECK(source.read_seconds() >= 0);
      FrameChunk c;
      CHECK_FALSE(source.next(c));  // stays at the end
      CHECK(source.read_threads() == std::min(threads, 2));  // chunks of 5 frames: two frames a reader at least
    }
}

TEST_CASE("frame source: an empty range gives no chunk; uint16 only from a uint16 stack") {
  CountingStack stack(4, 2, 2);
  FrameSource source(stack, {3, 3}, 8);
  FrameChunk c;
  CHECK_FALSE(source.next(c));
  CHECK(stack.frames_read() == 0);

  struct FloatStack final : StackReader {
    FloatStack() { info_.frames = 1, info_.width = info_.height = 1, info_.type = PixelType::f32; }
    void read_raw(std::int64_t, std::int64_t, void* dst) override { *static_cast<float*>(dst) = 0.5f; }
  } floats;
  FrameSourceOptions o;
  o.type = PixelType::u16;
  CHECK_THROWS_AS(FrameSource(floats, {0, 1}, 1, o), std::logic_error);
}

TEST_CASE("frame source: a read error reaches the consumer after the chunks before it, type and message kept") {
  for (const int prefetch : {0, 2})
  for (const int threads : {1, 2}) {
    CAPTURE(prefetch);
    CAPTURE(threads);
    CountingStack stack(40, 2, 2, 13);
    FrameSourceOptions o;
    o.prefetch = prefetch;
    o.read_threads = threads;
    FrameSource source(stack, {0, 40}, 4, o);
    FrameChunk c;
    std::vector<std::int64_t> firsts;
    std::string message;
    try {
      while (source.next(c)) firsts.push_back(c.first);
      FAIL("no error");
    } catch (const InputError& e) {
      message = e.message();
    }
    CHECK(firsts == std::vector<std::int64_t>{0, 4, 8});
    CHECK(message == "memory.tif: frame 13: cannot decode the strip");
  }
}

TEST_CASE("frame source: the reader runs at most `prefetch` chunks ahead") {
  CountingStack stack(1000, 4, 4);
  std::atomic<int> buffers{0};
  FrameSourceOptions o;
  o.prefetch = 2;
  o.read_threads = 3;
  o.allocate = [&](std::size_t bytes) {
    ++buffers;
    return allocate_plain_host(bytes);
  };
  FrameSource source(stack, {0, 1000}, 10, o);
  CHECK(buffers == 3);  // the consumer's chunk + two read ahead: never the whole stack
  FrameChunk c;
  for (int k = 0; k < 5; ++k) {
    REQUIRE(source.next(c));
    // Give the reader time to run as far ahead as it may.
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    CHECK(stack.frames_read() <= (k + 1 + 2) * 10);
    CHECK(stack.frames_read() >= (k + 1) * 10);
  }
  CHECK(buffers == 3);
  // Each 30 ms sleep above, the reader (its chunks read in microseconds) waited for a free buffer: the profile's
  // sign that reading is not what holds the consumer up.
  CHECK(source.wait_seconds() >= 0.05);
  CHECK(source.wait_seconds() < 10.0);
}  // leaving with chunks unread: the destructor stops the reader

TEST_CASE("frame reader: parallel readers and a frame step read the same frames") {
  for (const std::int64_t step : {1, 2, 3}) {
    CAPTURE(step);
    CountingStack single(60, 3, 3), parallel(60, 3, 3);
    const std::int64_t count = 17, first = 4, n = 9;
    std::vector<std::uint16_t> one(static_cast<std::size_t>(count * n)), four(one.size());
    FrameReader(single, 1, step).read(first, count, PixelType::u16, one.data());
    FrameReader four_readers(parallel, 4, step);
    CHECK(four_readers.threads() == 4);
    four_readers.read(first, count, PixelType::u16, four.data());
    CHECK(one == four);
    CHECK(single.reading_threads() == 1);
    CHECK(parallel.reading_threads() == 4);  // each reader took a part, in its own thread
    for (std::int64_t j = 0; j < count; ++j) CHECK(one[static_cast<std::size_t>(j * n + 5)] == CountingStack::value(first + j * step, 5));
    std::vector<float> f(one.size());
    four_readers.read(first, count, PixelType::f32, f.data());  // the same workers, a second span
    for (std::size_t i = 0; i < f.size(); ++i) REQUIRE(f[i] == static_cast<float>(one[i]));
    // Too few frames for four parts: read by the caller alone.
    four_readers.read(first, 7, PixelType::u16, four.data());
    CHECK(std::equal(four.begin(), four.begin() + 7 * n, one.begin()));
  }
  // An error in one part reaches the caller with its message, the lowest frame's first.
  CountingStack broken(60, 2, 2, 30);
  std::vector<std::uint16_t> dst(40 * 4);
  FrameReader reader(broken, 2);
  CHECK_THROWS_WITH_AS(reader.read(0, 40, PixelType::u16, dst.data()),
                       doctest::Contains("frame 30: cannot decode the strip"), InputError);
  reader.read(0, 20, PixelType::u16, dst.data());  // the workers still serve the next span
  CHECK(dst[19 * 4] == CountingStack::value(19, 0));
}

TEST_CASE("frame reader: a contiguous span after a slow one is announced once (will_read) before its parts are read") {
  CountingStack stack(60, 3, 3);
  std::vector<std::uint16_t> dst(20 * 9);
  FrameReader four(stack, 4);
  four.read(4, 17, PixelType::u16, dst.data());
  four.read(30, 3, PixelType::u16, dst.data());  // too short for parts: still one span
  // (The first span follows none, and a few hundred bytes read with thread wake-ups come far slower than a disk.)
  CHECK(stack.hints() == std::vector<std::pair<std::int64_t, std::int64_t>>{{4, 17}, {30, 3}});
  CountingStack strided(60, 3, 3);
  FrameReader(strided, 4, 2).read(0, 17, PixelType::u16, dst.data());
  CHECK(strided.hints().empty());  // every other frame: no contiguous span to announce
}

TEST_CASE("will_read on a TIFF stack: any span is a harmless hint, the frames read the same after it") {
  test::TempDir dir;
  const std::string path = (dir / "hint.tif").string();
  std::vector<std::vector<float>> frames(10, std::vector<float>(12));
  std::vector<const float*> pages;
  for (std::size_t t = 0; t < frames.size(); ++t) {
    for (std::size_t i = 0; i < 12; ++i) frames[t][i] = static_cast<float>(t * 100 + i);
    pages.push_back(frames[t].data());
  }
  write_float_pages(path, 4, 3, pages);
  auto stack = open_stack(path);
  for (const auto& [first, count] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {2, 5}, {0, 10}, {0, 0}, {-1, 3}, {8, 100}, {10, 1}})
    CHECK_NOTHROW(stack->will_read(first, count));
  std::vector<float> got(5 * 12);
  stack->read_float(2, 5, got.data());
  for (std::size_t t = 0; t < 5; ++t)
    for (std::size_t i = 0; i < 12; ++i) REQUIRE(got[t * 12 + i] == frames[t + 2][i]);
}

TEST_CASE("frame reader: a format without a second reader reads alone; 0 threads means auto") {
  struct OneReader final : StackReader {
    OneReader() { info_.frames = 8, info_.width = info_.height = 2, info_.type = PixelType::u16; }
    void read_raw(std::int64_t, std::int64_t count, void* dst) override {
      std::fill_n(static_cast<std::uint16_t*>(dst), count * 4, std::uint16_t{7});
    }
  } one;
  CHECK(FrameReader(one, 4).threads() == 1);
  CHECK(resolve_read_threads(3) == 3);
  CHECK(resolve_read_threads(0) >= 1);
  CHECK(resolve_read_threads(0) <= 8);
  CountingStack stack(8, 2, 2);
  CHECK(FrameReader(stack, 0).threads() == resolve_read_threads(0));
}

TEST_CASE("sofi through the frame reader: four read threads and odd/even sequences give bit-identical sums") {
  // A uint16 stack of 6x5 frames whose values vary in time and space.
  const std::int64_t frames = 120;
  CountingStack main(frames, 6, 5);
  SofiProblemOptions options;
  options.orders = {2, 3};
  const SofiProblem plan = make_sofi_problem(6, 5, options);
  for (const std::int64_t step : {1, 2}) {
    CAPTURE(step);
    auto run = [&](int threads) {
      auto engine = make_cpu_sofi_engine(plan, 16 + plan.max_lag, 1);
      SofiRunInput in;
      in.reader = &main;
      in.read_threads = threads;
      in.sequence = {1, step, (frames - 1) / step};
      in.begin = 3;  // blocks cut by the range edges too
      in.end = in.sequence.count - 2;
      in.block = 20;
      in.quiet = true;
      return run_sofi(plan, *engine, in);
    };
    const SofiAccumulation one = run(1), four = run(4);
    CHECK(main.reading_threads() >= 4);  // the test's thread and three workers
    CHECK(one.finished.blocks == four.finished.blocks);
    CHECK(one.finished.frames == four.finished.frames);
    CHECK(one.finished.planes == four.finished.planes);
    CHECK(one.finished.frame_sum == four.finished.frame_sum);
    REQUIRE(one.open.size() == four.open.size());
    for (std::size_t k = 0; k < one.open.size(); ++k) {
      CHECK(one.open[k].terms == four.open[k].terms);
      CHECK(one.open[k].frame_sum == four.open[k].frame_sum);
    }
  }
}
