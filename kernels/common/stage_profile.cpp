#include "common/stage_profile.hpp"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "nanoscopy/core/stage_profile_flag.hpp"

namespace nanoscopy::cuda {
namespace {

struct Interval {
  cudaEvent_t from, to;
  std::string name;
  cudaStream_t stream;
  int device;
};

// NANOSCOPY_STAGE_TIMELINE=FILE (with the profile on): every interval as CSV
// (device, stream, stage, start and end in ms from the device's first mark),
// to see how two engines' stages overlap on one GPU.
void write_timeline(const std::vector<Interval>& intervals, const std::map<int, cudaEvent_t>& base) {
  const char* path = std::getenv("NANOSCOPY_STAGE_TIMELINE");
  if (!path || !*path) return;
  std::FILE* f = std::fopen(path, "w");
  if (!f) return;
  std::fprintf(f, "device,stream,stage,start_ms,end_ms\n");
  std::map<cudaStream_t, int> streams;
  for (const Interval& i : intervals) {
    const auto b = base.find(i.device);
    float t0 = 0, t1 = 0;
    if (b == base.end() || cudaEventElapsedTime(&t0, b->second, i.from) != cudaSuccess ||
        cudaEventElapsedTime(&t1, b->second, i.to) != cudaSuccess)
      continue;
    const int id = streams.emplace(i.stream, static_cast<int>(streams.size())).first->second;
    std::fprintf(f, "%d,%d,%s,%.4f,%.4f\n", i.device, id, i.name.c_str(), t0, t1);
  }
  std::fclose(f);
}

struct Profile {
  std::mutex mutex;
  std::map<cudaStream_t, cudaEvent_t> last;
  std::vector<Interval> intervals;
  std::map<std::string, std::pair<double, long>> host;
  std::map<int, cudaEvent_t> base;  // each device's first mark
  ~Profile() {
    std::map<std::string, std::pair<double, long>> sums;
    for (const Interval& i : intervals) {
      float ms = 0;
      if (cudaEventSynchronize(i.to) == cudaSuccess && cudaEventElapsedTime(&ms, i.from, i.to) == cudaSuccess) {
        sums[i.name].first += ms;
        ++sums[i.name].second;
      }
    }
    write_timeline(intervals, base);
    for (const auto& [name, s] : host)
      std::fprintf(stderr, "stage profile: %-24s %10.1f ms host %8ld calls  %8.3f ms each\n", name.c_str(), s.first,
                   s.second, s.first / static_cast<double>(s.second));
    for (const auto& [name, s] : sums)
      std::fprintf(stderr, "stage profile: %-24s %10.1f ms GPU  %8ld calls  %8.3f ms each\n", name.c_str(), s.first,
                   s.second, s.first / static_cast<double>(s.second));
  }
};

Profile& profile() {
  static Profile p;
  return p;
}

cudaEvent_t record(cudaStream_t stream) {
  cudaEvent_t e = nullptr;
  if (cudaEventCreate(&e) != cudaSuccess) return nullptr;
  cudaEventRecord(e, stream);
  return e;
}

}  // namespace

void stage_begin(cudaStream_t stream) {
  if (!stage_profile_enabled()) return;
  Profile& p = profile();
  const cudaEvent_t e = record(stream);
  int device = 0;
  cudaGetDevice(&device);
  std::lock_guard lock(p.mutex);
  p.last[stream] = e;
  if (e) p.base.emplace(device, e);
}

void stage_mark(cudaStream_t stream, const char* name) {
  if (!stage_profile_enabled()) return;
  Profile& p = profile();
  const cudaEvent_t e = record(stream);
  std::lock_guard lock(p.mutex);
  auto it = p.last.find(stream);
  int device = 0;
  cudaGetDevice(&device);
  if (it != p.last.end() && it->second && e) p.intervals.push_back({it->second, e, name, stream, device});
  p.last[stream] = e;
}

void stage_host(const char* name, double seconds) {
  if (!stage_profile_enabled()) return;
  Profile& p = profile();
  std::lock_guard lock(p.mutex);
  p.host[name].first += seconds * 1e3;
  ++p.host[name].second;
}

}  // namespace nanoscopy::cuda
