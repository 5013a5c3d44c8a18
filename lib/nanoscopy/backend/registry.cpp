// The backend registry: the one place in the code base that asks whether the
// CUDA backend was compiled in.
#include <cstdio>
#include <thread>

#include "nanoscopy/backend/device.hpp"
#include "nanoscopy/config.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/fit/engine.hpp"
#include "nanoscopy/fit/fit_timing.hpp"

#if NANOSCOPY_HAVE_CUDA
#include "common/device_query.hpp"
#include "fit/engine_cuda.hpp"
#include "fit/fit_timing.hpp"
#endif

namespace nanoscopy {

bool cuda_compiled() { return NANOSCOPY_HAVE_CUDA != 0; }

std::vector<GpuInfo> list_gpus(std::string* why_none) {
  std::vector<GpuInfo> out;
#if NANOSCOPY_HAVE_CUDA
  out = cuda::query_gpus(why_none);
#else
  if (why_none) *why_none = "this build has no CUDA backend (configured with NANOSCOPY_CUDA=OFF or without nvcc)";
#endif
  return out;
}

int cuda_driver_version() {
#if NANOSCOPY_HAVE_CUDA
  return cuda::driver_version();
#else
  return 0;
#endif
}

int cuda_runtime_version() {
#if NANOSCOPY_HAVE_CUDA
  return cuda::runtime_version();
#else
  return 0;
#endif
}

std::unique_ptr<FitEngine> make_fit_engine(const Device& device, const FitSettings& settings) {
  if (device.kind == DeviceKind::cpu) return make_cpu_fit_engine(settings, device.cpu_threads);
#if NANOSCOPY_HAVE_CUDA
  return cuda::make_cuda_fit_engine(device.gpus, settings);
#else
  throw DeviceError("--device", "this build has no CUDA backend");
#endif
}

std::optional<double> time_device_resident_fit(const Device& device, const FitSettings& settings,
                                               const RoiBatch& batch, int repeats, std::span<FitResult> out) {
  if (device.kind == DeviceKind::cpu || device.gpus.empty()) return std::nullopt;
#if NANOSCOPY_HAVE_CUDA
  return cuda::time_device_resident_fit(device.gpus.front(), settings, batch, repeats, out);
#else
  (void)settings, (void)batch, (void)repeats, (void)out;
  return std::nullopt;
#endif
}

}  // namespace nanoscopy

// Spot detection (fit2d): the CPU reference always, CUDA on the device's first GPU.
#include "nanoscopy/loc/detect/engine.hpp"
#if NANOSCOPY_HAVE_CUDA
#include "loc/detect_engine_cuda.hpp"
#endif

namespace nanoscopy {

std::unique_ptr<DetectEngine> make_detect_engine(const Device& device, const DetectSettings& settings) {
  if (device.kind == DeviceKind::cpu) return make_cpu_detect_engine(settings, device.cpu_threads);
#if NANOSCOPY_HAVE_CUDA
  if (device.gpus.empty()) throw DeviceError("--device", "no GPU selected");
  return cuda::make_cuda_detect_engine(device.gpus.front(), settings);
#else
  throw DeviceError("--device", "this build has no CUDA backend");
#endif
}

}  // namespace nanoscopy

// fit2d's detect → cut → fit per chunk: the CPU path always, CUDA (everything
// on the device's first GPU) when compiled in.
#include "nanoscopy/loc/localize_engine.hpp"
#if NANOSCOPY_HAVE_CUDA
#include "loc/localize_engine_cuda.hpp"
#endif

namespace nanoscopy {

std::unique_ptr<LocalizeEngine> make_localize_engine(const Device& device, const LocalizeSettings& settings) {
  if (device.kind == DeviceKind::cpu) return make_cpu_localize_engine(settings, device.cpu_threads);
#if NANOSCOPY_HAVE_CUDA
  if (device.gpus.empty()) throw DeviceError("--device", "no GPU selected");
  return cuda::make_cuda_localize_engine(device.gpus.front(), settings);
#else
  throw DeviceError("--device", "this build has no CUDA backend");
#endif
}

}  // namespace nanoscopy

// smre: ADMM on frame batches; the CPU reference always, CUDA (every array of a
// batch on the device's first GPU) when compiled in.
#include "nanoscopy/smre/engine.hpp"
#if NANOSCOPY_HAVE_CUDA
#include "smre/engine_cuda.hpp"
#endif

namespace nanoscopy {

std::unique_ptr<SmreEngine> make_smre_engine(const Device& device, const SmreProblem& problem,
                                             std::int64_t max_batch) {
  if (device.kind == DeviceKind::cpu) return make_cpu_smre_engine(problem, device.cpu_threads);
#if NANOSCOPY_HAVE_CUDA
  if (device.gpus.empty()) throw DeviceError("--device", "no GPU selected");
  return cuda::make_cuda_smre_engine(device.gpus.front(), problem, max_batch);
#else
  (void)max_batch;
  throw DeviceError("--device", "this build has no CUDA backend");
#endif
}

}  // namespace nanoscopy

// sofi: cumulant sums of frame blocks; the CPU reference always, CUDA (sums on
// the device's first GPU, chunks streamed from pinned buffers) when compiled in.
#include "nanoscopy/sofi/engine.hpp"
#if NANOSCOPY_HAVE_CUDA
#include "common/device_query.hpp"
#include "sofi/engine_cuda.hpp"
#endif

namespace nanoscopy {

std::unique_ptr<SofiEngine> make_sofi_engine(const Device& device, const SofiPlan& plan, std::int64_t chunk_frames) {
  if (device.kind == DeviceKind::cpu) return make_cpu_sofi_engine(plan, chunk_frames, device.cpu_threads);
#if NANOSCOPY_HAVE_CUDA
  if (device.gpus.empty()) throw DeviceError("--device", "no GPU selected");
  return cuda::make_cuda_sofi_engine(device.gpus.front(), plan, chunk_frames);
#else
  (void)chunk_frames;
  throw DeviceError("--device", "this build has no CUDA backend");
#endif
}

std::optional<SofiDeviceTiming> time_device_resident_sofi(const Device& device, const SofiPlan& plan,
                                                          std::int64_t frames, int repeats) {
  if (device.kind == DeviceKind::cpu || device.gpus.empty()) return std::nullopt;
#if NANOSCOPY_HAVE_CUDA
  const int gpu = device.gpus.front();
  std::int64_t bytes = 0;
  const double seconds = cuda::time_device_resident_sofi(gpu, plan, frames, repeats, &bytes);
  return SofiDeviceTiming{seconds, static_cast<double>(bytes), cuda::peak_memory_bandwidth(gpu)};
#else
  (void)plan, (void)frames, (void)repeats;
  return std::nullopt;
#endif
}

}  // namespace nanoscopy

// frc: window, FFT and ring sums; the CPU reference (FFTW) always, CUDA
// (cuFFT, on the device's first GPU) when compiled in.
#include "nanoscopy/frc/engine.hpp"
#if NANOSCOPY_HAVE_CUDA
#include "frc/engine_cuda.hpp"
#endif

namespace nanoscopy {

std::unique_ptr<FrcEngine> make_frc_engine(const Device& device, const FrcGeometry& geometry) {
  if (device.kind == DeviceKind::cpu) return make_cpu_frc_engine(geometry);
#if NANOSCOPY_HAVE_CUDA
  if (device.gpus.empty()) throw DeviceError("--device", "no GPU selected");
  return cuda::make_cuda_frc_engine(device.gpus.front(), geometry);
#else
  (void)geometry;
  throw DeviceError("--device", "this build has no CUDA backend");
#endif
}

}  // namespace nanoscopy
