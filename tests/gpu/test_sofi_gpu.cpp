// The CUDA SOFI engine against the CPU reference engine on the same frames,
// driven by the same call sequence (blocks split into chunks with the lag
// overlap). G = F - K is exact in double on both, the per-pixel products are
// formed in another association order on the auto path and sums are added in
// other groupings (time segments, fused multiply-adds), so raw sums agree to
// double rounding: max |gpu - cpu| <= 1e-9 max |cpu| per term / frame-sum
// array. The finishing math is cumulant_math.hpp's on both sides (nvcc may
// contract its multiply-adds), so plane sums meet the same bound per plane.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/device.hpp"
#include "nanoscopy/config.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/pixel_type.hpp"
#include "nanoscopy/sofi/engine.hpp"
#include "nanoscopy/sofi/problem.hpp"

#if NANOSCOPY_HAVE_CUDA
#include "sofi/engine_cuda.hpp"
#endif
#include "support/test_support.hpp"

using namespace nanoscopy;

namespace {

constexpr double rel_tol = 1e-9;

Device gpu_device() { return select_device(DeviceRequest::parse("cuda"), true); }

int cpu_threads() { return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u)); }

// `count` frames: a Poisson background of 100..2000 counts per pixel plus
// blinking Gaussian spots (on/off per frame), as float values (integers for uint16).
std::vector<float> test_frames(std::int64_t w, std::int64_t h, std::int64_t count, bool integer, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::int64_t n = w * h;
  std::uniform_real_distribution<double> bg(100.0, 2000.0), ux(0.0, static_cast<double>(w)),
      uy(0.0, static_cast<double>(h)), u01(0.0, 1.0);
  std::vector<double> base(static_cast<std::size_t>(n));
  for (auto& b : base) b = bg(rng);
  struct Spot {
    double x, y, amp;
    bool on;
  };
  std::vector<Spot> spots(static_cast<std::size_t>(std::max<std::int64_t>(3, n / 150)));
  for (auto& s : spots) s = {ux(rng), uy(rng), 300.0 + 700.0 * u01(rng), false};
  std::vector<float> frames(static_cast<std::size_t>(n * count));
  std::vector<double> mean(static_cast<std::size_t>(n));
  std::normal_distribution<double> read(0.0, 3.0);
  for (std::int64_t f = 0; f < count; ++f) {
    mean = base;
    for (auto& s : spots) {
      s.on = s.on ? u01(rng) < 0.7 : u01(rng) < 0.2;
      if (!s.on) continue;
      for (std::int64_t y = std::max<std::int64_t>(0, static_cast<std::int64_t>(s.y) - 5);
           y < std::min<std::int64_t>(h, static_cast<std::int64_t>(s.y) + 6); ++y)
        for (std::int64_t x = std::max<std::int64_t>(0, static_cast<std::int64_t>(s.x) - 5);
             x < std::min<std::int64_t>(w, static_cast<std::int64_t>(s.x) + 6); ++x) {
          const double dx = static_cast<double>(x) + 0.5 - s.x, dy = static_cast<double>(y) + 0.5 - s.y;
          mean[static_cast<std::size_t>(y * w + x)] += s.amp * std::exp(-(dx * dx + dy * dy) / (2 * 1.5 * 1.5));
        }
    }
    for (std::int64_t i = 0; i < n; ++i) {
      std::poisson_distribution<int> shot(mean[static_cast<std::size_t>(i)]);
      double v = shot(rng);
      if (!integer) v += read(rng);
      frames[static_cast<std::size_t>(f * n + i)] = static_cast<float>(v);
    }
  }
  return frames;
}

// One run's call sequence, as the runner makes it: blocks [b0, b1) of the
// frame array, chunks of at most `chunk_tuples` frames (and at most capacity -
// max_lag), each with tuples [c, min(c + n, b1 - min_window)) (every term to its
// own window, t + window < b1) and loading frames [c, min(max(c + n, tuple
// end + max_lag), b1)). `raw[b]`: the block is read back with read_block()
// instead of finished.
struct Schedule {
  std::vector<std::int64_t> block_edges;  // b0 = edges[0] < edges[1] < ...
  std::int64_t chunk_tuples = 0;
  std::vector<bool> raw;  // per block: read_block() instead of finish_block()
};

// Feeds `frames` (float values; converted to uint16 for PixelType::u16) to
// `engine`; returns the raw sums of the blocks read back with read_block().
std::vector<BlockSums> feed(SofiEngine& engine, const SofiProblem& plan, const std::vector<float>& frames, PixelType type,
                            const Schedule& sched, std::vector<BlockSums>* every_block = nullptr) {
  const std::int64_t n = plan.pixels();
  const std::int64_t cap = engine.chunk_capacity();
  REQUIRE(cap > plan.max_lag);
  const std::int64_t step = std::max<std::int64_t>(1, std::min(sched.chunk_tuples, cap - plan.max_lag));
  std::vector<BlockSums> raws;
  for (std::size_t b = 0; b + 1 < sched.block_edges.size(); ++b) {
    const std::int64_t b0 = sched.block_edges[b], b1 = sched.block_edges[b + 1];
    const std::int64_t tuple_end = b1 - plan.max_lag;  // the widest window's
    REQUIRE(tuple_end > b0);
    engine.start_block(std::span<const float>(frames).subspan(static_cast<std::size_t>(b0 * n),
                                                              static_cast<std::size_t>(n)));
    for (std::int64_t c = b0; c < b1; c += step) {
      const std::int64_t se = std::min(c + step, b1);
      const std::int64_t te = std::min(se, b1 - plan.min_window);
      const std::int64_t fe = std::min(std::max(se, te + plan.max_lag), b1);
      SofiChunk chunk;
      chunk.type = type;
      chunk.first = c;
      chunk.count = fe - c;
      chunk.tuple_end = te;
      chunk.sum_end = se;
      chunk.block_end = b1;
      void* buf = engine.input_buffer(type);
      const float* src = frames.data() + c * n;
      const std::size_t values = static_cast<std::size_t>(chunk.count * n);
      if (type == PixelType::u16) {
        auto* dst = static_cast<std::uint16_t*>(buf);
        for (std::size_t i = 0; i < values; ++i) dst[i] = static_cast<std::uint16_t>(src[i]);
      } else {
        std::memcpy(buf, src, values * sizeof(float));
      }
      engine.accumulate(chunk);
    }
    BlockSums sums;
    if ((b < sched.raw.size() && sched.raw[b]) || every_block) {
      engine.read_block(sums);
      sums.block = static_cast<std::int64_t>(b);
      sums.frames = b1 - b0;
      sums.tuples = tuple_end - b0;
    }
    if (b < sched.raw.size() && sched.raw[b])
      raws.push_back(sums);
    else
      engine.finish_block(b1 - b0, tuple_end - b0);
    if (every_block) every_block->push_back(std::move(sums));
  }
  return raws;
}

// max |gpu - cpu| <= rel_tol max |cpu| (floor `floor`), every gpu value finite.
void check_close(const std::string& what, std::span<const double> gpu, std::span<const double> cpu,
                 double floor = 1e-300) {
  REQUIRE(gpu.size() == cpu.size());
  double diff = 0, largest = floor;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < gpu.size(); ++i) {
    if (!std::isfinite(gpu[i])) ++bad;
    diff = std::max(diff, std::fabs(gpu[i] - cpu[i]));
    largest = std::max(largest, std::fabs(cpu[i]));
  }
  INFO(what << ": max |gpu - cpu| = " << diff << ", max |cpu| = " << largest << ", relative " << diff / largest);
  CHECK(bad == 0);
  CHECK(diff <= rel_tol * largest);
}

void compare_blocks(const SofiProblem& plan, const std::vector<BlockSums>& gpu, const std::vector<BlockSums>& cpu,
                    const std::string& what) {
  REQUIRE(gpu.size() == cpu.size());
  const auto n = static_cast<std::size_t>(plan.pixels());
  for (std::size_t b = 0; b < gpu.size(); ++b) {
    const std::string w = what + ", block " + std::to_string(b);
    CHECK(gpu[b].shift == cpu[b].shift);
    check_close(w + " frame_sum", gpu[b].frame_sum, cpu[b].frame_sum);
    REQUIRE(gpu[b].terms.size() == cpu[b].terms.size());
    for (std::size_t t = 0; t < plan.terms.size(); ++t)
      check_close(w + " term " + std::to_string(t) + " (size " + std::to_string(plan.terms[t].size) + ")",
                  std::span<const double>(gpu[b].terms).subspan(t * n, n),
                  std::span<const double>(cpu[b].terms).subspan(t * n, n));
  }
}

struct Case {
  std::int64_t width, height, frames;
  SofiProblemOptions options;
  Schedule schedule;
  std::int64_t capacity;  // chunk_frames asked for
};

void run_case(const Case& c, PixelType type, std::uint64_t seed) {
  const SofiProblem plan = make_sofi_problem(c.width, c.height, c.options);
  const auto frames = test_frames(c.width, c.height, c.frames, type == PixelType::u16, seed);
  auto gpu = make_sofi_engine(gpu_device(), plan, c.capacity);
  auto cpu = make_cpu_sofi_engine(plan, c.capacity, cpu_threads());
  REQUIRE(gpu->chunk_capacity() == c.capacity);
  const std::string what = plan.describe() + " (" + to_string(type) + ", capacity " + std::to_string(c.capacity) +
                           ", chunk tuples " + std::to_string(c.schedule.chunk_tuples) + ")";
  INFO(what);
  std::vector<BlockSums> gpu_blocks, cpu_blocks;
  const auto gpu_raw = feed(*gpu, plan, frames, type, c.schedule, &gpu_blocks);
  const auto cpu_raw = feed(*cpu, plan, frames, type, c.schedule, &cpu_blocks);
  compare_blocks(plan, gpu_blocks, cpu_blocks, what);
  compare_blocks(plan, gpu_raw, cpu_raw, what + " (read_block)");
  PlaneSums gs, cs;
  gpu->read_planes(gs);
  cpu->read_planes(cs);
  REQUIRE(gs.planes.size() == plan.planes.size());
  REQUIRE(cs.planes.size() == plan.planes.size());
  for (std::size_t p = 0; p < plan.planes.size(); ++p) {
    double largest = 0;
    for (double v : cs.planes[p]) largest = std::max(largest, std::fabs(v));
    CHECK(largest > 0);
    check_close(what + " plane " + plan.labels[p], gs.planes[p], cs.planes[p]);
  }
  check_close(what + " mean-frame sum", gs.frame_sum, cs.frame_sum);
}

SofiProblemOptions auto_options(std::vector<int> orders, std::vector<int> lags = {}, bool moments = false) {
  SofiProblemOptions o;
  o.orders = std::move(orders);
  o.lags = std::move(lags);
  o.moments = moments;
  return o;
}

}  // namespace

TEST_CASE("CUDA SOFI engine equals the CPU reference: auto-cumulants, lags, moments, sizes, chunkings") {
  // Blocks split at non-chunk boundaries; the middle block is read back raw.
  const Schedule three_blocks{{0, 97, 230, 300}, 41, {false, true, false}};
  const Schedule one_block_long_chunks{{0, 300}, 250, {}};
  const std::vector<SofiProblemOptions> plans = {
      auto_options({2}),
      auto_options({2, 3, 4}),
      auto_options({2, 3, 4, 5, 6}),
      auto_options({3}),
      auto_options({2, 3, 4}, {0, 2, 5, 7}),
      auto_options({2, 3, 4}, {3, 1, 0, 2}),  // the auto path with windows 3 (order 2), 3, 3
      auto_options({2, 4}, {1, 0, 3, 2}),     // windows 1 and 3: a tail of 2 tuples per block
      auto_options({2, 3, 4}, {}, true),
  };
  for (const auto& [w, h] : {std::pair<std::int64_t, std::int64_t>{37, 29}, {40, 30}, {128, 128}})
    for (const auto& o : plans) {
      const std::uint64_t seed = static_cast<std::uint64_t>(w * 1000 + o.orders.size() * 10 + o.lags.size());
      run_case({w, h, 300, o, three_blocks, 48}, PixelType::u16, seed);
      run_case({w, h, 300, o, three_blocks, 48}, PixelType::f32, seed + 1);
      // long chunks: several time segments per chunk (atomic adds) on small frames
      run_case({w, h, 300, o, one_block_long_chunks, 260}, PixelType::u16, seed + 2);
    }
}

TEST_CASE("CUDA SOFI: an order's plane is the same alone as with other orders (issue 19)") {
  // Each order sums over its own window (problem.hpp). On the GPU the auto path sums the tuples every
  // window takes and the generic kernel the smaller windows' tails, so an order alone (its own auto
  // kernel, no tail) and among others (a wider kernel plus the tail) meet rel_tol; the CPU reference is
  // bit-identical (test_sofi_math.cpp), and both GPU runs meet it too.
  const std::int64_t w = 40, h = 30, frames = 300;
  const Schedule sched{{0, 97, 230, 300}, 41, {}};
  const auto data = test_frames(w, h, frames, true, 77);
  struct Ask {
    std::vector<int> orders, lags;
  };
  const std::vector<Ask> asks = {{{2, 3, 4, 5, 6}, {}}, {{2, 3, 4}, {3, 1, 0, 2}}};
  for (const auto& ask : asks) {
    const SofiProblem together = make_sofi_problem(w, h, auto_options(ask.orders, ask.lags));
    auto gpu_all = make_sofi_engine(gpu_device(), together, 48);
    feed(*gpu_all, together, data, PixelType::u16, sched);
    PlaneSums all;
    gpu_all->read_planes(all);
    for (std::size_t i = 0; i < ask.orders.size(); ++i) {
      std::vector<int> lags = ask.lags;
      if (!lags.empty()) lags.resize(static_cast<std::size_t>(ask.orders[i]));
      const SofiProblem alone = make_sofi_problem(w, h, auto_options({ask.orders[i]}, lags));
      auto gpu_one = make_sofi_engine(gpu_device(), alone, 48);
      auto cpu_one = make_cpu_sofi_engine(alone, 48, cpu_threads());
      feed(*gpu_one, alone, data, PixelType::u16, sched);
      feed(*cpu_one, alone, data, PixelType::u16, sched);
      PlaneSums one, ref;
      gpu_one->read_planes(one);
      cpu_one->read_planes(ref);
      const std::string what = "order " + std::to_string(ask.orders[i]) + " of " + together.describe();
      check_close(what + ": alone (GPU) vs among the others (GPU)", one.planes[0], all.planes[i]);
      check_close(what + ": among the others (GPU) vs alone (CPU)", all.planes[i], ref.planes[0]);
    }
  }
}

TEST_CASE("CUDA SOFI engine equals the CPU reference: cross-cumulants") {
  SofiProblemOptions o;
  o.orders = {2, 3, 4};
  o.cross = true;
  o.psf_sigma = 1.5;
  const Schedule blocks{{0, 70, 160}, 29, {false, true}};
  for (const auto& [w, h] : {std::pair<std::int64_t, std::int64_t>{37, 29}, {48, 40}}) {
    run_case({w, h, 160, o, blocks, 32}, PixelType::u16, 7);
    run_case({w, h, 160, o, blocks, 32}, PixelType::f32, 8);
  }
  o.moments = true;
  run_case({37, 29, 160, o, blocks, 32}, PixelType::f32, 9);
}

TEST_CASE("CUDA SOFI engine: capacity, empty chunks, errors") {
  const SofiProblem plan = make_sofi_problem(64, 48, auto_options({2, 3, 4}));
  auto gpu = make_sofi_engine(gpu_device(), plan, 100);
  CHECK(gpu->chunk_capacity() == 100);
  CHECK(gpu->name().rfind("cuda:", 0) == 0);
  SofiChunk too_big;
  too_big.count = 101;
  CHECK_THROWS_AS(gpu->accumulate(too_big), std::logic_error);
  CHECK_THROWS_AS(gpu->finish_block(0, 0), InputError);
  // A frame whose sums cannot fit in any GPU.
  const SofiProblem huge = make_sofi_problem(200000, 200000, auto_options({2, 3, 4}));
  try {
    make_sofi_engine(gpu_device(), huge, 10);
    FAIL("sums that cannot fit were accepted");
  } catch (const DeviceError& e) {
    MESSAGE(e.message());
    CHECK(std::string(e.what()).find("GB") != std::string::npos);
  }
}

// Not run by default (nanoscopy_gpu_tests -tc="*SOFI timing*" --no-skip):
// frames/s of 512x512 uint16 stacks, orders {2} and {2,3,4}, with the frames
// already on the GPU (kernels only) and through the engine API from pinned
// host buffers (uploads overlapped with the kernels), once with the buffers
// filled only once and once with a host memcpy per chunk; no CPU comparison.
TEST_CASE("CUDA SOFI timing" * doctest::skip()) {
  using clock = std::chrono::steady_clock;
  const std::int64_t w = 512, h = 512, n = w * h;
  const Device dev = gpu_device();
  for (const auto& orders : {std::vector<int>{2}, std::vector<int>{2, 3, 4}}) {
    const SofiProblem plan = make_sofi_problem(w, h, auto_options(orders));
#if NANOSCOPY_HAVE_CUDA
    {
      const std::int64_t frames = nanoscopy::test::gpu_sanitizer_run() ? 200 : 4000;
      std::int64_t bytes = 0;
      const double s = cuda::time_device_resident_sofi(dev.gpus.front(), plan, frames, 10, &bytes);
      MESSAGE(plan.describe() << ": device-resident " << static_cast<double>(frames) / s << " frames/s, "
                              << static_cast<double>(bytes) / s / 1e9 << " GB/s (" << bytes << " bytes per run)");
    }
#endif
    const std::int64_t chunk = 500, block = 10000, blocks = 3;
    std::vector<std::uint16_t> host(static_cast<std::size_t>(chunk * n));
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> value(100, 2099);
    for (auto& v : host) v = static_cast<std::uint16_t>(value(rng));
    const std::vector<float> shift(static_cast<std::size_t>(n), 1000.0f);
    for (bool copy_each : {false, true}) {
      auto engine = make_sofi_engine(dev, plan, chunk);
      REQUIRE(engine->chunk_capacity() == chunk);
      // prefill both pinned buffers
      for (int i = 0; i < 2; ++i) std::memcpy(engine->input_buffer(PixelType::u16), host.data(), host.size() * 2);
      const auto t0 = clock::now();
      std::int64_t total = 0;
      for (std::int64_t b = 0; b < blocks; ++b) {
        engine->start_block(shift);
        const std::int64_t b0 = b * block, b1 = b0 + block, tuple_end = b1 - plan.max_lag;
        for (std::int64_t c = b0; c < b1; c += chunk - plan.max_lag) {
          const std::int64_t se = std::min(c + chunk - plan.max_lag, b1);
          const std::int64_t te = std::min(se, b1 - plan.min_window);
          SofiChunk ch;
          ch.type = PixelType::u16;
          ch.first = c;
          ch.count = std::min(std::max(se, te + plan.max_lag), b1) - c;
          ch.tuple_end = te;
          ch.sum_end = se;
          ch.block_end = b1;
          void* buf = engine->input_buffer(PixelType::u16);
          if (copy_each) std::memcpy(buf, host.data(), static_cast<std::size_t>(ch.count * n) * 2);
          engine->accumulate(ch);
        }
        engine->finish_block(block, tuple_end - b0);
        total += block;
      }
      PlaneSums sums;
      engine->read_planes(sums);
      const double s = std::chrono::duration<double>(clock::now() - t0).count();
      MESSAGE(plan.describe() << ": engine API" << (copy_each ? " + host memcpy per chunk" : " (buffers filled once)")
                              << ", chunks of " << chunk << ": " << static_cast<double>(total) / s
                              << " frames/s (target >= 20000)");
    }
  }
}
