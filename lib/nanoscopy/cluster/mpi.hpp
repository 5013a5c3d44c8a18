// MPI for tools started by mpirun (or srun with PMIx): which rank this process
// is, and gathering results on rank 0. A process started any other way is the
// only rank and never initializes MPI, so a build with MPI runs as before.
#pragma once

#include <span>
#include <vector>

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

// Ends MPI after a successful run. A rank that fails exits without it, and the
// launcher then ends the other ranks instead of leaving them waiting.
void mpi_finish();

}  // namespace nanoscopy
