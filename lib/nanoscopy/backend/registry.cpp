// The backend registry. The one `#if NANOSCOPY_HAVE_CUDA` of the code base picks
// the accelerator table this build has; everything below only asks the table.
#include "nanoscopy/backend/registry.hpp"

#include <algorithm>

#include "nanoscopy/core/accelerator.hpp"
#include "nanoscopy/config.hpp"
#include "nanoscopy/core/error.hpp"

#if NANOSCOPY_HAVE_CUDA
#include "common/accelerator_cuda.hpp"
#endif

namespace nanoscopy {
namespace {

// The accelerator compiled into this build, or null.
const Accelerator* compiled_accelerator() {
#if NANOSCOPY_HAVE_CUDA
  return &cuda::accelerator();
#else
  return nullptr;
#endif
}

// The accelerator a GPU device runs on; DeviceError when the build has none.
const Accelerator& accelerator_or_throw() {
  const Accelerator* a = compiled_accelerator();
  if (!a) throw DeviceError("--device", "this build has no CUDA backend");
  return *a;
}

// The device's first GPU (the engines that run on one).
int first_gpu(const Device& device) {
  if (device.gpus.empty()) throw DeviceError("--device", "no GPU selected");
  return device.gpus.front();
}

}  // namespace

bool cuda_compiled() { return compiled_accelerator() != nullptr; }

std::vector<GpuInfo> list_gpus(std::string* why_none) {
  if (const Accelerator* a = compiled_accelerator()) return a->list_devices(why_none);
  if (why_none) *why_none = "this build has no CUDA backend (configured with NANOSCOPY_CUDA=OFF or without nvcc)";
  return {};
}

int cuda_driver_version() {
  const Accelerator* a = compiled_accelerator();
  return a ? a->driver_version() : 0;
}

std::string cuda_build_mismatch(int gpu) {
  const Accelerator* a = compiled_accelerator();
  return a ? a->build_mismatch(gpu) : std::string();
}

int cuda_runtime_version() {
  const Accelerator* a = compiled_accelerator();
  return a ? a->runtime_version() : 0;
}

std::unique_ptr<FitEngine> make_fit_engine(const Device& device, const FitSettings& settings) {
  if (device.kind == DeviceKind::cpu) return make_cpu_fit_engine(settings, device.cpu_threads);
  return accelerator_or_throw().make_fit_engine(device.gpus, settings);
}

std::unique_ptr<DetectEngine> make_detect_engine(const Device& device, const DetectSettings& settings) {
  if (device.kind == DeviceKind::cpu) return make_cpu_detect_engine(settings, device.cpu_threads);
  const Accelerator& a = accelerator_or_throw();
  return a.make_detect_engine(first_gpu(device), settings);
}

std::unique_ptr<LocalizeEngine> make_localize_engine(const Device& device, const LocalizeSettings& settings) {
  if (device.kind == DeviceKind::cpu) return make_cpu_localize_engine(settings, device.cpu_threads);
  const Accelerator& a = accelerator_or_throw();
  return a.make_localize_engine(first_gpu(device), settings);
}

std::unique_ptr<SmreEngine> make_smre_engine(const Device& device, const SmreProblem& problem,
                                             std::int64_t max_batch) {
  if (device.kind == DeviceKind::cpu) return make_cpu_smre_engine(problem, device.cpu_threads);
  const Accelerator& a = accelerator_or_throw();
  return a.make_smre_engine(first_gpu(device), problem, max_batch);
}

std::unique_ptr<SofiEngine> make_sofi_engine(const Device& device, const SofiProblem& problem, std::int64_t chunk_frames) {
  if (device.kind == DeviceKind::cpu) return make_cpu_sofi_engine(problem, chunk_frames, device.cpu_threads);
  const Accelerator& a = accelerator_or_throw();
  return a.make_sofi_engine(first_gpu(device), problem, chunk_frames);
}

std::unique_ptr<FrcEngine> make_frc_engine(const Device& device, const FrcGeometry& geometry) {
  if (device.kind == DeviceKind::cpu) return make_cpu_frc_engine(geometry);
  const Accelerator& a = accelerator_or_throw();
  return a.make_frc_engine(first_gpu(device), geometry);
}

std::unique_ptr<CorrelationEngine> make_correlation_engine(const Device& device, const CorrelationGeometry& geometry) {
  if (device.kind == DeviceKind::cpu) return make_cpu_correlation_engine(geometry, std::max(device.cpu_threads, 1));
  const Accelerator& a = accelerator_or_throw();
  return a.make_correlation_engine(first_gpu(device), geometry);
}

std::unique_ptr<RenderEngine> make_render_engine(const Device& device, const RenderGeometry& geometry) {
  if (device.kind == DeviceKind::cpu) return make_cpu_render_engine(geometry);
  const Accelerator& a = accelerator_or_throw();
  return a.make_render_engine(first_gpu(device), geometry);
}

std::unique_ptr<DeconvolveEngine> make_deconvolve_engine(const Device& device) {
  if (device.kind == DeviceKind::cpu) return make_cpu_deconvolve_engine();
  const Accelerator& a = accelerator_or_throw();
  return a.make_deconvolve_engine(first_gpu(device));
}

std::optional<double> time_device_resident_fit(const Device& device, const FitSettings& settings,
                                               const RoiBatch& batch, int repeats, std::span<FitResult> out) {
  const Accelerator* a = compiled_accelerator();
  if (!a || device.kind == DeviceKind::cpu || device.gpus.empty()) return std::nullopt;
  return a->time_device_resident_fit(device.gpus.front(), settings, batch, repeats, out);
}

std::optional<SofiDeviceTiming> time_device_resident_sofi(const Device& device, const SofiProblem& problem,
                                                          std::int64_t frames, int repeats) {
  const Accelerator* a = compiled_accelerator();
  if (!a || device.kind == DeviceKind::cpu || device.gpus.empty()) return std::nullopt;
  const int gpu = device.gpus.front();
  std::int64_t bytes = 0;
  const double seconds = a->time_device_resident_sofi(gpu, problem, frames, repeats, &bytes);
  return SofiDeviceTiming{seconds, static_cast<double>(bytes), a->peak_memory_bandwidth(gpu)};
}

}  // namespace nanoscopy
