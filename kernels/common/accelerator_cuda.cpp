#include "common/accelerator_cuda.hpp"

#include "common/build_fit.hpp"
#include "common/device_query.hpp"
#include "common/upload_probe.hpp"
#include "fit/engine_cuda.hpp"
#include "fit/fit_timing.hpp"
#include "frc/decorr_engine_cuda.hpp"
#include "frc/engine_cuda.hpp"
#include "loc/detect_engine_cuda.hpp"
#include "loc/localize_engine_cuda.hpp"
#include "render/engine_cuda.hpp"
#include "smre/engine_cuda.hpp"
#include "sofi/deconvolve_engine_cuda.hpp"
#include "sofi/engine_cuda.hpp"
#include "sofi/esrrf_engine_cuda.hpp"
#include "undrift/engine_cuda.hpp"

namespace nanoscopy::cuda {

const Accelerator& accelerator() {
  // Lambdas where a factory has default arguments (a function pointer cannot carry them).
  static const Accelerator table{
      .name = "cuda",
      .list_devices = [](std::string* why_none) { return query_gpus(why_none); },
      .driver_version = driver_version,
      .runtime_version = runtime_version,
      .peak_memory_bandwidth = peak_memory_bandwidth,
      .build_mismatch = build_mismatch,
      .make_fit_engine = [](const std::vector<int>& gpus,
                            const FitSettings& settings) { return make_cuda_fit_engine(gpus, settings); },
      .make_detect_engine = make_cuda_detect_engine,
      .make_localize_engine = make_cuda_localize_engine,
      .make_smre_engine = make_cuda_smre_engine,
      .make_sofi_engine = make_cuda_sofi_engine,
      .make_frc_engine = make_cuda_frc_engine,
      .make_decorr_engine = make_cuda_decorr_engine,
      .make_correlation_engine = make_cuda_correlation_engine,
      .make_render_engine = make_cuda_render_engine,
      .make_deconvolve_engine = make_cuda_deconvolve_engine,
      .make_esrrf_engine = make_cuda_esrrf_engine,
      .time_device_resident_fit = time_device_resident_fit,
      .time_device_resident_sofi = [](int gpu, const SofiProblem& problem, std::int64_t frames, int repeats,
                                      std::int64_t* bytes) {
        return time_device_resident_sofi(gpu, problem, frames, repeats, bytes);
      },
      .measure_upload_bandwidth = measure_upload_bandwidth,
      .make_upload_only_engine = make_cuda_upload_only_engine,
  };
  return table;
}

}  // namespace nanoscopy::cuda
