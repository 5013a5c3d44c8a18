// bench fit2d --model spline: the spline 3D fit's throughput grid (fits/s host
// to host for 9×9, 11×11, 13×13 ROIs and a realistic calibration of 27×27×121
// voxels, or the one given by --calibration) and its precision against the
// CRB per 100 nm of z on spots simulated from the spline itself (2,000 photons,
// 20 background photons per pixel). With --gpufit /path/libGpufit.so the same
// ROIs go through Gpufit's SPLINE_3D model (its C function gpufit(), loaded
// with dlopen: no build dependency), whose fits/s and the agreement of its
// estimates with ours are reported beside ours.
#pragma once

#include <cstdint>
#include <iosfwd>

#include "nanoscopy/bench/bench_fit.hpp"

namespace nanoscopy {

void run_spline_fit_bench(const FitBenchOptions& options, std::uint64_t seed, int repeats, bool quiet,
                          std::ostream& out);

}  // namespace nanoscopy
