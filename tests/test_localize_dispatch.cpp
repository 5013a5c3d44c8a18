// fit2d on several engines (--device cuda:all, loc/localize_dispatch.hpp), run
// here with CPU engines: the same localizations, byte for byte and in frame
// order, as one engine; an engine's error reported in chunk order; and the
// frame source's `hold` (chunks the consumer keeps while they are localized).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/frame_source.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/loc/localize_dispatch.hpp"
#include "nanoscopy/loc/pipeline.hpp"
#include "nanoscopy/sim/movie.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
namespace fs = std::filesystem;

namespace {

// A CPU engine that can be made slow on some chunks (so later chunks finish
// first) or fail on one (a DeviceError, as a GPU engine reports one).
class TestEngine final : public LocalizeEngine {
 public:
  TestEngine(int id, std::int64_t fail_at = -1) : id_(id), fail_at_(fail_at), cpu_(make_cpu_localize_engine({}, 1)) {}
  std::int64_t localize(const ChunkPixels& chunk, std::vector<Candidate>& candidates, std::vector<RoiOrigin>& origins,
                        std::vector<FitResult>& fits) override {
    if (chunk.first_frame == fail_at_) throw DeviceError("test:" + std::to_string(id_), "out of memory");
    if ((chunk.first_frame / chunk.count) % 3 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(15));
    ++chunks;
    return cpu_->localize(chunk, candidates, origins, fits);
  }
  HostBuffer allocate_host(std::size_t bytes) override { return cpu_->allocate_host(bytes); }
  std::string name() const override { return "test:" + std::to_string(id_); }
  int chunks = 0;

 private:
  int id_;
  std::int64_t fail_at_;
  std::unique_ptr<LocalizeEngine> cpu_;
};

struct Movie {
  fs::path dir, stack;
  explicit Movie(const std::string& name) : dir(fs::temp_directory_path() / ("nanoscopy-dispatch-" + name)) {
    fs::create_directories(dir);
    stack = dir / "movie.tif";
    MovieSettings m;
    m.frames = 40;
    m.width = 48;
    m.height = 40;
    m.emitters = 40;
    m.on_fraction = 0.3;
    m.seed = 7;
    simulate_movie(m, stack.string());
  }
  ~Movie() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

// The pipeline over `engines` into a CSV file; its bytes, and the frames in sink order.
std::string localize_to_csv(const Movie& movie, std::vector<LocalizeEngine*> engines, const std::string& name,
                            std::vector<std::int64_t>* frames = nullptr) {
  auto reader = open_stack(movie.stack.string());
  PipelineSettings settings;
  settings.chunk_frames = 3;  // 14 chunks, the last of 1 frame
  settings.quiet = true;
  const fs::path csv = movie.dir / (name + ".csv");
  auto writer = create_localization_writer(csv.string(), "", writer_context(reader->info(), settings.camera));
  run_localization(*reader, FrameRange::Resolved{0, reader->info().frames}, engines, settings,
                   [&](std::span<const Localization> locs) {
                     writer->append(locs);
                     if (frames)
                       for (const auto& l : locs) frames->push_back(l.frame);
                   });
  writer->finish();
  return nanoscopy::test::read_file(csv);
}

}  // namespace

TEST_CASE("fit2d pipeline on 3 engines: byte-identical output to one engine, in frame order") {
  const Movie movie("same");
  TestEngine one(0);
  const std::string reference = localize_to_csv(movie, {&one}, "one");
  REQUIRE(reference.size() > 2000);  // localizations were found: the comparison is not vacuous

  TestEngine a(0), b(1), c(2);
  std::vector<std::int64_t> frames;
  const std::string three = localize_to_csv(movie, {&a, &b, &c}, "three", &frames);
  CHECK(three == reference);
  CHECK(std::is_sorted(frames.begin(), frames.end()));
  CHECK(a.chunks + b.chunks + c.chunks == 14);
  CHECK(a.chunks > 0);  // the work was shared
  CHECK(b.chunks + c.chunks > 0);
}

TEST_CASE("localize dispatcher: results in the order given, an engine's error at its chunk") {
  const Movie movie("error");
  auto reader = open_stack(movie.stack.string());
  const StackInfo& info = reader->info();
  std::vector<std::uint16_t> pixels(static_cast<std::size_t>(info.frames * info.pixels_per_frame()));
  reader->read_raw(0, info.frames, pixels.data());
  auto chunk = [&](std::int64_t first) {
    return ChunkPixels{pixels.data() + first * info.pixels_per_frame(), PixelType::u16, first, 4,
                       static_cast<int>(info.width), static_cast<int>(info.height)};
  };
  TestEngine a(0, 20), b(1, 20);  // whichever gets frames 20:24 fails
  LocalizeEngine* engines[] = {&a, &b};
  LocalizeDispatcher dispatcher(engines);
  CHECK(dispatcher.capacity() == 4);
  std::vector<std::int64_t> taken;
  std::int64_t next = 0;
  auto fill = [&] {
    while (dispatcher.in_flight() < dispatcher.capacity() && next < info.frames) {
      dispatcher.submit(chunk(next));
      next += 4;
    }
  };
  fill();
  CHECK_THROWS_AS(dispatcher.submit(chunk(0)), std::logic_error);  // full
  for (;;) {
    try {
      const LocalizedChunk r = dispatcher.take();
      taken.push_back(r.first);
      for (const auto& c : r.candidates) CHECK((c.frame >= r.first && c.frame < r.first + r.count));
    } catch (const DeviceError& e) {
      CHECK(nanoscopy::test::contains(e.where(), "frames 20:24"));  // named as fit2d names a failed chunk
      break;
    }
    fill();
  }
  CHECK(taken == std::vector<std::int64_t>{0, 4, 8, 12, 16});
  // The dispatcher stops with chunks still in flight.
}

TEST_CASE("fit2d pipeline on 2 engines: an engine error ends the run after the chunks before it") {
  const Movie movie("pipeline-error");
  TestEngine a(0, 9), b(1, 9);  // chunks of 3: the one from frame 9
  auto reader = open_stack(movie.stack.string());
  PipelineSettings settings;
  settings.chunk_frames = 3;
  settings.quiet = true;
  std::int64_t last_frame = -1;
  const auto e = nanoscopy::test::expect_error<DeviceError>([&] {
    run_localization(*reader, FrameRange::Resolved{0, reader->info().frames}, std::vector<LocalizeEngine*>{&a, &b},
                     settings, [&](std::span<const Localization> locs) {
                       for (const auto& l : locs) last_frame = std::max(last_frame, l.frame);
                     });
  });
  CHECK(nanoscopy::test::contains(e.where(), "frames 9:12"));
  CHECK(last_frame < 9);
  CHECK(last_frame >= 0);
}

TEST_CASE("frame source: with hold = 3 a chunk stays valid for 3 more next() calls") {
  const Movie movie("hold");
  auto reader = open_stack(movie.stack.string());
  FrameSourceOptions options;
  options.type = PixelType::u16;
  options.prefetch = 2;
  options.hold = 3;
  FrameSource source(*reader, FrameRange::Resolved{0, reader->info().frames}, 2, options);
  auto check_reader = open_stack(movie.stack.string());
  const auto px = static_cast<std::size_t>(reader->info().pixels_per_frame());
  std::vector<FrameChunk> held;
  FrameChunk c;
  std::vector<std::uint16_t> expect(2 * px);
  while (source.next(c)) {
    held.push_back(c);
    if (held.size() > 3) held.erase(held.begin());
    for (const auto& h : held) {  // every chunk held still has its own frames
      check_reader->read_raw(h.first, h.count, expect.data());
      CHECK(std::equal(expect.begin(), expect.begin() + static_cast<std::ptrdiff_t>(h.count * px),
                       static_cast<const std::uint16_t*>(h.pixels)));
    }
  }
  options.prefetch = 0;  // holding more than one needs the reader thread
  CHECK_THROWS_AS(FrameSource(*reader, FrameRange::Resolved{0, 4}, 2, options), std::logic_error);
}

TEST_CASE("engines per GPU: two where at least 8 threads read, else one") {
  PipelineSettings settings;
  settings.read_threads = 8;
  CHECK(localize_engines_per_gpu(settings) == 2);
  settings.read_threads = 12;
  CHECK(localize_engines_per_gpu(settings) == 2);
  settings.read_threads = 4;
  CHECK(localize_engines_per_gpu(settings) == 1);
  settings.read_threads = 0;  // auto: half the hardware threads, at most 8
  CHECK(localize_engines_per_gpu(settings) == (resolve_read_threads(0) >= 8 ? 2 : 1));
}
