// The backend registry. The one `#if NANOSCOPY_HAVE_CUDA` of the code base picks
// the accelerator table this build has; everything below only asks the table.
#include "nanoscopy/backend/registry.hpp"

#include <algorithm>
#include <iostream>
#include <mutex>
#include <set>
#include <stdexcept>

#include "nanoscopy/core/accelerator.hpp"
#include "nanoscopy/config.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/progress.hpp"

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

// The device's first GPU (the engines that run on one). Where the device has
// several (cuda:all), says once per process and step, unless --quiet, that
// `step` uses only this one: the user asked for more.
int first_gpu(const Device& device, const char* step) {
  if (device.gpus.empty()) throw DeviceError("--device", "no GPU selected");
  if (device.gpus.size() > 1 && !quiet()) {
    static std::mutex mutex;
    static std::set<std::string> said;
    std::lock_guard lock(mutex);
    if (said.insert(step).second)
      std::cerr << "note: " << step << " runs on one GPU (cuda:" << device.gpus.front() << ") of the "
                << device.gpus.size() << " that cuda:all asks for\n";
  }
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
  return a.make_detect_engine(first_gpu(device, "detection"), settings);
}

std::unique_ptr<LocalizeEngine> make_localize_engine(const Device& device, const LocalizeSettings& settings) {
  if (device.kind == DeviceKind::cpu) return make_cpu_localize_engine(settings, device.cpu_threads);
  const Accelerator& a = accelerator_or_throw();
  return a.make_localize_engine(first_gpu(device, "localize"), settings);
}

std::vector<std::unique_ptr<LocalizeEngine>> make_localize_engines(const Device& device,
                                                                  const LocalizeSettings& settings, int per_gpu) {
  std::vector<std::unique_ptr<LocalizeEngine>> engines;
  if (device.kind == DeviceKind::cpu) {
    engines.push_back(make_cpu_localize_engine(settings, device.cpu_threads));
    return engines;
  }
  const Accelerator& a = accelerator_or_throw();
  if (device.gpus.empty()) throw DeviceError("--device", "no GPU selected");
  if (per_gpu < 1) throw std::logic_error("make_localize_engines: per_gpu must be at least 1");
  for (int k = 0; k < per_gpu; ++k)
    for (const int gpu : device.gpus) engines.push_back(a.make_localize_engine(gpu, settings));
  return engines;
}

std::vector<std::unique_ptr<SofiEngine>> make_sofi_engines(const Device& device, const SofiProblem& problem,
                                                           std::int64_t chunk_frames) {
  std::vector<std::unique_ptr<SofiEngine>> engines;
  if (device.kind == DeviceKind::cpu) {
    engines.push_back(make_cpu_sofi_engine(problem, chunk_frames, device.cpu_threads));
    return engines;
  }
  const Accelerator& a = accelerator_or_throw();
  if (device.gpus.empty()) throw DeviceError("--device", "no GPU selected");
  for (const int gpu : device.gpus) engines.push_back(a.make_sofi_engine(gpu, problem, chunk_frames));
  return engines;
}

std::string device_label(const Device& device) {
  if (device.kind == DeviceKind::cpu) return "cpu (" + std::to_string(device.cpu_threads) + " threads)";
  if (device.gpus.size() == 1) return "cuda:" + std::to_string(device.gpus.front());
  std::string out = "cuda:all (";
  for (std::size_t i = 0; i < device.gpus.size(); ++i) out += (i ? "," : "") + std::to_string(device.gpus[i]);
  return out + ")";
}

std::unique_ptr<SmreEngine> make_smre_engine(const Device& device, const SmreProblem& problem,
                                             std::int64_t max_batch) {
  if (device.kind == DeviceKind::cpu) return make_cpu_smre_engine(problem, device.cpu_threads);
  const Accelerator& a = accelerator_or_throw();
  return a.make_smre_engine(first_gpu(device, "smre"), problem, max_batch);
}

std::unique_ptr<SofiEngine> make_sofi_engine(const Device& device, const SofiProblem& problem, std::int64_t chunk_frames) {
  if (device.kind == DeviceKind::cpu) return make_cpu_sofi_engine(problem, chunk_frames, device.cpu_threads);
  const Accelerator& a = accelerator_or_throw();
  return a.make_sofi_engine(first_gpu(device, "sofi"), problem, chunk_frames);
}

std::unique_ptr<FrcEngine> make_frc_engine(const Device& device, const FrcGeometry& geometry) {
  if (device.kind == DeviceKind::cpu) return make_cpu_frc_engine(geometry);
  const Accelerator& a = accelerator_or_throw();
  return a.make_frc_engine(first_gpu(device, "frc"), geometry);
}

std::unique_ptr<DecorrEngine> make_decorr_engine(const Device& device, const DecorrGeometry& geometry) {
  if (device.kind == DeviceKind::cpu) return make_cpu_decorr_engine(geometry);
  const Accelerator& a = accelerator_or_throw();
  return a.make_decorr_engine(first_gpu(device, "frc decorr"), geometry);
}

std::unique_ptr<CorrelationEngine> make_correlation_engine(const Device& device, const CorrelationGeometry& geometry) {
  if (device.kind == DeviceKind::cpu) return make_cpu_correlation_engine(geometry, std::max(device.cpu_threads, 1));
  const Accelerator& a = accelerator_or_throw();
  return a.make_correlation_engine(first_gpu(device, "undrift (RCC correlations)"), geometry);
}

std::unique_ptr<RenderEngine> make_render_engine(const Device& device, const RenderGeometry& geometry) {
  if (device.kind == DeviceKind::cpu) return make_cpu_render_engine(geometry);
  const Accelerator& a = accelerator_or_throw();
  return a.make_render_engine(first_gpu(device, "render"), geometry);
}

std::unique_ptr<EsrrfEngine> make_esrrf_engine(const Device& device, const EsrrfGeometry& geometry,
                                               const EsrrfSettings& settings, std::int64_t chunk_frames) {
  if (device.kind == DeviceKind::cpu) return make_cpu_esrrf_engine(geometry, settings, chunk_frames, device.cpu_threads);
  const Accelerator& a = accelerator_or_throw();
  return a.make_esrrf_engine(first_gpu(device, "sofi esrrf"), geometry, settings, chunk_frames);
}

std::unique_ptr<DeconvolveEngine> make_deconvolve_engine(const Device& device) {
  if (device.kind == DeviceKind::cpu) return make_cpu_deconvolve_engine();
  const Accelerator& a = accelerator_or_throw();
  return a.make_deconvolve_engine(first_gpu(device, "the balanced-SOFI deconvolution"));
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

std::vector<std::unique_ptr<LocalizeEngine>> make_upload_only_engines(const Device& device, int per_gpu) {
  std::vector<std::unique_ptr<LocalizeEngine>> engines;
  const Accelerator* a = compiled_accelerator();
  if (!a || device.kind == DeviceKind::cpu) return engines;
  for (int k = 0; k < per_gpu; ++k)
    for (const int gpu : device.gpus) engines.push_back(a->make_upload_only_engine(gpu));
  return engines;
}

std::optional<double> measure_upload_bandwidth(const Device& device, std::size_t bytes) {
  const Accelerator* a = compiled_accelerator();
  if (!a || device.kind == DeviceKind::cpu || device.gpus.empty()) return std::nullopt;
  return a->measure_upload_bandwidth(device.gpus, bytes);
}

}  // namespace nanoscopy
