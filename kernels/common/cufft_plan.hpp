// cuFFT for the engines that transform on the GPU (frc, undrift): every cuFFT
// call goes through NANOSCOPY_CUFFT_CHECK, which throws DeviceError naming the
// call, its result, the file, the line and the device; CufftPlan owns a plan.
#pragma once

#include <cufft.h>

namespace nanoscopy::cuda {

[[noreturn]] void throw_cufft_error(cufftResult r, const char* call, const char* file, int line);

inline void check_cufft(cufftResult r, const char* call, const char* file, int line) {
  if (r != CUFFT_SUCCESS) throw_cufft_error(r, call, file, line);
}

// A cuFFT plan handle: non-copyable, destroyed without throwing. The make_*
// calls plan `batch` transforms of height x width at once (cufftMakePlanMany).
class CufftPlan {
 public:
  CufftPlan() = default;
  ~CufftPlan();
  CufftPlan(const CufftPlan&) = delete;
  CufftPlan& operator=(const CufftPlan&) = delete;

  // Double real-to-complex, out of place, dense: images height * width apart,
  // half spectra height * (width / 2 + 1) apart.
  void make_many_d2z(int height, int width, int batch);
  // Single precision, the same dense layout as make_many_d2z.
  void make_many_r2c(int height, int width, int batch);
  // Single complex-to-real in place: half spectra of height * (width / 2 + 1)
  // values, each transformed into the same memory as height rows of
  // 2 * (width / 2 + 1) floats (the first width of each row are the result).
  void make_many_c2r_in_place(int height, int width, int batch);
  cufftHandle get() const { return plan_; }

 private:
  void create();
  cufftHandle plan_ = 0;
  bool valid_ = false;
};

}  // namespace nanoscopy::cuda

#define NANOSCOPY_CUFFT_CHECK(call) ::nanoscopy::cuda::check_cufft((call), #call, __FILE__, __LINE__)
