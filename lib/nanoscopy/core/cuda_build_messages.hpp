// The one-line errors for a GPU this build cannot use, in plain C++ so that the
// CPU tests check their text (kernels/common/build_fit.cu gathers the facts).
#pragma once

#include <string>

namespace nanoscopy {

// "sm_75, sm_80, sm_90 and PTX compute_90" from CMake's architecture list
// (separated by ';' or ',', e.g. "75-real,80-real,90-real,90-virtual").
std::string describe_cuda_architectures(const std::string& architectures);

// CUDA versions as the runtime reports them (13000 for 13.0) → "13.0".
std::string cuda_version_text(int version);

// A driver older than the runtime the build links.
std::string driver_too_old_message(int driver_cuda_version, int runtime_cuda_version);

// A card without code in the build: its name, compute capability, what was built and how to rebuild.
std::string no_code_message(int gpu, const std::string& name, int cc_major, int cc_minor,
                            const std::string& architectures);

// A card with only the build's PTX, which its driver is too old to compile.
std::string ptx_too_new_message(int gpu, const std::string& name, int cc_major, int cc_minor,
                                const std::string& architectures, int driver_cuda_version);

}  // namespace nanoscopy
