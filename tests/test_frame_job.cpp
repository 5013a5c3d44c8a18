// The frame-job skeleton (cluster/frame_job.hpp) as one process sees it: which
// hooks run, in which order, over which frames. (Its mpirun side runs in
// scripts/cluster-test, where fit2d, smre and sofi must equal one process.)
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "nanoscopy/cluster/frame_job.hpp"

using namespace nanoscopy;

namespace {

// Records the hooks called; the result is the frames processed.
FrameJobHooks<std::int64_t> recording_hooks(std::vector<std::string>& calls) {
  FrameJobHooks<std::int64_t> h;
  h.process = [&](const FrameJob& job) {
    calls.push_back("process " + std::to_string(job.mine().first) + ":" + std::to_string(job.mine().last));
    return job.mine().count();
  };
  h.write_part = [&](std::int64_t& frames) { calls.push_back("write_part " + std::to_string(frames)); };
  h.transfer = [&](const FrameJob&) { calls.push_back("transfer"); };
  h.pack = [&](const std::int64_t& frames) {
    calls.push_back("pack");
    return std::vector<double>{static_cast<double>(frames)};
  };
  h.merge = [&](std::int64_t&& mine, const std::vector<std::vector<double>>&) {
    calls.push_back("merge");
    return mine;
  };
  h.write_output = [&](std::int64_t& frames) { calls.push_back("write_output " + std::to_string(frames)); };
  return h;
}

}  // namespace

TEST_CASE("one process: its frames are the range, then the output") {
  Device cpu;
  cpu.cpu_threads = 3;
  const FrameJob job = make_frame_job({10, 25}, "", cpu);
  CHECK(job.mode == FrameJobMode::single);
  CHECK(job.root());
  CHECK(job.how().empty());
  CHECK(job.mine().first == 10);
  CHECK(job.mine().last == 25);
  CHECK(job.device.kind == DeviceKind::cpu);
  CHECK(job.device.cpu_threads == 3);
  std::vector<std::string> calls;
  run_frame_job(job, recording_hooks(calls));
  CHECK(calls == std::vector<std::string>{"process 10:25", "write_output 15"});
}

TEST_CASE("--partial: the part's frames, then the part file, and no output") {
  const FrameJob job = make_frame_job({100, 200}, "p0.h5", Device{});
  CHECK(job.part());
  CHECK(job.how() == "--partial");
  std::vector<std::string> calls;
  run_frame_job(job, recording_hooks(calls));
  CHECK(calls == std::vector<std::string>{"process 100:200", "write_part 100"});
}
