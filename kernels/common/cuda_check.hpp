// CUDA error checking: every runtime call goes through NANOSCOPY_CUDA_CHECK,
// which throws DeviceError naming the call, the file, the line and the device.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);

inline void check(cudaError_t err, const char* call, const char* file, int line) {
  if (err != cudaSuccess) throw_cuda_error(err, call, file, line);
}

}  // namespace nanoscopy::cuda

#define NANOSCOPY_CUDA_CHECK(call) ::nanoscopy::cuda::check((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch-configuration errors now, execution errors at the next sync.
#define NANOSCOPY_CUDA_CHECK_LAUNCH() ::nanoscopy::cuda::check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
