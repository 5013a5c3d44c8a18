// Launchers of the SMRE ADMM kernels (psf_kernels.cu, admm_kernels.cu), for
// engine_cuda.cpp. Every launcher is asynchronous on `stream` and checks
// the launch. The per-pixel math is smre_math.hpp's, shared with the CPU
// reference (engine_cpu.cpp), in the same order of operations.
//
// Layout: a batch is `frames` padded frames of width x height floats (sides
// multiples of 32), frame f at f * pixels in every array. Every kernel's grid
// has the frame in blockIdx.z (or .y) and returns at once for a frame whose
// `active` flag is 0, so such a frame's arrays are never written.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "nanoscopy/smre/smre_settings.hpp"

namespace nanoscopy::cuda {

struct SmreBatch {
  std::int64_t width = 0, height = 0;
  int frames = 0;
  const std::uint8_t* active = nullptr;  // device, `frames` flags
  std::int64_t pixels() const { return width * height; }
};

// The ADMM state of a batch (device, frames * pixels floats each; px, py only for TV).
// `work` is scratch: the row pass's output, then A^T r.
struct SmreArrays {
  float* image = nullptr;
  float* x = nullptr;
  float* z = nullptr;
  float* eps = nullptr;
  float* ax = nullptr;
  float* u1 = nullptr;
  float* u2 = nullptr;
  float* work = nullptr;
  float* px = nullptr;
  float* py = nullptr;
};

struct SmreScalars {
  float rho1 = 0, rho2 = 0, gamma = 0, lambda = 0, alpha1 = 0, alpha2 = 0;
};

// The PSF taps on the device (2 radius + 1 floats); `flip` reverses them (A^T).
struct PsfTaps {
  const float* taps = nullptr;
  int radius = 0;
  bool flip = false;
};

// Per-block partial sums (device doubles) of the iteration's statistics, in a
// fixed order per frame: [frame][block].
struct StatPartials {
  double* step = nullptr;  // sum (x' - x)^2, psf_col_blocks() per frame
  double* c1 = nullptr;    // sum (I - eps - A x)^2, dual_blocks() per frame
  double* c2 = nullptr;    // sum (x - z)^2, dual_blocks() per frame
};

// What iterate() reads back per frame (means over the padded frame).
struct DeviceFrameStats {
  double c1, c2, step;
  int sweeps, unused;
};

// Blocks per frame of the column pass and of the dual update (sizes of StatPartials).
std::int64_t psf_col_blocks(std::int64_t width, std::int64_t height);
std::int64_t dual_blocks(std::int64_t width, std::int64_t height);

// Dynamic shared memory of the column pass (taps plus a (64 + 2 radius) x 32
// tile); the engine checks it against the device before it starts.
std::size_t psf_col_shared_bytes(int radius);
// Raises the kernels' dynamic shared-memory limit where `radius` needs more than 48 KB.
void prepare_psf_kernels(int radius);

// Separable PSF (psf.cpp's convolve: rows first, then columns, zero outside the
// frame, taps summed from k = 0 up). Row pass: blocks of 128 threads over
// (128-pixel row segments, rows, frames), the segment and its halo in shared
// memory; out = the row-convolved input.
//   rows_plain:    input `in`
//   rows_residual: input data_residual_term(I, eps, A x, u1, rho1), formed while loading
void launch_psf_rows_plain(const SmreBatch& b, const PsfTaps& k, const float* in, float* out, cudaStream_t stream);
void launch_psf_rows_residual(const SmreBatch& b, const PsfTaps& k, const SmreArrays& a, float rho1, float* out,
                              cudaStream_t stream);

// Column pass: blocks of 32 x 8 threads over (32 columns x 64 rows, frames),
// the tile and its halo in shared memory, 8 outputs per thread; it reads `in`
// (the row pass's output) and
//   cols_plain:    writes out
//   cols_x_update: writes x = x_update(x, A^T r, z, u2, gamma, rho2) and the
//                  partial sums of (x' - x)^2 (StatPartials::step)
//   cols_ax_step:  writes A x, eps = I - A x + u1/rho1 (the projection's input)
//                  and, for l2 and l1, z = prox(x + u2/rho2); tv leaves z to launch_tv_step
void launch_psf_cols_plain(const SmreBatch& b, const PsfTaps& k, const float* in, float* out, cudaStream_t stream);
void launch_psf_cols_x_update(const SmreBatch& b, const PsfTaps& k, const SmreArrays& a, const SmreScalars& s,
                              double* step_partials, cudaStream_t stream);
void launch_psf_cols_ax_step(const SmreBatch& b, const PsfTaps& k, const SmreArrays& a, const SmreScalars& s,
                             Regularizer reg, cudaStream_t stream);

// TV z-step: `iterations` Chambolle iterations on the warm-started dual (px, py),
// then z = v - theta div p with v = x + u2/rho2 and theta = lambda/rho2 (z = v
// when theta <= 0). z holds d = div p - v/theta in between, as in the CPU
// engine. One thread per pixel, blocks of 32 x 8 over (columns, rows, frames):
// 2 iterations + 1 launches.
void launch_tv_step(const SmreBatch& b, const SmreArrays& a, const SmreScalars& s, int iterations,
                    cudaStream_t stream);

// Dual steps u1 += alpha1 (I - eps - A x), u2 += alpha2 (x - z) and the
// partial sums of both residuals squared. Blocks of 256 threads over
// (1024-pixel pieces, frames), 4 pixels (one float4) per thread.
void launch_dual_update(const SmreBatch& b, const SmreArrays& a, const SmreScalars& s, const StatPartials& p,
                        cudaStream_t stream);

// One block of 256 threads per frame: sums the partials in a fixed order and
// writes out[f] (means over the frame, step = sqrt(mean), sweeps[f]) for active frames.
void launch_finish_stats(const SmreBatch& b, const StatPartials& p, const int* sweeps, DeviceFrameStats* out,
                         cudaStream_t stream);

}  // namespace nanoscopy::cuda
