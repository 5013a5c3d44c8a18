// The host-to-device copy rate from pinned memory: the ceiling of every engine
// that uploads whole frames (bench prints each pipeline against it).
#pragma once

#include <cstddef>
#include <vector>

namespace nanoscopy::cuda {

// Bytes/s that `gpus` take together, each copying `bytes` at a time from its own pinned buffer (all at once, one
// host thread per GPU, ~0.25 s of copies after one warm-up copy). GPUs behind one PCIe switch share its link,
// which this measures as it is.
double measure_upload_bandwidth(const std::vector<int>& gpus, std::size_t bytes);

}  // namespace nanoscopy::cuda
