// The CUDA LocalizeEngine (upload → detect → cut → fit on the device) against
// the CPU one (detect_cpu → cut_rois → CPU fitter) on the same chunks: the
// candidates and ROI origins must be identical (detection is bit-identical),
// the fits agree within the fitter's CPU/GPU tolerance (test_fit_gpu.cpp,
// support/fit_compare.hpp). The CUDA fits run in float (the default), the CPU
// reference in double: a fit agrees when both end with the same status or both
// converged (float and double trade converged_min_delta and converged_min_step
// in a few % of the fits) and x, y, σ are within 1e-3 px; ≥ 99.5 % of the fits
// agree (before float, with the same arithmetic on both sides: 99.9 %).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/device.hpp"
#include "nanoscopy/core/camera_maps.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/spline_psf.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/loc/localize_engine.hpp"
#include "nanoscopy/sim/movie.hpp"
#include "support/spline_movie.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;

namespace {

struct Movie {
  std::vector<std::uint16_t> u16;
  std::vector<float> f32;
  std::int64_t frames = 0;
  int width = 0, height = 0;
};

Movie simulated(std::int64_t frames, int width, int height, int emitters, std::uint64_t seed) {
  MovieSettings m;
  m.frames = frames;
  m.width = width;
  m.height = height;
  m.emitters = emitters;
  m.on_fraction = 0.3;
  m.seed = seed;
  Movie mv;
  mv.frames = frames;
  mv.width = width;
  mv.height = height;
  mv.u16 = nanoscopy::test::simulated_movie_u16(m);
  mv.f32.assign(mv.u16.begin(), mv.u16.end());
  return mv;
}

struct Output {
  std::vector<Candidate> candidates;
  std::vector<RoiOrigin> origins;
  std::vector<FitResult> fits;
};

struct Tally {
  std::int64_t fits = 0, agree = 0;
};

constexpr double kAgreeShare = 0.995;

bool fits_agree(const FitResult& a, const FitResult& b) {
  if (a.status != b.status && !(converged(a.status) && converged(b.status))) return false;
  if (!std::isfinite(a.x) && !std::isfinite(b.x)) return true;  // both failed the same way
  return std::abs(a.x - b.x) <= 1e-3 && std::abs(a.y - b.y) <= 1e-3 && std::abs(a.sigma - b.sigma) <= 1e-3;
}

void compare(const Output& cpu, const Output& gpu, Tally& tally) {
  REQUIRE(gpu.candidates.size() == cpu.candidates.size());
  REQUIRE(gpu.origins.size() == cpu.candidates.size());
  REQUIRE(gpu.fits.size() == cpu.candidates.size());
  REQUIRE(cpu.origins.size() == cpu.candidates.size());
  for (std::size_t k = 0; k < cpu.candidates.size(); ++k) {
    const Candidate &a = cpu.candidates[k], &b = gpu.candidates[k];
    CHECK(a.frame == b.frame);
    CHECK(a.x == b.x);
    CHECK(a.y == b.y);
    CHECK(std::memcmp(&a.score, &b.score, sizeof(float)) == 0);
    CHECK(std::memcmp(&a.net_gradient, &b.net_gradient, sizeof(float)) == 0);
    CHECK(cpu.origins[k].x0 == gpu.origins[k].x0);
    CHECK(cpu.origins[k].y0 == gpu.origins[k].y0);
    ++tally.fits;
    if (fits_agree(cpu.fits[k], gpu.fits[k])) ++tally.agree;
  }
}

Device gpu_device() {
  return select_device(DeviceRequest::parse("cuda"), true);
}

Device cpu_device() {
  return select_device(DeviceRequest::parse("cpu"), true);
}

}  // namespace

TEST_CASE("CUDA LocalizeEngine equals the CPU one: uint16 and float chunks of several sizes, pinned and pageable") {
  const Movie mv = simulated(70, 90, 77, 60, 11);
  DetectSettings ds;
  FitSettings fs;
  auto cpu = make_localize_engine(cpu_device(), LocalizeSettings{ds, fs, {}});
  auto gpu = make_localize_engine(gpu_device(), LocalizeSettings{ds, fs, {}});
  CHECK(gpu->name().rfind("cuda:", 0) == 0);
  const std::int64_t frame = static_cast<std::int64_t>(mv.width) * mv.height;
  // Page-locked copies of the movie (the pipeline's fast path).
  HostBuffer pinned_u16 = gpu->allocate_host(mv.u16.size() * sizeof(std::uint16_t));
  HostBuffer pinned_f32 = gpu->allocate_host(mv.f32.size() * sizeof(float));
  std::memcpy(pinned_u16.get(), mv.u16.data(), mv.u16.size() * sizeof(std::uint16_t));
  std::memcpy(pinned_f32.get(), mv.f32.data(), mv.f32.size() * sizeof(float));

  Tally tally;
  std::int64_t total_candidates = 0;
  for (const std::int64_t chunk : {std::int64_t{1}, std::int64_t{7}, std::int64_t{32}, std::int64_t{70}}) {
    for (const PixelType type : {PixelType::u16, PixelType::f32}) {
      for (const bool pinned : {false, true}) {
        CAPTURE(chunk);
        CAPTURE(to_string(type));
        CAPTURE(pinned);
        for (std::int64_t first = 0; first < mv.frames; first += chunk) {
          const std::int64_t count = std::min(chunk, mv.frames - first);
          const std::size_t bpp = bytes_per_pixel(type);
          const void* base = type == PixelType::u16
                                 ? (pinned ? pinned_u16.get() : static_cast<const void*>(mv.u16.data()))
                                 : (pinned ? pinned_f32.get() : static_cast<const void*>(mv.f32.data()));
          const ChunkPixels px{static_cast<const unsigned char*>(base) + static_cast<std::size_t>(first * frame) * bpp,
                               type, first, count, mv.width, mv.height};
          Output a, b;
          cpu->localize(px, a.candidates, a.origins, a.fits);
          gpu->localize(px, b.candidates, b.origins, b.fits);
          compare(a, b, tally);
          if (chunk == 70) total_candidates += static_cast<std::int64_t>(a.candidates.size());
          for (const auto& c : b.candidates) {
            CHECK(c.frame >= first);
            CHECK(c.frame < first + count);
          }
        }
      }
    }
  }
  CHECK(total_candidates > 4 * 70);  // the movie has spots: the comparison is not vacuous
  MESSAGE("fits compared: " << tally.fits << ", agreeing: " << tally.agree);
  CHECK(static_cast<double>(tally.agree) >= kAgreeShare * static_cast<double>(tally.fits));
}

TEST_CASE("CUDA LocalizeEngine: empty chunk, one frame, a chunk with no spots, bad input") {
  const Movie mv = simulated(3, 64, 64, 20, 5);
  DetectSettings ds;
  ds.box = 9;
  FitSettings fs;
  auto cpu = make_localize_engine(cpu_device(), LocalizeSettings{ds, fs, {}});
  auto gpu = make_localize_engine(gpu_device(), LocalizeSettings{ds, fs, {}});
  Output a, b;
  // Stale contents must be cleared.
  b.candidates.resize(3);
  b.origins.resize(3);
  b.fits.resize(3);
  gpu->localize(ChunkPixels{mv.u16.data(), PixelType::u16, 0, 0, mv.width, mv.height}, b.candidates, b.origins,
                b.fits);
  CHECK(b.candidates.empty());
  CHECK(b.origins.empty());
  CHECK(b.fits.empty());

  Tally tally;
  cpu->localize(ChunkPixels{mv.u16.data(), PixelType::u16, 5, 1, mv.width, mv.height}, a.candidates, a.origins,
                a.fits);
  gpu->localize(ChunkPixels{mv.u16.data(), PixelType::u16, 5, 1, mv.width, mv.height}, b.candidates, b.origins,
                b.fits);
  compare(a, b, tally);
  for (const auto& c : b.candidates) CHECK(c.frame == 5);

  std::vector<float> flat(static_cast<std::size_t>(2 * mv.width * mv.height), 123.f);
  gpu->localize(ChunkPixels{flat.data(), PixelType::f32, 0, 2, mv.width, mv.height}, b.candidates, b.origins,
                b.fits);
  CHECK(b.candidates.empty());
  CHECK(b.fits.empty());

  CHECK_THROWS_AS(gpu->localize(ChunkPixels{mv.u16.data(), PixelType::u8, 0, 1, mv.width, mv.height}, b.candidates,
                                b.origins, b.fits),
                  UsageError);
  CHECK_THROWS_AS(
      gpu->localize(ChunkPixels{nullptr, PixelType::u16, 0, 1, mv.width, mv.height}, b.candidates, b.origins, b.fits),
      UsageError);
  CHECK_THROWS_AS(gpu->localize(ChunkPixels{mv.u16.data(), PixelType::u16, 0, 1, 5, 5}, b.candidates, b.origins,
                                b.fits),
                  InputError);
  // The plan still works after the errors.
  gpu->localize(ChunkPixels{mv.u16.data(), PixelType::u16, 0, 3, mv.width, mv.height}, b.candidates, b.origins,
                b.fits);
  cpu->localize(ChunkPixels{mv.u16.data(), PixelType::u16, 0, 3, mv.width, mv.height}, a.candidates, a.origins,
                a.fits);
  compare(a, b, tally);
  // A few dozen fits: all agree but one at most (the float path's tolerance).
  CHECK(tally.agree + 1 >= tally.fits);
}

TEST_CASE("CUDA upload-only engines (bench localize's floor): every chunk uploaded, nothing found, none on the CPU") {
  const Movie mv = simulated(4, 64, 64, 20, 6);
  CHECK(make_upload_only_engines(cpu_device(), 2).empty());
  const auto engines = make_upload_only_engines(gpu_device(), 2);
  REQUIRE(engines.size() == 2);
  for (const auto& e : engines) {
    CHECK(e->name().find("(uploads only)") != std::string::npos);
    Output b;
    b.candidates.resize(2);
    b.fits.resize(2);
    CHECK(e->localize(ChunkPixels{mv.u16.data(), PixelType::u16, 0, 4, mv.width, mv.height}, b.candidates, b.origins,
                      b.fits) == 0);
    CHECK(b.candidates.empty());
    CHECK(b.fits.empty());
    HostBuffer pinned = e->allocate_host(mv.u16.size() * 2);
    std::memcpy(pinned.get(), mv.u16.data(), mv.u16.size() * 2);
    CHECK(e->localize(ChunkPixels{pinned.get(), PixelType::u16, 4, 4, mv.width, mv.height}, b.candidates, b.origins,
                      b.fits) == 0);
    CHECK(e->localize(ChunkPixels{mv.f32.data(), PixelType::f32, 0, 4, mv.width, mv.height}, b.candidates, b.origins,
                      b.fits) == 0);
  }
}

TEST_CASE("CUDA LocalizeEngine with regions: drops the same candidates as the CPU one, before fitting") {
  const Movie mv = simulated(20, 90, 77, 60, 13);
  DetectSettings ds;
  FitSettings fs;
  const std::vector<Region> regions{{0, 0, 40, 77}, {60, 30, 30, 20}};
  auto cpu = make_localize_engine(cpu_device(), LocalizeSettings{ds, fs, regions});
  auto gpu = make_localize_engine(gpu_device(), LocalizeSettings{ds, fs, regions});
  auto everywhere = make_localize_engine(gpu_device(), LocalizeSettings{ds, fs, {}});
  Tally tally;
  for (const PixelType type : {PixelType::u16, PixelType::f32}) {
    CAPTURE(to_string(type));
    const void* pixels = type == PixelType::u16 ? static_cast<const void*>(mv.u16.data()) : mv.f32.data();
    const ChunkPixels px{pixels, type, 100, mv.frames, mv.width, mv.height};
    Output a, b, all;
    const std::int64_t detected_cpu = cpu->localize(px, a.candidates, a.origins, a.fits);
    const std::int64_t detected_gpu = gpu->localize(px, b.candidates, b.origins, b.fits);
    const std::int64_t detected_all = everywhere->localize(px, all.candidates, all.origins, all.fits);
    compare(a, b, tally);
    // Every candidate is counted, but only those inside were cut and fitted.
    CHECK(detected_gpu == detected_all);
    CHECK(detected_cpu == detected_all);
    CHECK(detected_all == static_cast<std::int64_t>(all.candidates.size()));
    CHECK(b.fits.size() < all.fits.size());
    CHECK(!b.fits.empty());
    std::size_t inside = 0;
    for (const auto& c : all.candidates) inside += in_regions(regions, c.x, c.y) ? 1 : 0;
    CHECK(b.candidates.size() == inside);
    for (const auto& c : b.candidates) CHECK(in_regions(regions, c.x, c.y));
  }
  CHECK(static_cast<double>(tally.agree) >= kAgreeShare * static_cast<double>(tally.fits));
}

TEST_CASE("CUDA LocalizeEngine with sCMOS camera maps: the same photons, shifts and fits as the CPU one") {
  const Movie mv = simulated(40, 90, 77, 60, 13);
  DetectSettings ds;
  FitSettings fs;
  fs.estimator = Estimator::mle;
  fs.photon_offset = 100;  // the simulated movie's camera (ADU = 100 + photons/0.5); the maps take its place
  fs.photons_per_value = 0.5;
  auto maps = std::make_shared<const CameraMaps>(simulate_camera_maps(mv.width, mv.height, 5));
  auto cpu = make_localize_engine(cpu_device(), LocalizeSettings{ds, fs, {}, maps});
  auto gpu = make_localize_engine(gpu_device(), LocalizeSettings{ds, fs, {}, maps});
  auto plain = make_localize_engine(gpu_device(), LocalizeSettings{ds, fs, {}});
  Tally tally;
  std::int64_t changed = 0;
  for (const PixelType type : {PixelType::u16, PixelType::f32}) {
    CAPTURE(to_string(type));
    const void* base = type == PixelType::u16 ? static_cast<const void*>(mv.u16.data()) : mv.f32.data();
    const ChunkPixels px{static_cast<const unsigned char*>(base), type, 0, mv.frames, mv.width, mv.height};
    Output a, b, c;
    cpu->localize(px, a.candidates, a.origins, a.fits);
    gpu->localize(px, b.candidates, b.origins, b.fits);
    plain->localize(px, c.candidates, c.origins, c.fits);
    compare(a, b, tally);
    REQUIRE(c.fits.size() == b.fits.size());
    for (std::size_t k = 0; k < b.fits.size(); ++k) changed += std::abs(b.fits[k].x - c.fits[k].x) > 1e-3 ? 1 : 0;
  }
  MESSAGE("with maps: fits compared " << tally.fits << ", agreeing " << tally.agree << "; changed by the maps "
                                      << changed);
  CHECK(tally.fits > 200);
  CHECK(static_cast<double>(tally.agree) >= kAgreeShare * static_cast<double>(tally.fits));
  CHECK(changed > 0);  // the maps reach the fit (offsets and gains differ per pixel)

  // Maps of another size than the frames: one InputError naming the maps.
  const Movie small = simulated(2, 40, 30, 4, 3);
  const ChunkPixels px{reinterpret_cast<const unsigned char*>(small.u16.data()), PixelType::u16, 0, 2, 40, 30};
  Output o;
  CHECK_THROWS_AS(gpu->localize(px, o.candidates, o.origins, o.fits), InputError);
}

TEST_CASE("CUDA LocalizeEngine, spline model with re-centring: the CPU one's boxes, its fits within the spline tolerance") {
  // Spots whose peak lies up to 2.8 px from the emitter (z 0..560 nm): the far ones get a second box
  // (nanoscopy/loc/recenter.hpp), chosen on the device by the same rule. Tolerances of
  // test_spline_fit_gpu.cpp: |Δx|, |Δy| ≤ 0.01 px, |Δz| ≤ 2 nm on the fits both converged.
  const SplinePsf psf = nanoscopy::test::drifting_spline_psf();
  const nanoscopy::test::SplineMovie mv = nanoscopy::test::spline_movie(psf, 40, 0, 560);
  const int w = nanoscopy::test::SplineMovie::kWidth;
  const LocalizeSettings settings = nanoscopy::test::spline_movie_settings(psf, 1.0);
  auto cpu = make_localize_engine(cpu_device(), settings);
  auto gpu = make_localize_engine(gpu_device(), settings);
  std::int64_t fits = 0, moved = 0, same_box = 0, both = 0, close = 0;
  for (const std::int64_t chunk : {std::int64_t{7}, std::int64_t{40}}) {
    for (std::int64_t first = 0; first < mv.frames; first += chunk) {
      const std::int64_t count = std::min(chunk, mv.frames - first);
      const ChunkPixels px{mv.pixels.data() + static_cast<std::size_t>(first * w * w), PixelType::u16, first, count, w,
                           w};
      Output a, b;
      cpu->localize(px, a.candidates, a.origins, a.fits);
      gpu->localize(px, b.candidates, b.origins, b.fits);
      REQUIRE(b.candidates.size() == a.candidates.size());
      REQUIRE(b.origins.size() == a.candidates.size());
      REQUIRE(b.fits.size() == a.candidates.size());
      for (std::size_t k = 0; k < a.candidates.size(); ++k) {
        ++fits;
        CHECK(a.candidates[k].frame == b.candidates[k].frame);
        const bool box = a.origins[k].x0 == b.origins[k].x0 && a.origins[k].y0 == b.origins[k].y0 &&
                         a.candidates[k].x == b.candidates[k].x && a.candidates[k].y == b.candidates[k].y;
        same_box += box;
        moved += a.candidates[k].x == a.origins[k].x0 + 6 && std::fabs(a.fits[k].x - 6.0f) < 1.0f &&
                 std::fabs(a.fits[k].z) > 300;  // far from focus: its box was moved onto it
        if (!box || !converged(a.fits[k].status) || !converged(b.fits[k].status)) continue;
        ++both;
        close += std::fabs(a.fits[k].x - b.fits[k].x) <= 0.01 && std::fabs(a.fits[k].y - b.fits[k].y) <= 0.01 &&
                 std::fabs(a.fits[k].z - b.fits[k].z) <= 2.0;
      }
    }
  }
  MESSAGE(fits << " fits, " << moved << " far ones re-centred; the same box for " << same_box << ", close " << close
               << " of " << both << " converged on both");
  REQUIRE(fits >= 2 * 150);
  CHECK(moved > fits / 10);
  CHECK(same_box >= 0.99 * static_cast<double>(fits));
  CHECK(close >= 0.99 * static_cast<double>(both));
}
