// The CUDA render engine (fit2d render --device cuda; plain C++ header, for the
// backend registry). Points arrive in chunks through two page-locked buffers
// (the host fills one while the other's transfer and kernel run), and the
// kernels add each point's mass into float images in device memory with global
// atomics: one thread per point for the histogram, one warp per point for the
// Gaussian (render_kernels.hpp). Only the finished images come back.
//
// Why atomics into global memory, not shared-memory tiles of points sorted by
// tile: at 10 nm on a 40 µm field (16 Mpixel) 10^8 localizations are a few
// per pixel, so atomics rarely collide, and a warp's atomics on one footprint
// row share cache sectors; sorting 10^8 points by tile would cost a pass of its
// own over 2 GB. bench render measures it (docs/benchmarks.md).
#pragma once

#include <memory>

#include "nanoscopy/loc/render/engine.hpp"

namespace nanoscopy::cuda {

// The engine on CUDA device `gpu`. DeviceMemoryError when the images do not fit.
std::unique_ptr<RenderEngine> make_cuda_render_engine(int gpu, const RenderGeometry& geometry);

}  // namespace nanoscopy::cuda
