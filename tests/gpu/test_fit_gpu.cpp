// The CUDA spot fitter against the CPU reference on the same seeded batches.
// Both run the same math templates (fit/models, estimators/lsq.hpp, lm.hpp): CUDA in float by default
// (FitPrecision::automatic), in double with FitPrecision::fp64, the CPU reference in double. The double
// path agrees with the reference to far better than its tolerances and statuses match but for ties; the
// float path within the float tolerances of support/fit_compare.hpp (measured on the host by
// tests/test_fit_models.cpp with the same templates at T = float).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/device.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/fit/engine.hpp"
#include "nanoscopy/fit/model_list.hpp"
#include "nanoscopy/fit/simulate_spots.hpp"

// The device-data entry point needs the CUDA runtime and the kernels' plain
// header, present only in builds with the CUDA backend.
#if __has_include("fit/engine_cuda.hpp") && __has_include(<cuda_runtime.h>)
#include <cuda_runtime.h>

#include "fit/engine_cuda.hpp"
#define NANOSCOPY_TEST_FIT_DEVICE_ENTRY 1
#endif
#include "support/fit_compare.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;

namespace {

RoiBatch batch_of(const SimulatedSpots& s, bool u16, const SpotGuess* initial = nullptr) {
  return s.batch(u16 ? PixelType::u16 : PixelType::f32, initial);
}

// The tolerances of both paths are stated in support/fit_compare.hpp: CUDA fp64 runs the CPU's double math
// (fields within 1e-3, ≥ 99.9 % equal status); CUDA's default float path agrees with the double reference
// on the outcome of ≥ 99.5 % of the fits and to 1e-3 px on ≥ 99.9 % of the well-conditioned converged ones.
using test::check_fit_agreement;
using test::compare_fits;
using test::recipe_for;
using test::Shape;  // a ROI shape and the signal and background of its simulated spots

Device gpu_device() {
  return select_device(DeviceRequest::parse("cuda"), true);
}

}  // namespace

TEST_CASE("CUDA fits equal the CPU reference: sizes, shapes, pixel types, every model") {
  const Device gpu = gpu_device();
  const Shape shapes[] = {{1, 9, 400, 40}, {5, 11, 400, 40},  {7, 7, 400, 40},
                          {9, 9, 400, 40}, {13, 13, 400, 40}, {32, 32, 4000, 1024}};
  const std::int64_t counts[] = {1, 31, 1000, 100000};
  // Every model of the table (fit/model_list.hpp): sampled, integrated and elliptical today.
  std::vector<ShapeModel> models;
  fit_detail::for_each_model([&]<class M>(M) { models.push_back(M::shape); });
  CHECK(models.size() >= 3);
  for (ShapeModel model : models)
    for (FitPrecision precision : {FitPrecision::automatic, FitPrecision::fp64}) {
    const bool fp64 = precision == FitPrecision::fp64;
    FitSettings st;
    st.model = model;
    st.precision = precision;
    auto cuda = make_fit_engine(gpu, st);
    auto cpu = make_cpu_fit_engine(st, 0);
    for (const Shape& shape : shapes) {
      for (std::int64_t count : counts) {
        // One column holds no σx (α absorbs it): float and double wander apart there by design.
        if (model == ShapeModel::elliptical && std::min(shape.w, shape.h) < 2) continue;
        // Nor does it hold z (σx(z) unseen): 3D needs ≥ 9 px a side, as in the per-pixel comparison below.
        if (model == ShapeModel::astigmatic && std::min(shape.w, shape.h) < 9) continue;
        if (model != ShapeModel::sampled && count == 100000 && shape.w * shape.h > 200) continue;
        if (nanoscopy::test::gpu_sanitizer_run() && count > 1000) continue;
        const SpotRecipe recipe = recipe_for(shape, model);
        const auto spots = simulate_spots(recipe, count, 1000 + static_cast<std::uint64_t>(count) + shape.w);
        for (bool u16 : {true, false}) {
          char what[128];
          std::snprintf(what, sizeof what, "%s %s %d×%d %lld fits %s", fp64 ? "fp64" : "fp32",
                        to_string(model).c_str(), shape.w, shape.h, static_cast<long long>(count),
                        u16 ? "uint16" : "float32");
          std::vector<FitResult> g(static_cast<std::size_t>(count)), c(static_cast<std::size_t>(count));
          cuda->fit(batch_of(spots, u16), g);
          cpu->fit(batch_of(spots, u16), c);
          const auto a = compare_fits(g, c, shape.w, shape.h, fp64, what);
          std::int64_t conv = 0;
          for (const auto& r : g) conv += converged(r.status) ? 1 : 0;
          MESSAGE(what << ": equal status " << a.equal_status << ", same outcome " << a.same_outcome << "/" << a.fits
                       << ", converged " << conv << ", well conditioned " << a.well_conditioned << ", beyond 1e-3 "
                       << a.field_mismatch << ", max |Δ| " << a.max_position_difference << " px");
          // The 3D model in float follows the per-pixel rules (fit_compare.hpp: z is a flat direction).
          check_fit_agreement(a, fp64, what, model == ShapeModel::astigmatic, false, 1);
        }
      }
    }
  }
}

// wlsq and mle on CUDA against the CPU reference in `precision`: both models, variance shifts, photon scale.
void compare_per_pixel_estimators(FitPrecision precision) {
  const Device gpu = gpu_device();
  const Shape shapes[] = {{5, 11, 400, 40}, {7, 7, 400, 40}, {9, 9, 400, 324}, {13, 13, 2000, 1000}};
  const std::int64_t counts[] = {1, 1000, 20000};
  std::vector<ShapeModel> models;
  fit_detail::for_each_model([&]<class M>(M) { models.push_back(M::shape); });
  for (ShapeModel model : models)
    for (Estimator estimator : {Estimator::wlsq, Estimator::mle})
      for (int variant = 0; variant < 2; ++variant) {
          // variant 1: sCMOS variance shifts and a photon conversion (ADU = photons/0.8 + 2).
          const bool fp64 = precision == FitPrecision::fp64;  // automatic is float
          FitSettings st;
          st.model = model;
          st.precision = precision;
          st.estimator = estimator;
          if (variant == 1) {
            st.photon_offset = 2.0;
            st.photons_per_value = 0.8;
          }
          auto cuda = make_fit_engine(gpu, st);
          FitSettings reference = st;
          reference.precision = FitPrecision::fp64;  // the CPU reference computes in double
          auto cpu = make_cpu_fit_engine(reference, 0);
          for (const Shape& shape : shapes)
            for (std::int64_t count : counts) {
              if (nanoscopy::test::gpu_sanitizer_run() && count > 1000) continue;
              // As tests/test_fit_mle.cpp ("GPU test's shapes"): 3D needs ≥ 9 px a side; float's elliptical σx
              // across a 5-px side under sCMOS shifts is barely determined.
              if (model == ShapeModel::astigmatic && std::min(shape.w, shape.h) < 9) continue;
              if (!fp64 && model == ShapeModel::elliptical && variant == 1 && std::min(shape.w, shape.h) < 7)
                continue;
              const SpotRecipe recipe = recipe_for(shape, model);
              const auto spots = simulate_spots(recipe, count, 2000 + static_cast<std::uint64_t>(count) + shape.w);
              std::vector<float> shift;
              if (variant == 1) {
                shift.resize(spots.pixels.size());
                for (std::size_t i = 0; i < shift.size(); ++i) shift[i] = i % 17 == 3 ? 50.0f : 0.25f * static_cast<float>(i % 5);
              }
              for (bool u16 : {true, false}) {
                char what[160];
                std::snprintf(what, sizeof what, "%s %s %s%s %d×%d %lld fits %s", to_string(estimator).c_str(),
                              fp64 ? "fp64" : "fp32", to_string(model).c_str(), variant ? " shifted" : "", shape.w,
                              shape.h, static_cast<long long>(count), u16 ? "uint16" : "float32");
                RoiBatch b = batch_of(spots, u16);
                b.variance_shift = shift.empty() ? nullptr : shift.data();
                std::vector<FitResult> g(static_cast<std::size_t>(count)), c(static_cast<std::size_t>(count));
                cuda->fit(b, g);
                cpu->fit(b, c);
                const auto a = compare_fits(g, c, shape.w, shape.h, fp64, what);
                MESSAGE(what << ": equal status " << a.equal_status << ", same outcome " << a.same_outcome << "/"
                             << a.fits << ", well conditioned " << a.well_conditioned << ", beyond tolerance "
                             << a.field_mismatch << ", beyond 0.05 px " << a.gross_mismatch << ", max |Δ| "
                             << a.max_position_difference << " px");
                check_fit_agreement(a, fp64, what, true, variant == 1, model == ShapeModel::astigmatic ? 2 : 1);
              }
            }
        }
}

TEST_CASE("CUDA wlsq and mle equal the CPU reference in double") {
  compare_per_pixel_estimators(FitPrecision::fp64);
}

// Float wlsq and mle (their automatic precision on CUDA since solve_damped judges negligible information per
// relative change) against the double reference, with the host test's rules (tests/test_fit_mle.cpp).
TEST_CASE("CUDA wlsq and mle in float (their automatic precision) against the double reference") {
  compare_per_pixel_estimators(FitPrecision::automatic);
}

TEST_CASE("CUDA: every lanes-per-fit variant, initial guesses, degenerate ROIs") {
  SpotRecipe recipe;
  const auto spots = simulate_spots(recipe, 3000, 77);
  FitSettings st;
  auto cpu = make_cpu_fit_engine(st, 0);
  std::vector<FitResult> c(3000);
  cpu->fit(batch_of(spots, true), c);

#ifdef NANOSCOPY_TEST_FIT_DEVICE_ENTRY
  for (FitPrecision precision : {FitPrecision::automatic, FitPrecision::fp64})
    for (int lanes : {0, 1, 2, 4, 8, 16, 32}) {
      const bool fp64 = precision == FitPrecision::fp64;
      if (fp64 && lanes != 0 && lanes != 4) continue;  // fp64 kernels: 4 lanes only (fit_launch.cuh)
      CAPTURE(lanes);
      CAPTURE(fp64);
      FitSettings sp = st;
      sp.precision = precision;
      cuda::FitPlanOptions options;
      options.lanes_per_fit = lanes;
      auto backend = cuda::make_cuda_fit_engine(gpu_device().gpus, sp, options);
      std::vector<FitResult> g(3000);
      backend->fit(batch_of(spots, true), g);
      check_fit_agreement(compare_fits(g, c, recipe.width, recipe.height, fp64, "lanes"), fp64, "lanes");
    }
  {
    FitSettings sp = st;
    sp.precision = FitPrecision::fp64;
    cuda::FitPlanOptions options;
    options.lanes_per_fit = 8;
    CHECK_THROWS_AS(cuda::make_cuda_fit_engine(gpu_device().gpus, sp, options), UsageError);
  }
  // Small chunks: the pipelined path over several streams.
  {
    cuda::FitPlanOptions options;
    options.max_chunk_fits = 256;
    cuda::FitPlan plan(gpu_device().gpus.front(), st, options);
    std::vector<FitResult> g(3000);
    plan.fit(batch_of(spots, false), g);
    check_fit_agreement(compare_fits(g, c, recipe.width, recipe.height, false, "chunks of 256"), false,
                        "chunks of 256");
    plan.fit(batch_of(spots, true), g);  // the plan is reused
    check_fit_agreement(compare_fits(g, c, recipe.width, recipe.height, false, "chunks of 256, again"), false,
                        "chunks of 256, again");
  }
#endif

  auto cuda_backend = make_fit_engine(gpu_device(), st);
  // Guesses: the truth, perturbed.
  std::vector<SpotGuess> guesses;
  for (const auto& t : spots.truth)
    guesses.push_back(
        {static_cast<float>(t.x + 0.3), static_cast<float>(t.y - 0.2), static_cast<float>(t.sigma * 1.2)});
  std::vector<FitResult> g(3000);
  cuda_backend->fit(batch_of(spots, true, guesses.data()), g);
  cpu->fit(batch_of(spots, true, guesses.data()), c);
  check_fit_agreement(compare_fits(g, c, recipe.width, recipe.height, false, "guesses"), false, "guesses");

  // Degenerate ROIs: constant, one bright pixel, NaN pixel, a spot far outside.
  const std::vector<float> bad = test::degenerate_rois(spots.pixels);
  RoiBatch b = test::degenerate_batch(bad);
  std::vector<FitResult> gb(4), cb(4);
  cuda_backend->fit(b, gb);
  cpu->fit(b, cb);
  CHECK(gb[0].status == FitStatus::invalid_roi);
  CHECK(gb[2].status == FitStatus::invalid_roi);
  for (int k = 0; k < 4; ++k) {
    CAPTURE(k);
    // The float path (the default): see test_fit_models.cpp's degenerate case for the two measured exceptions.
    CHECK(test::degenerate_agree(gb[k], cb[k], st.min_sigma));
    if (converged(gb[k].status)) CHECK(std::isfinite(gb[k].x));
  }
  {
    FitSettings sd = st;
    sd.precision = FitPrecision::fp64;
    std::vector<FitResult> gd(4);
    make_fit_engine(gpu_device(), sd)->fit(b, gd);
    for (int k = 0; k < 4; ++k) {
      CAPTURE(k);
      CHECK(gd[k].status == cb[k].status);
      CHECK(gd[k].iterations == cb[k].iterations);
    }
  }

  // An empty batch.
  b.count = 0;
  b.pixels = nullptr;
  CHECK_NOTHROW(cuda_backend->fit(b, std::span<FitResult>()));
  CHECK_THROWS_AS(cuda_backend->fit(batch_of(spots, true), std::span<FitResult>(g.data(), 10)), UsageError);
}

#ifdef NANOSCOPY_TEST_FIT_DEVICE_ENTRY
TEST_CASE("CUDA: the device-data entry point gives the host entry's results; 0 fits is fine") {
  SpotRecipe recipe;
  recipe.width = 7;
  recipe.height = 7;
  const std::int64_t count = 20000;
  const auto spots = simulate_spots(recipe, count, 31);
  FitSettings st;
  const int device = gpu_device().gpus.front();
  cuda::FitPlan plan(device, st);
  std::vector<FitResult> host(static_cast<std::size_t>(count));
  plan.fit(batch_of(spots, true), host);

  REQUIRE(cudaSetDevice(device) == cudaSuccess);
  void* d_pixels = nullptr;
  FitResult* d_out = nullptr;
  cudaStream_t stream = nullptr;
  const std::size_t bytes = spots.pixels_u16.size() * sizeof(std::uint16_t);
  REQUIRE(cudaMalloc(&d_pixels, bytes) == cudaSuccess);
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&d_out), static_cast<std::size_t>(count) * sizeof(FitResult)) ==
          cudaSuccess);
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  REQUIRE(cudaMemcpy(d_pixels, spots.pixels_u16.data(), bytes, cudaMemcpyHostToDevice) == cudaSuccess);
  plan.fit_device(d_pixels, PixelType::u16, count, 7, 7, nullptr, d_out, stream);
  plan.fit_device(d_pixels, PixelType::u16, 0, 7, 7, nullptr, d_out, stream);  // nothing to do
  std::vector<FitResult> device_results(static_cast<std::size_t>(count));
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  REQUIRE(cudaMemcpy(device_results.data(), d_out, static_cast<std::size_t>(count) * sizeof(FitResult),
                     cudaMemcpyDeviceToHost) == cudaSuccess);
  std::int64_t identical = 0;
  for (std::int64_t k = 0; k < count; ++k)
    identical += std::memcmp(&host[k], &device_results[k], sizeof(FitResult)) == 0 ? 1 : 0;
  CHECK(identical == count);

  // Timing of the kernel alone, data resident (reported, not asserted).
  cudaEvent_t start, stop;
  REQUIRE(cudaEventCreate(&start) == cudaSuccess);
  REQUIRE(cudaEventCreate(&stop) == cudaSuccess);
  REQUIRE(cudaEventRecord(start, stream) == cudaSuccess);
  plan.fit_device(d_pixels, PixelType::u16, count, 7, 7, nullptr, d_out, stream);
  REQUIRE(cudaEventRecord(stop, stream) == cudaSuccess);
  REQUIRE(cudaEventSynchronize(stop) == cudaSuccess);
  float ms = 0;
  REQUIRE(cudaEventElapsedTime(&ms, start, stop) == cudaSuccess);
  MESSAGE("7×7 device-resident: " << count / (ms * 1e-3) << " fits/s (" << count << " fits)");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
  cudaFree(d_pixels);
  cudaFree(d_out);
}
#endif

TEST_CASE("cuda:all splits a batch over every GPU and gives the single-GPU results") {
  SpotRecipe recipe;
  recipe.width = recipe.height = 9;
  // large enough to be split (one part per 16,384 fits at most)
  const std::int64_t count = nanoscopy::test::gpu_sanitizer_run() ? 20000 : 100000;
  const auto spots = simulate_spots(recipe, count, 77);
  FitSettings st;
  const Device all = select_device(DeviceRequest::parse("cuda:all"), true);
  MESSAGE("cuda:all uses " << all.gpus.size() << " GPU(s)");
  Device first = all;
  first.gpus = {all.gpus.front()};
  std::vector<FitResult> split(static_cast<std::size_t>(count)), single(static_cast<std::size_t>(count));
  make_fit_engine(all, st)->fit(batch_of(spots, true), split);
  make_fit_engine(first, st)->fit(batch_of(spots, true), single);
  std::int64_t identical = 0;
  for (std::int64_t k = 0; k < count; ++k)
    identical += std::memcmp(&split[static_cast<std::size_t>(k)], &single[static_cast<std::size_t>(k)], sizeof(FitResult)) == 0;
  CHECK(identical == count);
}
