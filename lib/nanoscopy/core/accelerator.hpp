// What an accelerator backend gives the registry: one table of entry points.
// kernels/ (CUDA) fills one in kernels/common/accelerator_cuda.cpp; the
// registry (backend/registry.cpp) holds the one `#if` that picks the table this
// build has. A second accelerator (HIP, SYCL, …) is one more table and one more
// branch there — no tool, runner or domain file changes. It lives in core/, the
// bottom layer, so that kernels/ implements it without including anything above
// the domain engines (imports run one way: core ← domains ← kernels ← backend).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/core/device.hpp"

namespace nanoscopy {

class FitEngine;
class DetectEngine;
class LocalizeEngine;
class SmreEngine;
class SofiEngine;
class FrcEngine;
class DecorrEngine;
class CorrelationEngine;
class RenderEngine;
class DeconvolveEngine;
class EsrrfEngine;
struct EsrrfGeometry;
struct EsrrfSettings;
struct FitSettings;
struct FitResult;
struct RoiBatch;
struct DetectSettings;
struct LocalizeSettings;
struct SmreProblem;
struct SofiProblem;
struct FrcGeometry;
struct DecorrGeometry;
struct CorrelationGeometry;
struct RenderGeometry;

struct Accelerator {
  const char* name;  // "cuda": the prefix of its devices' names (cuda:0)

  // Devices and versions.
  std::vector<GpuInfo> (*list_devices)(std::string* why_none);
  int (*driver_version)();   // 0 when unknown
  int (*runtime_version)();  // 0 when unknown
  double (*peak_memory_bandwidth)(int gpu);  // bytes/s
  // Empty when this build runs on `gpu` (−1: every visible GPU), else one line saying why not (a
  // driver older than the runtime, a card without code in the binary) and what to do.
  std::string (*build_mismatch)(int gpu);

  // One factory per engine; `gpu` is the device index (the fit spreads over all of `gpus`).
  std::unique_ptr<FitEngine> (*make_fit_engine)(const std::vector<int>& gpus, const FitSettings& settings);
  std::unique_ptr<DetectEngine> (*make_detect_engine)(int gpu, const DetectSettings& settings);
  std::unique_ptr<LocalizeEngine> (*make_localize_engine)(int gpu, const LocalizeSettings& settings);
  std::unique_ptr<SmreEngine> (*make_smre_engine)(int gpu, const SmreProblem& problem, std::int64_t max_batch);
  std::unique_ptr<SofiEngine> (*make_sofi_engine)(int gpu, const SofiProblem& problem, std::int64_t chunk_frames);
  std::unique_ptr<FrcEngine> (*make_frc_engine)(int gpu, const FrcGeometry& geometry);
  std::unique_ptr<DecorrEngine> (*make_decorr_engine)(int gpu, const DecorrGeometry& geometry);
  std::unique_ptr<CorrelationEngine> (*make_correlation_engine)(int gpu, const CorrelationGeometry& geometry);
  std::unique_ptr<RenderEngine> (*make_render_engine)(int gpu, const RenderGeometry& geometry);
  std::unique_ptr<DeconvolveEngine> (*make_deconvolve_engine)(int gpu);
  std::unique_ptr<EsrrfEngine> (*make_esrrf_engine)(int gpu, const EsrrfGeometry& geometry,
                                                    const EsrrfSettings& settings, std::int64_t chunk_frames);

  // bench: kernels timed on data already on the device (seconds per repeat).
  double (*time_device_resident_fit)(int gpu, const FitSettings& settings, const RoiBatch& batch, int repeats,
                                     std::span<FitResult> out);
  double (*time_device_resident_sofi)(int gpu, const SofiProblem& problem, std::int64_t frames, int repeats,
                                      std::int64_t* bytes);
  // Bytes/s the GPUs take together from pinned host memory, `bytes` per copy: the upload ceiling.
  double (*measure_upload_bandwidth)(const std::vector<int>& gpus, std::size_t bytes);
  // A localize engine that only uploads each chunk and finds nothing: the pipeline's floor.
  std::unique_ptr<LocalizeEngine> (*make_upload_only_engine)(int gpu);
};

}  // namespace nanoscopy
