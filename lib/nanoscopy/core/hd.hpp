// NANOSCOPY_HD marks math written once for host and device: `__host__ __device__`
// under nvcc, nothing under a plain C++ compiler.
#pragma once

#if defined(__CUDACC__)
#define NANOSCOPY_HD __host__ __device__ __forceinline__
#else
#define NANOSCOPY_HD inline
#endif
