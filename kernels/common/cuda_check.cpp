#include "common/cuda_check.hpp"

namespace nanoscopy::cuda {

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  int device = -1;
  cudaGetDevice(&device);  // best effort; the error itself is what matters
  std::string where = std::string(file) + ":" + std::to_string(line);
  cudaGetLastError();  // an allocation failure is not sticky: clear it so smaller pieces can follow
  const std::string what = std::string(call) + " failed: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) +
                           ") at " + where;
  if (err == cudaErrorMemoryAllocation) throw DeviceMemoryError("cuda:" + std::to_string(device), what);
  throw DeviceError("cuda:" + std::to_string(device), what);
}

}  // namespace nanoscopy::cuda
