// A developer's diagnostic: with NANOSCOPY_STAGE_PROFILE=1 in the environment,
// stage_mark(stream, name) records a CUDA event on the stream, and the GPU
// time from the stream's previous mark to this one is summed under `name`;
// the sums (ms, calls) go to stderr at exit (the events are kept until then:
// a diagnostic run's few thousand). Without the variable a mark is one
// branch. For finding where a pipeline's GPU time goes on a machine without
// Nsight (the GPU machine has none). NANOSCOPY_STAGE_TIMELINE=FILE also writes
// every interval (device, stream, stage, start and end in ms) as CSV: how the
// engines' streams overlap and where they wait.
#pragma once

#include <cuda_runtime.h>

namespace nanoscopy::cuda {

// Starts the stream's timeline (no time is summed for this mark).
void stage_begin(cudaStream_t stream);
void stage_mark(cudaStream_t stream, const char* name);
// Adds host wall time under `name`.
void stage_host(const char* name, double seconds);

}  // namespace nanoscopy::cuda
