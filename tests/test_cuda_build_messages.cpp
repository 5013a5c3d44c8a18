// The one-line errors for a GPU this build cannot use (core/cuda_build_messages.hpp): a driver older
// than the runtime, a card without code in the binary, a card with only PTX newer than its driver. The
// GPU tests check that a kernel without code for the card really produces the second.
#include <doctest/doctest.h>

#include "nanoscopy/core/cuda_build_messages.hpp"

using namespace nanoscopy;

TEST_CASE("the architectures of a build in words") {
  CHECK(describe_cuda_architectures("75-real;80-real;90-real;100-real;120-real;120-virtual") ==
        "sm_75, sm_80, sm_90, sm_100, sm_120 and PTX compute_120");
  CHECK(describe_cuda_architectures("75-real,80-real,90-real,90-virtual") == "sm_75, sm_80, sm_90 and PTX compute_90");
  CHECK(describe_cuda_architectures("86") == "sm_86 and PTX compute_86");
  CHECK(describe_cuda_architectures("120-virtual") == "PTX compute_120");
  CHECK(describe_cuda_architectures("") == "no architecture");
  CHECK(cuda_version_text(13000) == "13.0");
  CHECK(cuda_version_text(12080) == "12.8");
}

TEST_CASE("a driver older than the runtime: both versions and the fix, one line") {
  const std::string line = driver_too_old_message(12020, 13000);
  CHECK(line ==
        "the NVIDIA driver supports CUDA 12.2 but this build needs CUDA 13.0 (the toolkit it was built with): update "
        "the driver to one for CUDA 13.0 or newer, or build nanoscopy with a CUDA 12.2 toolkit (12.0 or newer)");
}

TEST_CASE("a card without code: its name, compute capability, what was built and the configure option") {
  const std::string line = no_code_message(1, "NVIDIA GeForce RTX 3090", 8, 6, "90-real;90-virtual");
  CHECK(line ==
        "GPU 1 (NVIDIA GeForce RTX 3090, compute capability 8.6) has no code in this build (made for sm_90 and PTX "
        "compute_90): rebuild on that machine (-DNANOSCOPY_CUDA_TARGETS=native) or with "
        "-DCMAKE_CUDA_ARCHITECTURES=86-real, or with -DNANOSCOPY_CUDA_TARGETS=all for every card from Turing on");
  // Older than Turing: no rebuild helps (the kernels need 7.5).
  const std::string volta = no_code_message(0, "Tesla V100-SXM2-16GB", 7, 0, "75-real;120-virtual");
  CHECK(volta.find("compute capability 7.0") != std::string::npos);
  CHECK(volta.find("need compute capability 7.5 (Turing) or newer; run with --device cpu") != std::string::npos);
  CHECK(volta.find('\n') == std::string::npos);
  const std::string ptx = ptx_too_new_message(0, "NVIDIA RTX PRO 6000", 12, 0, "90-real;120-virtual", 12040);
  CHECK(ptx.find("has only this build's PTX (sm_90 and PTX compute_120), newer than its driver (CUDA 12.4)") !=
        std::string::npos);
}
