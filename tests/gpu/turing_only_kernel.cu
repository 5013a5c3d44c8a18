// A kernel with Turing's SASS only (tests/CMakeLists.txt: CUDA_ARCHITECTURES 75-real, no PTX): on any
// other card the runtime has no code for it, as a lab's card would have none in a build made for others.
#include "turing_only_kernel.hpp"

namespace {
__global__ void turing_only_kernel() {}
}  // namespace

const void* turing_only_kernel_address() { return reinterpret_cast<const void*>(&turing_only_kernel); }
