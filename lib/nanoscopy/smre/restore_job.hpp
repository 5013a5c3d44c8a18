// smre restoring a stack's frames as a frame job (cluster/frame_job.hpp): the
// outputs opened before any work, the chunk loop through the runner, and the
// report. One process writes the restored stack; a part writes its part file;
// under mpirun ranks other than 0 keep their frames in a spool that rank 0
// appends, in rank order, to the one output.
#pragma once

#include <chrono>
#include <iosfwd>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/cluster/frame_job.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/smre/cli.hpp"
#include "nanoscopy/smre/runner.hpp"

namespace nanoscopy {

// What restoring this process's frames gives (summed over frames).
struct SmreTotals {
  std::int64_t frames = 0;
  std::int64_t iterations = 0, converged = 0;
  double sigma_sum = 0;
  double quality_sum = 0;               // --simulate: sum of |x - x*| / |I - x*|
  std::vector<FrameOutcome> outcomes;   // of a single frame (its last iteration is reported)
};

class SmreRestoreJob {
 public:
  // Checks what needs one process (--simulate, --log, --control) and opens the
  // outputs: the restored stack (or the part file, or a rank's spool), the
  // simulated input, and a probe of the log's directory.
  SmreRestoreJob(const SmreOptions& options, ToolContext& ctx, const FrameJob& job, StackReader& reader,
                 SmreRunner& runner, const SmreRunOptions& run_options, std::ostream& out);
  ~SmreRestoreJob();

  FrameJobHooks<SmreTotals> hooks();

 private:
  void print_header() const;
  void set_callbacks();
  SmreTotals process();
  void transfer() const;
  SmreTotals merge(const std::vector<std::vector<double>>& all) const;
  void finish(const SmreTotals& totals);
  void print_report(const SmreTotals& totals, double seconds) const;

  const SmreOptions& options_;
  const FrameJob& job_;
  StackReader& reader_;
  const StackInfo info_;
  SmreRunner& runner_;
  const SmreRunOptions& ro_;
  const SmreSettings& settings_;
  std::ostream& out_;
  bool simulate_ = false;
  std::uint64_t seed_ = 42;
  std::string output_, log_path_, simulated_path_;
  bool control_ = false;
  ImageMeta meta_;
  std::unique_ptr<ImageWriter> writer_, simulated_writer_;
  std::ostringstream log_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace nanoscopy
