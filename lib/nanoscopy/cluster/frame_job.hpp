// How a tool runs over a frame range: as one process; as one part of a SLURM
// array (--frames A:B --partial PART.h5, put together later by `<tool> merge`,
// see part_file.hpp); or as mpirun ranks that each take a share of the frames
// and send their result to rank 0, which writes what one process would have
// written. fit2d, smre and sofi fill in FrameJobHooks and run_frame_job does the
// rest, so the three tools cannot drift apart in how they split, gather and finish.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "nanoscopy/core/device.hpp"
#include "nanoscopy/cluster/mpi.hpp"
#include "nanoscopy/core/frame_range.hpp"

namespace nanoscopy {

enum class FrameJobMode { single, part, mpi };

struct FrameJob {
  FrameJobMode mode = FrameJobMode::single;
  MpiWorld world;
  FrameRange::Resolved range{0, 0};  // the frames asked for (--frames)
  Device device;                     // this process's device (device_for_rank)

  // This process's share: `range`, or rank_frames(range) under mpirun (UsageError
  // when there are more ranks than frames: asked for where the work starts, so the
  // tool's own checks come first).
  FrameRange::Resolved mine() const { return mpi() ? rank_frames(range, world) : range; }

  bool part() const { return mode == FrameJobMode::part; }
  bool mpi() const { return mode == FrameJobMode::mpi; }
  // Writes the tool's output: one process, or rank 0 of mpirun (a part writes its part file instead).
  bool root() const { return world.rank == 0; }
  // "--partial" or "mpirun" (where an option that needs one process is refused); "" for one process.
  std::string how() const { return part() ? "--partial" : mpi() ? "mpirun" : ""; }
};

// `partial` is the --partial path ("" = none). UsageError when both --partial and
// mpirun are asked for: a part is one process's work.
FrameJob make_frame_job(FrameRange::Resolved range, const std::string& partial, const Device& device);

// What a tool does at each step. `Result` is what processing this process's
// frames gives (rows, statistics, sums): whatever the part file, the gather and
// the output need.
template <class Result>
struct FrameJobHooks {
  // This process's frames (job.mine() on job.device).
  std::function<Result(const FrameJob& job)> process;
  // --partial: writes the part file (and says so).
  std::function<void(Result& result)> write_part;
  // mpirun, every rank, before the gather: results too big for one message go to
  // rank 0 point to point (smre's frames). May be empty.
  std::function<void(const FrameJob& job)> transfer;
  // mpirun: a rank's result as values for mpi_gather, and on rank 0 every rank's
  // values (by rank, its own first) made into the result of the whole range.
  std::function<std::vector<double>(const Result& result)> pack;
  std::function<Result(Result&& mine, const std::vector<std::vector<double>>& all)> merge;
  // One process, or rank 0 after the merge: writes the output and the summary.
  std::function<void(Result& result)> write_output;
};

// process; then write_part (a part), or the transfer, gather and merge (mpirun:
// ranks other than 0 end there), and write_output; then mpi_finish. A rank that
// throws leaves without mpi_finish, and the launcher ends the others.
template <class Result>
void run_frame_job(const FrameJob& job, const FrameJobHooks<Result>& hooks) {
  Result result = hooks.process(job);
  if (job.part()) {
    hooks.write_part(result);
    return;
  }
  if (job.mpi()) {
    if (hooks.transfer) hooks.transfer(job);
    const auto all = mpi_gather(hooks.pack(result));
    if (!job.root()) {
      mpi_finish();
      return;
    }
    result = hooks.merge(std::move(result), all);
  }
  hooks.write_output(result);
  mpi_finish();
}

}  // namespace nanoscopy
