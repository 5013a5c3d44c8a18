#include "common/build_fit.hpp"

#include <cuda_runtime.h>

#include <algorithm>

#include "nanoscopy/core/cuda_build_messages.hpp"

namespace nanoscopy::cuda {
namespace {

// A kernel of this library, compiled like every other: if the card has no code for
// it, it has none for any of them.
__global__ void image_probe_kernel() {}

}  // namespace

std::string kernel_image_problem(int gpu, const void* kernel, const std::string& architectures) {
  int previous = 0;
  cudaGetDevice(&previous);
  cudaError_t err = cudaSetDevice(gpu);
  cudaFuncAttributes attributes{};
  if (err == cudaSuccess) err = cudaFuncGetAttributes(&attributes, kernel);
  cudaSetDevice(previous);
  if (err != cudaErrorNoKernelImageForDevice && err != cudaErrorInvalidDeviceFunction &&
      err != cudaErrorUnsupportedPtxVersion)
    return {};  // runs (or fails for another reason, which the engine's own checks report)
  cudaGetLastError();
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, gpu) != cudaSuccess) return {};
  if (err == cudaErrorUnsupportedPtxVersion) {
    int driver = 0;
    cudaDriverGetVersion(&driver);
    return ptx_too_new_message(gpu, prop.name, prop.major, prop.minor, architectures, driver);
  }
  return no_code_message(gpu, prop.name, prop.major, prop.minor, architectures);
}

std::string build_mismatch(int gpu) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  int driver = 0;
  cudaDriverGetVersion(&driver);  // 0: no driver installed at all (which also reads "insufficient")
  if (err == cudaErrorInsufficientDriver && driver > 0) {
    cudaGetLastError();
    return driver_too_old_message(driver, CUDART_VERSION);
  }
  if (err != cudaSuccess) {
    cudaGetLastError();
    return {};  // no driver or no GPU: nothing this build could fix
  }
  const int first = gpu < 0 ? 0 : gpu, last = gpu < 0 ? count : std::min(gpu + 1, count);
  for (int g = first; g < last; ++g)
    if (std::string problem =
            kernel_image_problem(g, reinterpret_cast<const void*>(&image_probe_kernel), NANOSCOPY_CUDA_ARCHITECTURES);
        !problem.empty())
      return problem;
  return {};
}

}  // namespace nanoscopy::cuda
