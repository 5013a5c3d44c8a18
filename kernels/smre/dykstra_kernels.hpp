// Launchers of the Dykstra projection kernels (exact_kernels.cu, icd_kernels.cu)
// for exact_projection.cpp and engine_cuda.cpp: P_G of eps in place for
// every frame of a batch whose flag is set, with dykstra.cpp's semantics
// (project_exact_cpu, project_icd_cpu). Asynchronous on `stream`.
//
// Per-frame device parameters: sigma2[f] = (float)(sigma^2) of the constraint,
// tol[f] = dykstra_tolerance * sigma (the stop on the mean |change| per sweep),
// warm[f] != 0: warm start (dykstra.hpp): the frame's Dykstra memory q holds
// its previous projection's dual variables, so the projection starts from
// eps = w + sum_s q_s; 0: cold start (q = 0, eps = w). Frames that are not on
// keep their q (and flags) untouched.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstdint>

namespace nanoscopy::cuda {

struct DykstraFrames {
  std::int64_t width = 0, height = 0;
  int frames = 0;
  float* eps = nullptr;               // device, frames * pixels
  const std::uint8_t* on = nullptr;   // device: frames still projected
  const float* sigma2 = nullptr;      // device, per frame
  const double* tol = nullptr;        // device, per frame
  const std::uint8_t* warm = nullptr; // device, per frame; null: every frame cold
  std::int64_t pixels() const { return width * height; }
};

// --- exact Dykstra -----------------------------------------------------------
// The Dykstra memory of one edge e's e*e tilings (tiling sy * e + sx). q of a
// tiling: frames * pixels floats (frame f at f * pixels); only squares whose
// flag is set hold a q (the others' q is exactly 0: a factor of 1 gives
// q = 1*y - y = 0), so kernels read and write q only for those squares.
// Flags: one byte per square of the grid (height / e) x (width / e) per frame.
// Flags and q persist from one projection of a frame to the next (warm start);
// a cold frame's first sweep ignores both and rewrites every flag.
struct ExactEdge {
  int edge = 0;
  float c = 0;                        // c_s of this edge
  float* q = nullptr;                 // tiling 0's q
  std::int64_t q_stride = 0;          // floats between consecutive tilings' q
  std::uint8_t* flags = nullptr;      // tiling 0's flags
  std::int64_t flag_stride = 0;       // bytes between consecutive tilings' flags
  std::int64_t flag_frame() const;    // bytes per frame: (height / e) * (width / e)
  std::int64_t width = 0, height = 0;
};

// The e tilings (sx = 0 .. e-1, in this order) of edge e at shift sy: the
// squares at (sx + a e, sy + b e) fully inside the frame, each projected with
// its q. `first`: the projection's first sweep (for frames that are not warm
// q = 0 everywhere: neither q nor the flags are read).
// Geometry: for e <= 16 and width <= 2048 one launch: a block of min(width,
// 1024) threads per (square row b, frame) holds the square row's eps in
// registers (a thread owns columns tid and tid + 1024) through all e shifts;
// per shift the threads sum y^2 down their columns, one thread per square sums
// its e column sums from shared memory (2 barriers per shift). Otherwise e
// launches, one per tiling: blocks of 256 threads (round_up(e, 32) for e > 256)
// over (chunks of floor(256/e) squares along x, square rows, frames), a thread
// per square column.
void launch_exact_shift_row(const DykstraFrames& d, const ExactEdge& g, int sy, bool first, cudaStream_t stream);
bool exact_edge_supported(int edge);  // edge <= 1024

// Before the first sweep, for every frame on: eps += sum over all tilings t (in
// order) of q_t where the pixel's square of t is flagged, for warm frames; then
// start = eps (the first sweep's reference). One thread per pixel, blocks of
// 32 x 8 over (columns, rows, frames), each thread reading every tiling's flag
// and (where set) q at its pixel. `edges`: device copies of `count` ExactEdge.
void launch_exact_warm_start(const DykstraFrames& d, const ExactEdge* edges, int count, float* start,
                             cudaStream_t stream);

// After a sweep: partial[f][block] = sum |eps - start| (double), then start = eps.
// Blocks of 256 threads over (1024-pixel pieces, frames), one float4 per thread.
std::int64_t exact_change_blocks(std::int64_t width, std::int64_t height);
void launch_exact_change(const DykstraFrames& d, float* start, double* partials, cudaStream_t stream);

// One block of 256 threads per frame still on: ++sweeps[f]; mean = sum(partials[f]) / pixels;
// on[f] = 0 when mean < tol[f] or sweeps[f] >= max_sweeps (fixed_sweeps > 0: sweeps[f] >= fixed_sweeps).
void launch_exact_decide(const DykstraFrames& d, const double* partials, std::uint8_t* on, int* sweeps,
                         int max_sweeps, int fixed_sweeps, cudaStream_t stream);

// --- incomplete Dykstra (ICD) -----------------------------------------------
// One pass (0..4): tile grid offset 2^pass, 32x32 tiles fully inside the frame,
// dyadic squares of edge 32 .. 2^pass. One block of 1024 threads per (tile,
// frame); thread t owns the pixel at the Morton (Z-order) position t of the
// tile, so every dyadic square is an aligned run of threads: squares of <= 16
// pixels are summed by warp shuffles, of 64, 256 and 1024 pixels through
// shared memory (one barrier each; the 1024-pixel sum shares its barrier with
// the sweep's |change| sum). q of the scales 2^pass .. 32 lives in registers
// during the pass: 0 for a cold frame, else loaded from `q` (warm start, then
// e = eps + sum_s q_s); stored back to `q` at the end when q is not null (null:
// cold starts only, no memory). Sweeps run until mean |change| over the tile < tol[f] or max_sweeps
// (exactly fixed_sweeps when > 0); sweeps[f] = max(sweeps[f], the tile's sweeps).
// ICD memory layout: per frame icd_q_floats() floats; in it, per pass, per
// scale s = pass .. 5, per tile of the pass (row-major over the pass's tile
// grid), 1024 floats in the tile's Morton order (coalesced loads and stores).
std::int64_t icd_q_floats(std::int64_t width, std::int64_t height);
void launch_icd_pass(const DykstraFrames& d, int pass, const std::array<float, 6>& c, int max_sweeps,
                     int fixed_sweeps, int* sweeps, float* q, cudaStream_t stream);

}  // namespace nanoscopy::cuda
