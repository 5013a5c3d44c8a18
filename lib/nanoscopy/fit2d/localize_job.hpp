// fit2d localizing a stack as a frame job (cluster/frame_job.hpp): one process
// streams its localizations into the output; a part writes them to its part file
// for fit2d merge; under mpirun every rank sends its rows to rank 0, which writes
// them in rank order (so in frame order) as one process would have.
#pragma once

#include <chrono>
#include <iosfwd>
#include <memory>
#include <vector>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/cluster/frame_job.hpp"
#include "nanoscopy/fit2d/cli.hpp"
#include "nanoscopy/fit2d/output.hpp"
#include "nanoscopy/fit2d/settings.hpp"

namespace nanoscopy {

// What processing one process's frames gives.
struct Fit2dResult {
  PipelineSummary summary;
  std::vector<double> rows;  // a part's or a rank's localizations (pack_localizations); one process streams them
};

class Fit2dLocalizeJob {
 public:
  // `start`: when the tool started (an MPI run reports the time from there).
  Fit2dLocalizeJob(const Fit2dOptions& options, ToolContext& ctx, const FrameJob& job, StackReader& reader,
                   const Fit2dSetup& setup, std::chrono::steady_clock::time_point start, std::ostream& out);
  ~Fit2dLocalizeJob();

  // Outputs are opened (and their directories checked) before any work; under
  // mpirun only rank 0 writes, and a part writes its part file instead.
  void open_output();

  FrameJobHooks<Fit2dResult> hooks();

 private:
  Fit2dResult process();
  void write_part(const Fit2dResult& r) const;
  static std::vector<double> pack(const Fit2dResult& r);
  Fit2dResult merge(Fit2dResult&& mine, const std::vector<std::vector<double>>& all);
  void write_output(const Fit2dResult& r);

  const Fit2dOptions& options_;
  ToolContext& ctx_;
  const FrameJob& job_;
  StackReader& reader_;
  const StackInfo& info_;
  const Fit2dSetup& setup_;
  std::chrono::steady_clock::time_point start_;
  std::ostream& out_;
  LocWriterContext wctx_;
  std::unique_ptr<Fit2dOutput> sink_;
};

}  // namespace nanoscopy
