#include "common/cufft_plan.hpp"

#include <cuda_runtime.h>

#include <string>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy::cuda {
namespace {

const char* cufft_error_name(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS:
      return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN:
      return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED:
      return "CUFFT_ALLOC_FAILED (out of device memory)";
    case CUFFT_INVALID_VALUE:
      return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR:
      return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED:
      return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED:
      return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE:
      return "CUFFT_INVALID_SIZE";
    default:
      return "cuFFT error";
  }
}

}  // namespace

void throw_cufft_error(cufftResult r, const char* call, const char* file, int line) {
  int device = -1;
  cudaGetDevice(&device);
  const std::string what = std::string(call) + " failed: " + cufft_error_name(r) + " (" +
                           std::to_string(static_cast<int>(r)) + ") at " + file + ":" + std::to_string(line);
  const std::string where = "cuda:" + std::to_string(device);
  if (r == CUFFT_ALLOC_FAILED) throw DeviceMemoryError(where, what);
  throw DeviceError(where, what);
}

CufftPlan::~CufftPlan() {
  if (valid_) cufftDestroy(plan_);
}

void CufftPlan::create() {
  NANOSCOPY_CUFFT_CHECK(cufftCreate(&plan_));
  valid_ = true;
}

void CufftPlan::make_many_d2z(int height, int width, int batch) {
  create();
  int n[2] = {height, width};
  std::size_t work = 0;
  NANOSCOPY_CUFFT_CHECK(cufftMakePlanMany(plan_, 2, n, nullptr, 1, height * width, nullptr, 1,
                                          height * (width / 2 + 1), CUFFT_D2Z, batch, &work));
}

void CufftPlan::make_many_r2c(int height, int width, int batch) {
  create();
  int n[2] = {height, width};
  std::size_t work = 0;
  NANOSCOPY_CUFFT_CHECK(cufftMakePlanMany(plan_, 2, n, nullptr, 1, height * width, nullptr, 1,
                                          height * (width / 2 + 1), CUFFT_R2C, batch, &work));
}

void CufftPlan::make_many_c2r_in_place(int height, int width, int batch) {
  create();
  const int columns = width / 2 + 1;
  int n[2] = {height, width};
  int in_embed[2] = {height, columns};       // complex elements
  int out_embed[2] = {height, 2 * columns};  // real elements: the padded rows of an in-place transform
  std::size_t work = 0;
  NANOSCOPY_CUFFT_CHECK(cufftMakePlanMany(plan_, 2, n, in_embed, 1, height * columns, out_embed, 1,
                                          height * 2 * columns, CUFFT_C2R, batch, &work));
}

}  // namespace nanoscopy::cuda
