// sofi on several engines (--device cuda:all, sofi/split_run.hpp), run here
// with CPU engines: where the range is cut, and the images against one engine
// (to the rounding of the order the block values are added in) and against
// `sofi --partial` runs over the same parts merged as `sofi merge` merges them
// (bit for bit).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/sofi/merge.hpp"
#include "nanoscopy/sofi/runner.hpp"
#include "nanoscopy/sofi/split_run.hpp"

using namespace nanoscopy;

namespace {

// A float32 stack in memory; readers of the same pixels share them.
class MemoryStack final : public StackReader {
 public:
  MemoryStack(std::int64_t w, std::int64_t h, std::shared_ptr<const std::vector<float>> pixels)
      : pixels_(std::move(pixels)) {
    info_.width = w;
    info_.height = h;
    info_.frames = static_cast<std::int64_t>(pixels_->size()) / (w * h);
    info_.type = PixelType::f32;
    info_.path = "memory";
  }
  void read_raw(std::int64_t first, std::int64_t count, void* dst) override {
    const auto n = info_.pixels_per_frame();
    std::copy_n(pixels_->begin() + first * n, count * n, static_cast<float*>(dst));
  }

 private:
  std::shared_ptr<const std::vector<float>> pixels_;
};

std::shared_ptr<const std::vector<float>> blinking(std::int64_t w, std::int64_t h, std::int64_t frames) {
  std::mt19937_64 rng(11);
  std::poisson_distribution<int> noise(150);
  std::bernoulli_distribution flip(0.2);
  auto px = std::make_shared<std::vector<float>>(static_cast<std::size_t>(w * h * frames));
  std::vector<bool> on(static_cast<std::size_t>(w * h));
  for (std::int64_t t = 0; t < frames; ++t)
    for (std::int64_t p = 0; p < w * h; ++p) {
      const auto i = static_cast<std::size_t>(p);
      if (flip(rng)) on[i] = !on[i];
      (*px)[static_cast<std::size_t>(t * w * h + p)] = static_cast<float>(noise(rng) + (on[i] ? 800 : 0));
    }
  return px;
}

struct Setup {
  std::int64_t w = 9, h = 7, frames = 1030;
  std::shared_ptr<const std::vector<float>> pixels = blinking(w, h, frames);
  SofiProblem problem;
  explicit Setup(std::vector<int> orders) {
    SofiProblemOptions o;
    o.orders = std::move(orders);
    problem = make_sofi_problem(w, h, o);
  }
  SofiRunInput input(MemoryStack& stack, std::int64_t block, std::int64_t begin, std::int64_t end) const {
    SofiRunInput in;
    in.reader = &stack;
    in.sequence = {0, 1, frames};
    in.begin = begin;
    in.end = end;
    in.block = block;
    in.quiet = true;
    return in;
  }
  // One engine over [begin, end).
  SofiAccumulation one(std::int64_t block, std::int64_t begin, std::int64_t end) const {
    MemoryStack stack(w, h, pixels);
    auto engine = make_cpu_sofi_engine(problem, 64 + problem.max_lag, 1);
    return run_sofi(problem, *engine, input(stack, block, begin, end));
  }
  // `n` engines, each with its own reader, over [begin, end).
  SofiAccumulation split(int n, std::int64_t block, std::int64_t begin, std::int64_t end) const {
    std::vector<std::unique_ptr<MemoryStack>> stacks;
    std::vector<std::unique_ptr<SofiEngine>> engines;
    std::vector<SofiEngine*> parts;
    std::vector<SofiRunInput> inputs;
    for (int g = 0; g < n; ++g) {
      stacks.push_back(std::make_unique<MemoryStack>(w, h, pixels));
      engines.push_back(make_cpu_sofi_engine(problem, 64 + problem.max_lag, 1));
      parts.push_back(engines.back().get());
      inputs.push_back(input(*stacks.back(), block, begin, end));
    }
    return run_sofi_split(problem, parts, inputs);
  }
};

double max_rel_diff(const SofiImages& a, const SofiImages& b) {
  double worst = 0;
  for (std::size_t p = 0; p < a.planes.size(); ++p)
    for (std::size_t i = 0; i < a.planes[p].size(); ++i) {
      const double x = a.planes[p][i], y = b.planes[p][i];
      worst = std::max(worst, std::abs(x - y) / std::max(std::abs(x), 1e-30));
    }
  return worst;
}

bool identical(const SofiImages& a, const SofiImages& b) {
  return a.planes == b.planes && a.mean == b.mean && a.blocks == b.blocks && a.frames == b.frames;
}

}  // namespace

TEST_CASE("sofi split points: on block edges when there are enough, else even cuts; never an empty part") {
  const SofiBlocks blocks{1030, 200};  // edges 200, 400, 600, 800; the last block 230
  CHECK(sofi_split_points(blocks, 0, 1030, 1) == std::vector<std::int64_t>{0, 1030});
  CHECK(sofi_split_points(blocks, 0, 1030, 2) == std::vector<std::int64_t>{0, 600, 1030});
  CHECK(sofi_split_points(blocks, 0, 1030, 3) == std::vector<std::int64_t>{0, 400, 600, 1030});
  CHECK(sofi_split_points(blocks, 0, 1030, 5) == std::vector<std::int64_t>{0, 200, 400, 600, 800, 1030});
  CHECK(sofi_split_points(blocks, 0, 1030, 6) == std::vector<std::int64_t>{0, 171, 343, 515, 686, 858, 1030});
  CHECK(sofi_split_points(SofiBlocks{1030, 1030}, 0, 1030, 2) == std::vector<std::int64_t>{0, 515, 1030});
  CHECK(sofi_split_points(blocks, 150, 650, 2) == std::vector<std::int64_t>{150, 400, 650});  // a --partial range
  CHECK(sofi_split_points(blocks, 10, 12, 4) == std::vector<std::int64_t>{10, 11, 12});
}

TEST_CASE("sofi on 2 and 3 engines: the images of one engine, and bit for bit those of the parts merged") {
  const Setup s({2, 3, 4});
  const std::int64_t block = 200;
  const SofiImages one = finish_images(s.problem, s.one(block, 0, s.frames).finished);
  for (int n : {2, 3}) {
    CAPTURE(n);
    const SofiImages split = finish_images(s.problem, s.split(n, block, 0, s.frames).finished);
    CHECK(split.blocks == one.blocks);
    CHECK(split.frames == one.frames);
    CHECK(max_rel_diff(split, one) < 1e-6);  // the order the block values are added in
    // The same parts run one by one and merged as sofi merge merges part files.
    const auto points = sofi_split_points(SofiBlocks{s.frames, block}, 0, s.frames, n);
    SofiAccumulation merged;
    merged.finished.reset(s.problem);
    for (std::size_t g = 0; g + 1 < points.size(); ++g)
      merge_accumulation(merged, s.one(block, points[g], points[g + 1]), "part");
    close_open_blocks(s.problem, SofiBlocks{s.frames, block}, merged, "merge", 1);
    CHECK(identical(split, finish_images(s.problem, merged.finished)));
  }
}

TEST_CASE("sofi on 2 engines with one block (--bleach-correction none): the block cut and finished on the host") {
  const Setup s({2, 3});
  const SofiImages one = finish_images(s.problem, s.one(s.frames, 0, s.frames).finished);
  const SofiImages split = finish_images(s.problem, s.split(2, s.frames, 0, s.frames).finished);
  CHECK(split.blocks == 1);
  CHECK(max_rel_diff(split, one) < 1e-6);
}

TEST_CASE("sofi on 2 engines over a --partial range: the blocks cut by its edges stay open, as with one engine") {
  const Setup s({2});
  const SofiAccumulation one = s.one(200, 150, 650);
  const SofiAccumulation split = s.split(2, 200, 150, 650);
  CHECK(split.finished.blocks == one.finished.blocks);
  REQUIRE(split.open.size() == one.open.size());
  for (std::size_t i = 0; i < one.open.size(); ++i) {
    CHECK(split.open[i].block == one.open[i].block);
    CHECK(split.open[i].frames == one.open[i].frames);
    CHECK(split.open[i].tuples == one.open[i].tuples);
  }
}
