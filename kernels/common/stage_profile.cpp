#include "common/stage_profile.hpp"

#include <cstdio>
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
};

struct Profile {
  std::mutex mutex;
  std::map<cudaStream_t, cudaEvent_t> last;
  std::vector<Interval> intervals;
  std::map<std::string, std::pair<double, long>> host;
  ~Profile() {
    std::map<std::string, std::pair<double, long>> sums;
    for (const Interval& i : intervals) {
      float ms = 0;
      if (cudaEventSynchronize(i.to) == cudaSuccess && cudaEventElapsedTime(&ms, i.from, i.to) == cudaSuccess) {
        sums[i.name].first += ms;
        ++sums[i.name].second;
      }
    }
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
  std::lock_guard lock(p.mutex);
  p.last[stream] = e;
}

void stage_mark(cudaStream_t stream, const char* name) {
  if (!stage_profile_enabled()) return;
  Profile& p = profile();
  const cudaEvent_t e = record(stream);
  std::lock_guard lock(p.mutex);
  auto it = p.last.find(stream);
  if (it != p.last.end() && it->second && e) p.intervals.push_back({it->second, e, name});
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
