// The backend registry: the one door from the tools (and bench) to the engines.
// A tool selects a Device (core/device.hpp) and asks here for the engine of an
// algorithm; the registry returns the CPU reference or, for a GPU device, the
// accelerator's engine (backend/accelerator.hpp). Domain code never includes
// this header: runners receive the engine they run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/core/device.hpp"
#include "nanoscopy/fit/engine.hpp"
#include "nanoscopy/frc/decorr.hpp"
#include "nanoscopy/frc/engine.hpp"
#include "nanoscopy/loc/detect/engine.hpp"
#include "nanoscopy/loc/localize_engine.hpp"
#include "nanoscopy/loc/render/engine.hpp"
#include "nanoscopy/loc/undrift/engine.hpp"
#include "nanoscopy/smre/engine.hpp"
#include "nanoscopy/sofi/deconvolve_engine.hpp"
#include "nanoscopy/sofi/engine.hpp"
#include "nanoscopy/sofi/esrrf_engine.hpp"

namespace nanoscopy {

// ------------------------------------------------------------ devices

bool cuda_compiled();  // an accelerator backend is compiled in (NANOSCOPY_HAVE_CUDA)
std::vector<GpuInfo> list_gpus(std::string* why_none = nullptr);  // empty without CUDA build or GPU
int cuda_driver_version();   // 0 when unknown
int cuda_runtime_version();
// Empty when this build's kernels run on `gpu` (−1: every visible GPU; also empty without a CUDA build,
// driver or GPU), else one line: a driver older than the runtime, or a card without code in the binary.
std::string cuda_build_mismatch(int gpu);  // 0 when unknown

// Resolves a request against what this machine has. DeviceError for cuda
// without a usable GPU or an index out of range; `auto` falls back to the CPU
// and, unless quiet, says why on stderr.
Device select_device(const DeviceRequest& request, bool quiet);

// "cpu (4 threads)", "cuda:0", or "cuda:all (0,1)" for several GPUs.
std::string device_label(const Device& device);

// ------------------------------------------------------------ engines
// CPU devices get the reference engine on device.cpu_threads threads; GPU
// devices the accelerator's. The fit spreads over all of the device's GPUs;
// fit2d's localize pipeline and sofi take one engine per GPU (the
// make_*_engines below) and share the frames out; every other engine runs on
// the device's first GPU and, where the device has several (cuda:all), says so
// once per process on stderr unless --quiet ("note: smre runs on one GPU
// (cuda:0) of the 2 that cuda:all asks for"). DeviceError when the build has no
// accelerator.

std::unique_ptr<FitEngine> make_fit_engine(const Device& device, const FitSettings& settings);
std::unique_ptr<DetectEngine> make_detect_engine(const Device& device, const DetectSettings& settings);
std::unique_ptr<LocalizeEngine> make_localize_engine(const Device& device, const LocalizeSettings& settings);
// `per_gpu` engines per GPU of the device, each with its own stream, buffers and
// thread (loc/localize_dispatch.hpp): with two, one uploads its chunk while the
// other detects and fits, which one engine does one after the other
// (localize_engines_per_gpu in loc/pipeline.hpp says when that pays). One on the CPU.
std::vector<std::unique_ptr<LocalizeEngine>> make_localize_engines(const Device& device, const LocalizeSettings& settings,
                                                                  int per_gpu = 1);
std::vector<std::unique_ptr<SofiEngine>> make_sofi_engines(const Device& device, const SofiProblem& problem,
                                                           std::int64_t chunk_frames);
std::unique_ptr<SmreEngine> make_smre_engine(const Device& device, const SmreProblem& problem,
                                             std::int64_t max_batch);
std::unique_ptr<SofiEngine> make_sofi_engine(const Device& device, const SofiProblem& problem, std::int64_t chunk_frames);
std::unique_ptr<FrcEngine> make_frc_engine(const Device& device, const FrcGeometry& geometry);
// Decorrelation analysis (frc decorr): FFTW on the CPU, cuFFT on a GPU.
std::unique_ptr<DecorrEngine> make_decorr_engine(const Device& device, const DecorrGeometry& geometry);
// RCC's correlations (fit2d undrift): FFTW on the CPU, cuFFT on a GPU.
std::unique_ptr<CorrelationEngine> make_correlation_engine(const Device& device, const CorrelationGeometry& geometry);
// fit2d render's accumulation: one thread on the CPU, atomics on a GPU.
std::unique_ptr<RenderEngine> make_render_engine(const Device& device, const RenderGeometry& geometry);
// eSRRF's radial gradient convergence and temporal sums (sofi esrrf); chunk_frames: the most per chunk.
std::unique_ptr<EsrrfEngine> make_esrrf_engine(const Device& device, const EsrrfGeometry& geometry,
                                               const EsrrfSettings& settings, std::int64_t chunk_frames);
// Balanced SOFI's Richardson-Lucy iterations.
std::unique_ptr<DeconvolveEngine> make_deconvolve_engine(const Device& device);

// ------------------------------------------------------------ bench
// Kernels timed on data already on the device; nullopt on the CPU.

// Seconds per repeat of fitting `batch` on the device's first GPU; `out` gets the fits.
std::optional<double> time_device_resident_fit(const Device& device, const FitSettings& settings,
                                               const RoiBatch& batch, int repeats, std::span<FitResult> out);

// The GPU's accumulate work alone, on `frames` random uint16 frames already in
// device memory: seconds per pass over them, the device-memory bytes one pass
// needs at least (every frame read once, the sums read and written), and the
// nominal peak memory bandwidth (bytes/s).
struct SofiDeviceTiming {
  double seconds = 0;
  double bytes = 0;
  double peak_bandwidth = 0;
};
std::optional<SofiDeviceTiming> time_device_resident_sofi(const Device& device, const SofiProblem& problem,
                                                          std::int64_t frames, int repeats);

// Bytes/s the device's GPUs take together from pinned host memory, `bytes` per copy (all GPUs at once): the
// ceiling of a pipeline that uploads every frame. nullopt on the CPU.
std::optional<double> measure_upload_bandwidth(const Device& device, std::size_t bytes);
// `per_gpu` engines per GPU that only upload each chunk (Accelerator::make_upload_only_engine), for bench
// localize's floor; none for the CPU.
std::vector<std::unique_ptr<LocalizeEngine>> make_upload_only_engines(const Device& device, int per_gpu);

}  // namespace nanoscopy
