// Whether this build can run on the machine's GPUs: the driver is new enough for
// the CUDA runtime linked in, and each card has code in the binary (its own SASS,
// or PTX the driver can compile for it). Without these checks a lab's older card
// or driver shows up as a crash in the first kernel launch, or as a silent run on
// the CPU; with them it is one line naming the card and the fix.
#pragma once

#include <string>

namespace nanoscopy::cuda {

// Empty when `gpu` (a CUDA device index; −1: every visible GPU) can run this
// build's kernels, else one line saying why and what to do: the driver's CUDA
// version and the runtime's, or the card, its compute capability, the
// architectures built and the configure option to rebuild with.
std::string build_mismatch(int gpu);

// The same test for one kernel (`kernel`: its address) compiled for
// `architectures` (CMake's list with commas, e.g. "75-real,80-real,90-virtual"): the GPU
// tests probe a kernel built for a card that is not there.
std::string kernel_image_problem(int gpu, const void* kernel, const std::string& architectures);

}  // namespace nanoscopy::cuda
