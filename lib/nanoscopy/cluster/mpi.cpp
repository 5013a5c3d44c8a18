#include "nanoscopy/cluster/mpi.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <type_traits>

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

#if NANOSCOPY_HAVE_MPI
namespace {

template <typename T>
MPI_Datatype mpi_type() {
  return std::is_same_v<T, float> ? MPI_FLOAT : MPI_DOUBLE;
}

// A 64-bit count first, then pieces an int can count: results can exceed 2^31 values.
constexpr long long kPiece = 1 << 26;

template <typename T>
void send_values(int dest, std::span<const T> values) {
  long long n = static_cast<long long>(values.size());
  MPI_Send(&n, 1, MPI_LONG_LONG, dest, 1, MPI_COMM_WORLD);
  for (long long at = 0; at < n; at += kPiece)
    MPI_Send(values.data() + at, static_cast<int>(std::min(kPiece, n - at)), mpi_type<T>(), dest, 2, MPI_COMM_WORLD);
}

template <typename T>
std::vector<T> receive_values(int source) {
  long long n = 0;
  MPI_Recv(&n, 1, MPI_LONG_LONG, source, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  std::vector<T> values(static_cast<std::size_t>(n));
  for (long long at = 0; at < n; at += kPiece)
    MPI_Recv(values.data() + at, static_cast<int>(std::min(kPiece, n - at)), mpi_type<T>(), source, 2, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
  return values;
}

}  // namespace

void mpi_send(int dest, std::span<const double> values) { send_values(dest, values); }
void mpi_send(int dest, std::span<const float> values) { send_values(dest, values); }
std::vector<double> mpi_receive_doubles(int source) { return receive_values<double>(source); }
std::vector<float> mpi_receive_floats(int source) { return receive_values<float>(source); }
#else
[[noreturn]] static void no_mpi() { throw UsageError("mpirun", "this build has no MPI support"); }
void mpi_send(int, std::span<const double>) { no_mpi(); }
void mpi_send(int, std::span<const float>) { no_mpi(); }
std::vector<double> mpi_receive_doubles(int) { no_mpi(); }
std::vector<float> mpi_receive_floats(int) { no_mpi(); }
#endif

std::vector<std::vector<double>> mpi_gather(std::span<const double> mine) {
  const MpiWorld& w = mpi_world();
  std::vector<std::vector<double>> all;
  if (w.rank != 0) {
    mpi_send(0, mine);
    return all;
  }
  all.emplace_back(mine.begin(), mine.end());
  for (int r = 1; r < w.size; ++r) all.push_back(mpi_receive_doubles(r));
  return all;
}

FrameRange::Resolved rank_frames(FrameRange::Resolved range, const MpiWorld& world) {
  const std::int64_t n = range.count();
  if (world.size > n)
    throw UsageError("mpirun", rank_name(static_cast<int>(n)) + " and above have no frames: " +
                                   std::to_string(world.size) + " ranks for " + std::to_string(n) + " frames");
  return {range.first + n * world.rank / world.size, range.first + n * (world.rank + 1) / world.size};
}

Device device_for_rank(Device device, const MpiWorld& world) {
  if (device.kind != DeviceKind::cuda || world.size == 1 || device.gpus.size() != 1) return device;
  const int count = device.visible_gpus;
  if (count > 0) device.gpus = {world.local_rank % count};
  return device;
}

std::string rank_name(int rank) { return "rank " + std::to_string(rank); }

void mpi_finish() {
#if NANOSCOPY_HAVE_MPI
  if (mpi_world().size > 1) MPI_Finalize();
#endif
}

}  // namespace nanoscopy
