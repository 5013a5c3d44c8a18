#include "nanoscopy/cluster/frame_job.hpp"

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {

FrameJob make_frame_job(FrameRange::Resolved range, const std::string& partial, const Device& device) {
  FrameJob job;
  job.world = mpi_world();
  if (!partial.empty() && job.world.size > 1)
    throw UsageError("mpirun", "--partial writes one part per process; start it without mpirun");
  job.mode = !partial.empty() ? FrameJobMode::part : job.world.size > 1 ? FrameJobMode::mpi : FrameJobMode::single;
  job.range = range;
  job.device = device_for_rank(device, job.world);
  return job;
}

}  // namespace nanoscopy
