// Device-only reduction helpers of the SMRE kernels (included by .cu files).
// Every result is deterministic: fixed tree orders, no atomics.
#pragma once

#include <cuda_runtime.h>

namespace nanoscopy::cuda::smre_detail {

constexpr unsigned full_mask = 0xffffffffu;

// Butterfly sum over aligned groups of `Width` lanes (a power of two <= 32):
// every lane of a group ends with the same bits (each step adds the two
// halves' equal-by-construction partial sums, and + is commutative).
template <int Width, typename T>
__device__ __forceinline__ T group_sum(T v) {
#pragma unroll
  for (int o = 1; o < Width; o <<= 1) v += __shfl_xor_sync(full_mask, v, o);
  return v;
}

// Sum over the whole block into thread 0's return value (others: partial
// garbage). `scratch` holds >= 32 values; the block is a multiple of 32 threads.
__device__ __forceinline__ double block_sum_to_first(double v, double* scratch) {
  const int warps = static_cast<int>(blockDim.x * blockDim.y) >> 5;
  const int linear = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  const int lane_l = linear & 31, warp_l = linear >> 5;
  v = group_sum<32>(v);
  if (lane_l == 0) scratch[warp_l] = v;
  __syncthreads();
  double s = 0.0;
  if (warp_l == 0) {
    s = lane_l < warps ? scratch[lane_l] : 0.0;
    s = group_sum<32>(s);
  }
  return s;
}

}  // namespace nanoscopy::cuda::smre_detail
