// The CUDA spot detector against the CPU reference on the same frames. Both
// run detect_math.hpp's operations in the same order with IEEE rounding (no
// FMA, no approximate division) and exact medians, so the candidate lists must
// be identical, field for field, and so must the ROIs cut on the device.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/device.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/loc/detect/detect.hpp"
#include "nanoscopy/loc/detect/engine.hpp"
#include "nanoscopy/sim/movie.hpp"
#include "support/test_support.hpp"

// The device-data entry point needs the CUDA runtime and the kernels' plain
// headers, present only in builds with the CUDA backend.
#if __has_include("loc/detect_engine_cuda.hpp") && __has_include(<cuda_runtime.h>)
#include <cuda_runtime.h>

#include "fit/engine_cuda.hpp"
#include "loc/detect_engine_cuda.hpp"
#define NANOSCOPY_TEST_DETECT_DEVICE_ENTRY 1
#endif

using namespace nanoscopy;

namespace {

struct Frames {
  std::vector<float> pixels;
  std::int64_t count = 0;
  int width = 0, height = 0;
};

Frames simulated(std::int64_t frames, int width, int height, int emitters, std::uint64_t seed) {
  MovieSettings m;
  m.frames = frames;
  m.width = width;
  m.height = height;
  m.emitters = emitters;
  m.on_fraction = 0.25;
  m.seed = seed;
  const auto u16 = nanoscopy::test::simulated_movie_u16(m);
  Frames f;
  f.count = frames;
  f.width = width;
  f.height = height;
  f.pixels.assign(u16.begin(), u16.end());
  return f;
}

// Uniform noise (not integers) plus random bright Gaussian blobs, optionally NaN blocks.
Frames random_frames(std::int64_t frames, int width, int height, std::uint64_t seed, bool with_nan = false) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> noise(0.f, 50.f);
  Frames f;
  f.count = frames;
  f.width = width;
  f.height = height;
  f.pixels.resize(static_cast<std::size_t>(frames * width * height));
  for (float& v : f.pixels) v = 300.f + noise(rng);
  std::uniform_real_distribution<double> ux(0, width - 1), uy(0, height - 1), amp(100, 2000);
  for (std::int64_t t = 0; t < frames; ++t) {
    float* frame = f.pixels.data() + t * width * height;
    const int spots = 1 + static_cast<int>(static_cast<std::int64_t>(width) * height / 400);
    for (int s = 0; s < spots; ++s) {
      const double cx = ux(rng), cy = uy(rng), a = amp(rng);
      for (int y = std::max(0, static_cast<int>(cy) - 6); y < std::min(height, static_cast<int>(cy) + 7); ++y)
        for (int x = std::max(0, static_cast<int>(cx) - 6); x < std::min(width, static_cast<int>(cx) + 7); ++x)
          frame[y * width + x] += static_cast<float>(a * std::exp(-((x - cx) * (x - cx) + (y - cy) * (y - cy)) / 3.4));
    }
    if (with_nan && t % 2 == 0) {
      const int x0 = static_cast<int>(ux(rng) * 0.8), y0 = static_cast<int>(uy(rng) * 0.8);
      for (int y = y0; y < std::min(height, y0 + 3); ++y)
        for (int x = x0; x < std::min(width, x0 + 4); ++x) frame[y * width + x] = std::nanf("");
    }
  }
  return f;
}

Device gpu_device() {
  return select_device(DeviceRequest::parse("cuda"), true);
}

bool same(const Candidate& a, const Candidate& b) {
  return a.frame == b.frame && a.x == b.x && a.y == b.y && std::memcmp(&a.score, &b.score, sizeof(float)) == 0 &&
         std::memcmp(&a.net_gradient, &b.net_gradient, sizeof(float)) == 0;
}

void compare(const std::vector<Candidate>& gpu, const std::vector<Candidate>& cpu, const char* what) {
  CAPTURE(what);
  CHECK(gpu.size() == cpu.size());
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < std::min(gpu.size(), cpu.size()); ++i)
    if (!same(gpu[i], cpu[i]) && mismatches++ < 3)
      std::printf(
          "%s candidate %zu: gpu frame %lld (%d, %d) score %.9g ng %.9g | cpu frame %lld (%d, %d) score %.9g ng %.9g\n",
          what, i, static_cast<long long>(gpu[i].frame), gpu[i].x, gpu[i].y, gpu[i].score, gpu[i].net_gradient,
          static_cast<long long>(cpu[i].frame), cpu[i].x, cpu[i].y, cpu[i].score, cpu[i].net_gradient);
  CHECK(mismatches == 0);
}

void check_backends_agree(const Frames& f, const DetectSettings& s, const char* what, std::int64_t first_frame = 0,
                          bool expect_some = true) {
  std::vector<Candidate> cpu, gpu;
  make_cpu_detect_engine(s, 0)->detect(f.pixels.data(), first_frame, f.count, f.width, f.height, cpu);
  auto detector = make_detect_engine(gpu_device(), s);
  detector->detect(f.pixels.data(), first_frame, f.count, f.width, f.height, gpu);
  MESSAGE(std::string(what) << ": " << cpu.size() << " candidates on the CPU, " << gpu.size() << " on "
                            << detector->name());
  if (expect_some) CHECK(!cpu.empty());
  compare(gpu, cpu, what);
}

}  // namespace

TEST_CASE("CUDA detection equals the CPU reference: simulated movies and random frames") {
  check_backends_agree(simulated(60, 128, 96, 60, 11), DetectSettings{}, "simulated 128×96");
  check_backends_agree(random_frames(30, 200, 150, 3), DetectSettings{}, "random 200×150", 1000);
  // More pixels than one filter block (2^24): the chunk is cut in two.
  check_backends_agree(simulated(300, 256, 256, 300, 4), DetectSettings{}, "simulated 300 × 256²");
}

TEST_CASE("CUDA detection equals the CPU reference: edge sizes and settings") {
  check_backends_agree(random_frames(20, 7, 7, 5), DetectSettings{}, "7×7 (= box)", 0, false);
  check_backends_agree(random_frames(10, 7, 300, 6), DetectSettings{}, "7×300");
  check_backends_agree(random_frames(10, 300, 7, 7), DetectSettings{}, "300×7");
  check_backends_agree(random_frames(5, 513, 257, 8), DetectSettings{}, "513×257");
  DetectSettings s;
  s.box = 3;
  s.threshold = 3;
  check_backends_agree(random_frames(10, 64, 64, 9), s, "box 3, threshold 3");
  s = {};
  s.box = 31;
  s.dog_sigma1 = 2;
  s.dog_sigma2 = 10;  // 61-tap kernel wider than the frame: repeated reflection
  check_backends_agree(random_frames(10, 40, 33, 10), s, "box 31, sigma 2/10", 0, false);
  s = {};
  s.dog_sigma1 = 0.5;
  s.dog_sigma2 = 1.2;
  s.border = 4;
  check_backends_agree(random_frames(10, 100, 80, 11), s, "sigma 0.5/1.2, border 4");
  s = {};
  s.min_net_gradient = 1500;  // Picasso's identification threshold: dropped before any ROI is cut
  check_backends_agree(random_frames(10, 100, 80, 13), s, "min net gradient 1500");
}

TEST_CASE("CUDA detection equals the CPU reference when the noise step's bins overflow shared memory") {
  // The noise step copies the keys of the bin that holds the median (and then the MAD) to shared memory when
  // they fit (at most 16384) and reads global memory three times when they do not. Here the left three quarters
  // of each 384² frame are flat: their filtered values are one number, the median's bin holds about 80k of them,
  // and both selections take the global path; the right quarter keeps noise and spots.
  Frames f = random_frames(4, 384, 384, 14);
  for (std::int64_t t = 0; t < f.count; ++t)
    for (int y = 0; y < f.height; ++y)
      for (int x = 0; x < 288; ++x) f.pixels[static_cast<std::size_t>((t * f.height + y) * f.width + x)] = 320.f;
  check_backends_agree(f, DetectSettings{}, "384² frames, three quarters flat");
  // And the listed path on large frames of noise and spots only (a bin of a few thousand keys).
  check_backends_agree(random_frames(3, 512, 512, 15), DetectSettings{}, "512² random");
}

TEST_CASE("CUDA detection equals the CPU reference with NaN, constant and empty frames") {
  check_backends_agree(random_frames(20, 96, 64, 12, true), DetectSettings{}, "NaN blocks");
  Frames odd;
  odd.width = 32;
  odd.height = 24;
  odd.count = 3;
  odd.pixels.assign(static_cast<std::size_t>(3 * 32 * 24), std::nanf(""));          // all NaN
  std::fill(odd.pixels.begin() + 32 * 24, odd.pixels.begin() + 2 * 32 * 24, 77.f);  // constant
  std::fill(odd.pixels.begin() + 2 * 32 * 24, odd.pixels.end(), 0.f);               // zero
  odd.pixels[2 * 32 * 24 + 5] = std::numeric_limits<float>::infinity();
  check_backends_agree(odd, DetectSettings{}, "NaN, constant, zero+inf frames", 0, false);
  Frames none;
  none.width = none.height = 16;
  std::vector<Candidate> out{Candidate{}};
  make_detect_engine(gpu_device(), DetectSettings{})->detect(nullptr, 0, 0, 16, 16, out);
  CHECK(out.empty());
  std::vector<float> tiny(5 * 5, 1.f);
  CHECK_THROWS_AS(make_detect_engine(gpu_device(), DetectSettings{})->detect(tiny.data(), 0, 1, 5, 5, out), InputError);
}

#ifdef NANOSCOPY_TEST_DETECT_DEVICE_ENTRY
TEST_CASE("CUDA: ROIs cut on the device equal cut_rois on the host (uint16 and float) and feed fit_device") {
  const Frames f = simulated(50, 160, 120, 80, 21);
  std::vector<std::uint16_t> u16(f.pixels.size());
  for (std::size_t i = 0; i < u16.size(); ++i) u16[i] = static_cast<std::uint16_t>(f.pixels[i]);
  const DetectSettings s;
  const int device = gpu_device().gpus.front();
  std::vector<Candidate> cpu;
  detect_cpu(f.pixels.data(), 500, f.count, f.width, f.height, s, 0, cpu);
  REQUIRE(!cpu.empty());
  const auto host_f32 = cut_rois<float>(f.pixels.data(), 500, f.count, f.width, f.height, cpu, s.box);
  const auto host_u16 = cut_rois<std::uint16_t>(u16.data(), 500, f.count, f.width, f.height, cpu, s.box);

  REQUIRE(cudaSetDevice(device) == cudaSuccess);
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  void* d_f32 = nullptr;
  void* d_u16 = nullptr;
  REQUIRE(cudaMalloc(&d_f32, f.pixels.size() * sizeof(float)) == cudaSuccess);
  REQUIRE(cudaMalloc(&d_u16, u16.size() * sizeof(std::uint16_t)) == cudaSuccess);
  REQUIRE(cudaMemcpy(d_f32, f.pixels.data(), f.pixels.size() * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
  REQUIRE(cudaMemcpy(d_u16, u16.data(), u16.size() * sizeof(std::uint16_t), cudaMemcpyHostToDevice) == cudaSuccess);

  cuda::DetectPlan plan(device, s);
  std::vector<Candidate> cands;
  std::vector<RoiOrigin> origins;
  std::vector<float> rois_f32;
  std::vector<std::uint16_t> rois_u16;

  const std::int64_t n32 = plan.detect_device(d_f32, PixelType::f32, 500, f.count, f.width, f.height, stream);
  CHECK(n32 == static_cast<std::int64_t>(cpu.size()));
  CHECK(plan.roi_type() == PixelType::f32);
  plan.download(&cands, &origins, &rois_f32, nullptr);
  compare(cands, cpu, "device f32");
  REQUIRE(origins.size() == host_f32.origins.size());
  for (std::size_t k = 0; k < origins.size(); ++k) {
    CHECK(origins[k].x0 == host_f32.origins[k].x0);
    CHECK(origins[k].y0 == host_f32.origins[k].y0);
  }
  CHECK(rois_f32 == host_f32.pixels);

  // uint16 frames: the same candidates (the values are the same integers), uint16 ROIs.
  const std::int64_t n16 = plan.detect_device(d_u16, PixelType::u16, 500, f.count, f.width, f.height, stream);
  CHECK(n16 == n32);
  CHECK(plan.roi_type() == PixelType::u16);
  plan.download(&cands, nullptr, nullptr, &rois_u16);
  compare(cands, cpu, "device u16");
  CHECK(rois_u16 == host_u16.pixels);

  // The plan's ROIs go straight into the fitter: the same results as fitting the host-cut ROIs.
  cuda::FitPlan fitter(device, FitSettings{});
  FitResult* d_out = nullptr;
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&d_out), static_cast<std::size_t>(n16) * sizeof(FitResult)) ==
          cudaSuccess);
  fitter.fit_device(plan.rois(), plan.roi_type(), n16, s.box, s.box, nullptr, d_out, stream);
  std::vector<FitResult> on_device(static_cast<std::size_t>(n16)), from_host(static_cast<std::size_t>(n16));
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  REQUIRE(cudaMemcpy(on_device.data(), d_out, on_device.size() * sizeof(FitResult), cudaMemcpyDeviceToHost) ==
          cudaSuccess);
  fitter.fit(RoiBatch{host_u16.pixels.data(), PixelType::u16, n16, s.box, s.box, nullptr}, from_host);
  std::int64_t identical = 0, converged_fits = 0;
  for (std::size_t k = 0; k < on_device.size(); ++k) {
    identical += std::memcmp(&on_device[k], &from_host[k], sizeof(FitResult)) == 0 ? 1 : 0;
    converged_fits += converged(on_device[k].status) ? 1 : 0;
  }
  CHECK(identical == n16);
  CHECK(converged_fits * 10 >= n16 * 9);

  // Timing of detection alone, frames resident (reported, not asserted).
  const Frames big = simulated(1000, 256, 256, 300, 8);
  void* d_big = nullptr;
  REQUIRE(cudaMalloc(&d_big, big.pixels.size() * sizeof(float)) == cudaSuccess);
  REQUIRE(cudaMemcpy(d_big, big.pixels.data(), big.pixels.size() * sizeof(float), cudaMemcpyHostToDevice) ==
          cudaSuccess);
  plan.detect_device(d_big, PixelType::f32, 0, big.count, 256, 256, stream);  // warm-up (buffers grow)
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  cudaEvent_t start, stop;
  REQUIRE(cudaEventCreate(&start) == cudaSuccess);
  REQUIRE(cudaEventCreate(&stop) == cudaSuccess);
  REQUIRE(cudaEventRecord(start, stream) == cudaSuccess);
  const std::int64_t found = plan.detect_device(d_big, PixelType::f32, 0, big.count, 256, 256, stream);
  REQUIRE(cudaEventRecord(stop, stream) == cudaSuccess);
  REQUIRE(cudaEventSynchronize(stop) == cudaSuccess);
  float ms = 0;
  REQUIRE(cudaEventElapsedTime(&ms, start, stop) == cudaSuccess);
  MESSAGE("256×256 device-resident detection + ROI cutting: " << static_cast<double>(big.count) / (ms * 1e-3)
                                                              << " frames/s (" << found << " candidates in "
                                                              << big.count << " frames)");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(d_big);
  cudaFree(d_out);
  cudaFree(d_f32);
  cudaFree(d_u16);
  cudaStreamDestroy(stream);
}
#endif
