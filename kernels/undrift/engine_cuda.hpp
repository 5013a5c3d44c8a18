// The cuFFT correlation engine of RCC (fit2d undrift --device cuda; plain C++
// header, for the backend registry). Each segment's localizations go up as
// float grid positions and are rendered as the bilinear histogram on the GPU
// (atomics), transformed by cuFFT R2C and kept on the device; pairs run in
// batches: the blurred products conj(F_i) F_j, one batched in-place C2R, and a
// per-pair block that finds the maximum and its 5 x 5 window, so only those
// come back (the sub-pixel fit and the solve stay on the host, rcc.cpp).
// Float throughout, as the CPU engine (FFTW single precision).
#pragma once

#include <memory>

#include "nanoscopy/loc/undrift/engine.hpp"

namespace nanoscopy::cuda {

// The engine on CUDA device `gpu`. UsageError for a geometry the engines cannot
// plan; DeviceMemoryError when the spectra or a batch do not fit in the
// device's free memory (the message says how much they need).
std::unique_ptr<CorrelationEngine> make_cuda_correlation_engine(int gpu, const CorrelationGeometry& geometry);

}  // namespace nanoscopy::cuda
