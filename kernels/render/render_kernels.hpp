// Launchers of the render kernels (render_kernels.cu), for engine_cuda.cpp.
// Both add into float images with global atomics (RED.ADD.F32), asynchronously
// on `stream`, and check the launch; points outside the picture are left out
// (render_math::inside).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "nanoscopy/loc/render/render_math.hpp"

namespace nanoscopy::cuda {

// One thread per point: density[pixel] += 1 (and z_sum[pixel] += z when z_sum is not null).
void launch_render_histogram(const render_math::RenderPoint* points, std::int64_t count, std::int64_t width,
                             std::int64_t height, float* density, float* z_sum, int blocks, cudaStream_t stream);

// One warp per point: its lanes walk the footprint (render_math::footprint) row by
// row, 32 consecutive pixels at a time, each adding share_x · share_y in float
// (and · z to z_sum when not null). Consecutive lanes hit consecutive addresses,
// so a warp's atomics on a row share their cache sectors.
void launch_render_gaussian(const render_math::RenderPoint* points, std::int64_t count, std::int64_t width,
                            std::int64_t height, float* density, float* z_sum, int blocks, cudaStream_t stream);

}  // namespace nanoscopy::cuda
