#include <doctest/doctest.h>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/device.hpp"
#include "nanoscopy/config.hpp"
#include "nanoscopy/core/error.hpp"

#if NANOSCOPY_HAVE_CUDA
#include "common/build_fit.hpp"
#include "turing_only_kernel.hpp"
#endif

using namespace nanoscopy;

TEST_CASE("a GPU is selected for cuda, cuda:0 and auto") {
  const auto gpus = list_gpus();
  REQUIRE(!gpus.empty());
  CHECK(select_device(DeviceRequest::parse("cuda"), true).kind == DeviceKind::cuda);
  CHECK(select_device(DeviceRequest::parse("cuda:0"), true).gpus == std::vector<int>{0});
  CHECK(select_device(DeviceRequest::parse("auto"), true).kind == DeviceKind::cuda);
  CHECK(select_device(DeviceRequest::parse("cuda:all"), true).gpus.size() == gpus.size());
  CHECK_THROWS_AS(select_device(DeviceRequest::parse("cuda:" + std::to_string(gpus.size())), true), DeviceError);
  CHECK(gpus[0].free_memory > 0);
}

#if NANOSCOPY_HAVE_CUDA
TEST_CASE("a card without code in the build: one line naming it, its compute capability and the rebuild") {
  // This build's own kernels run here (the GPU tests would not get this far otherwise).
  CHECK(cuda_build_mismatch(-1).empty());
  CHECK(cuda_build_mismatch(0).empty());
  // A kernel with Turing's SASS only, probed on this card (any but a Turing one has no code for it).
  const auto gpus = list_gpus();
  REQUIRE(!gpus.empty());
  if (gpus[0].cc_major == 7 && gpus[0].cc_minor == 5) return;
  const std::string line = cuda::kernel_image_problem(0, turing_only_kernel_address(), "75-real");
  MESSAGE(line);
  const std::string cc = std::to_string(gpus[0].cc_major) + "." + std::to_string(gpus[0].cc_minor);
  CHECK(line.find("GPU 0 (" + gpus[0].name + ", compute capability " + cc + ")") == 0);
  CHECK(line.find("has no code in this build (made for sm_75)") != std::string::npos);
  CHECK(line.find("-DCMAKE_CUDA_ARCHITECTURES=" + std::to_string(gpus[0].cc_major) + std::to_string(gpus[0].cc_minor) +
                  "-real") != std::string::npos);
  CHECK(line.find('\n') == std::string::npos);
}
#endif
