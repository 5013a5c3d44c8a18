// MPI for tools started by mpirun (or srun with PMIx): which rank this process
// is, and gathering results on rank 0. A process started any other way is the
// only rank and never initializes MPI, so a build with MPI runs as before.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nanoscopy/core/device.hpp"
#include "nanoscopy/core/frame_range.hpp"

namespace nanoscopy {

struct MpiWorld {
  int rank = 0;
  int size = 1;
  int local_rank = 0;  // rank among the processes on this host (picks the GPU)
};

// Initializes MPI on first use when the launcher started several ranks.
// UsageError when it did but this build has no MPI (NANOSCOPY_MPI=OFF or no libopenmpi-dev).
const MpiWorld& mpi_world();

// Rank 0 gets every rank's values, by rank (its own first); the others get {}.
std::vector<std::vector<double>> mpi_gather(std::span<const double> mine);

// Point to point, any length (a 64-bit count goes first): `dest` receives what
// `source` sends, in order. Blocking.
void mpi_send(int dest, std::span<const double> values);
void mpi_send(int dest, std::span<const float> values);
std::vector<double> mpi_receive_doubles(int source);
std::vector<float> mpi_receive_floats(int source);

// This rank's share of `range`: frames [first + n r / N, first + n (r+1) / N).
// UsageError "N ranks for M frames" (naming the first rank without frames) when
// there are more ranks than frames.
FrameRange::Resolved rank_frames(FrameRange::Resolved range, const MpiWorld& world);

// The device a rank uses: with several GPUs visible, rank r takes GPU (local rank
// mod count); where the launcher gives each rank its own CUDA_VISIBLE_DEVICES, that is GPU 0.
Device device_for_rank(Device device, const MpiWorld& world);

// "rank 3" — for messages.
std::string rank_name(int rank);

// Ends MPI after a successful run. A rank that fails exits without it, and the
// launcher then ends the other ranks instead of leaving them waiting.
void mpi_finish();

}  // namespace nanoscopy
