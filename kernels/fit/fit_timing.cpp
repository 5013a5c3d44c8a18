#include "fit/fit_timing.hpp"

#include <algorithm>
#include <cstring>

#include "common/owners.hpp"
#include "fit/engine_cuda.hpp"

namespace nanoscopy::cuda {

double time_device_resident_fit(int device, const FitSettings& settings, const RoiBatch& batch, int repeats,
                                std::span<FitResult> out) {
  batch.validate();
  DeviceGuard guard(device);
  FitPlan plan(device, settings);
  const auto bytes = static_cast<std::size_t>(batch.count * batch.roi_pixels()) * bytes_per_pixel(batch.type);
  DeviceBuffer<unsigned char> pixels(std::max<std::size_t>(bytes, 1));
  DeviceBuffer<FitResult> results(static_cast<std::size_t>(std::max<std::int64_t>(batch.count, 1)));
  Stream stream;
  NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(pixels.get(), batch.pixels, bytes, cudaMemcpyHostToDevice, stream.get()));
  // Warm-up: module load, first-touch of the plan's state.
  plan.fit_device(pixels.get(), batch.type, batch.count, batch.width, batch.height, nullptr, results.get(), stream.get());
  stream.synchronize();

  Event start, stop;
  std::vector<float> ms;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    start.record(stream.get());
    plan.fit_device(pixels.get(), batch.type, batch.count, batch.width, batch.height, nullptr, results.get(),
                    stream.get());
    stop.record(stream.get());
    stop.synchronize();
    ms.push_back(stop.elapsed_ms_since(start));
  }
  NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(out.data(), results.get(), static_cast<std::size_t>(batch.count) * sizeof(FitResult),
                                       cudaMemcpyDeviceToHost, stream.get()));
  stream.synchronize();
  std::nth_element(ms.begin(), ms.begin() + static_cast<std::ptrdiff_t>(ms.size() / 2), ms.end());
  return static_cast<double>(ms[ms.size() / 2]) * 1e-3;
}

}  // namespace nanoscopy::cuda
