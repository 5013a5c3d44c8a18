#include "nanoscopy/cluster/mpi.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "nanoscopy/config.hpp"
#include "nanoscopy/core/error.hpp"

#if NANOSCOPY_HAVE_MPI
// The C API only: Open MPI would pull in its deprecated C++ bindings.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace nanoscopy {
namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

// The launcher's own word on the number of ranks (Open MPI's mpirun, PMIx, MPICH's PMI).
int launched_size() {
  int size = env_int("OMPI_COMM_WORLD_SIZE", 0);
  if (size == 0) size = env_int("PMIX_SIZE", 0);
  if (size == 0) size = env_int("PMI_SIZE", 1);
  return size;
}

MpiWorld start() {
  MpiWorld w;
  if (launched_size() <= 1) return w;
#if NANOSCOPY_HAVE_MPI
  MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  w.local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK", env_int("MPI_LOCALRANKID", env_int("SLURM_LOCALID", 0)));
  return w;
#else
  throw UsageError("mpirun", "started as " + std::to_string(launched_size()) +
                                 " MPI ranks, but this build has no MPI support (configure with NANOSCOPY_MPI=ON)");
#endif
}

}  // namespace

const MpiWorld& mpi_world() {
  static const MpiWorld world = start();
  return world;
}

std::vector<std::vector<double>> mpi_gather(std::span<const double> mine) {
  const MpiWorld& w = mpi_world();
  std::vector<std::vector<double>> all;
  if (w.size == 1) {
    all.emplace_back(mine.begin(), mine.end());
    return all;
  }
#if NANOSCOPY_HAVE_MPI
  // Point to point with a 64-bit count first: the sums can exceed what one int counts.
  if (w.rank != 0) {
    long long n = static_cast<long long>(mine.size());
    MPI_Send(&n, 1, MPI_LONG_LONG, 0, 1, MPI_COMM_WORLD);
    constexpr long long piece = 1 << 26;
    for (long long at = 0; at < n; at += piece)
      MPI_Send(mine.data() + at, static_cast<int>(std::min(piece, n - at)), MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
    return all;
  }
  all.emplace_back(mine.begin(), mine.end());
  for (int r = 1; r < w.size; ++r) {
    long long n = 0;
    MPI_Recv(&n, 1, MPI_LONG_LONG, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    std::vector<double> values(static_cast<std::size_t>(n));
    constexpr long long piece = 1 << 26;
    for (long long at = 0; at < n; at += piece)
      MPI_Recv(values.data() + at, static_cast<int>(std::min(piece, n - at)), MPI_DOUBLE, r, 2, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    all.push_back(std::move(values));
  }
#endif
  return all;
}

void mpi_finish() {
#if NANOSCOPY_HAVE_MPI
  if (mpi_world().size > 1) MPI_Finalize();
#endif
}

}  // namespace nanoscopy
