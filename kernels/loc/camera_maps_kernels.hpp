// sCMOS camera maps on the GPU: the cut ROIs in photons and their variance
// shifts, as CameraMaps::to_photons makes them on the CPU (core/camera_maps.hpp:
// photons = (ADU − offset)/gain, shift = variance/gain², per pixel of the frame).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "nanoscopy/loc/detect/detect_types.hpp"

namespace nanoscopy::cuda {

// The maps on the device, frame-sized (width × height, row-major).
struct DeviceMaps {
  const float* offset = nullptr;    // ADU
  const float* gain = nullptr;      // ADU per photoelectron
  const float* variance = nullptr;  // ADU²
  int width = 0;
};

// `count` ROIs of box × box (`rois`: uint16 when rois_u16, else float32), the
// top-left pixel of ROI k at origins[k] in the frame: photons and shifts, each
// count·box² floats laid out as the ROIs. Asynchronous on `stream`.
void launch_rois_to_photons(const void* rois, bool rois_u16, const RoiOrigin* origins, std::int64_t count, int box,
                            const DeviceMaps& maps, float* photons, float* shifts, cudaStream_t stream);

}  // namespace nanoscopy::cuda
