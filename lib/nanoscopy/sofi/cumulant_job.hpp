// sofi's cumulant images of a stack as a frame job (cluster/frame_job.hpp): one
// process sums the range (and, with --split, its odd/even frames or halves) and
// writes the images; a part writes its partial sums for sofi merge; under mpirun
// each rank sums its share as one sequence and rank 0 adds them, completes the
// blocks cut between ranks and writes the images.
#pragma once

#include <chrono>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/cluster/frame_job.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/smre/runner.hpp"
#include "nanoscopy/sofi/balanced_output.hpp"
#include "nanoscopy/sofi/cli.hpp"
#include "nanoscopy/sofi/corrections.hpp"
#include "nanoscopy/sofi/runner.hpp"
#include "nanoscopy/sofi/problem.hpp"

namespace nanoscopy {

// Threads for the host's share of merging (completing cut blocks): every core.
int sofi_threads();

// One image's frames: the range, or with --split one of its halves.
struct SequenceJob {
  std::string suffix;  // "" for the main image, else "_even", "_odd", "_first", "_second"
  FrameSequence sequence;
};

// What one sequence's run gives (a part or a rank has one; --split adds the halves).
struct SequenceResult {
  SequenceJob job;
  SofiAccumulation acc;
  std::string engine;
  double seconds = 0;  // engine set-up and the run
};
using SofiResults = std::vector<SequenceResult>;

class SofiCumulantJob {
 public:
  // Reads the settings, builds the pre-SMRE runner and the extra readers, and
  // checks the outputs before any work.
  SofiCumulantJob(const SofiCliOptions& options, ToolContext& ctx, const FrameJob& job, StackReader& reader,
                  const SofiProblem& problem, const SofiProblemOptions& problem_options, std::ostream& out);
  ~SofiCumulantJob();

  FrameJobHooks<SofiResults> hooks();

 private:
  void make_filter();
  void check_outputs();
  SofiRunInput input_for(FrameSequence sequence, std::int64_t begin, std::int64_t end, std::string label) const;
  SequenceResult run(const SequenceJob& job, std::int64_t begin, std::int64_t end, std::string label) const;
  // --bleach-correction none: one block over the whole sequence; else --block.
  std::int64_t block_for(const FrameSequence& sequence) const;
  void measure_corrections();  // the first pass of --undrift / --bleach-correction exponential
  void print_corrections_summary() const;
  SofiResults process();
  void write_part(SequenceResult& r) const;
  SofiResults merge(SofiResults&& mine, const std::vector<std::vector<double>>& all) const;
  void write_merged(const SequenceResult& r) const;
  void write_images(const SofiResults& results) const;
  void print_image_summary(const SequenceResult& r, const SofiImages& images, const std::vector<std::string>& files,
                           double seconds) const;
  double seconds() const;

  const SofiCliOptions& options_;
  ToolContext& ctx_;
  const FrameJob& job_;
  StackReader& reader_;
  const StackInfo info_;
  const SofiProblem& problem_;
  const SofiProblemOptions& problem_options_;
  std::ostream& out_;
  std::int64_t block_ = 0, chunk_ = 0;
  int read_threads_ = 0;  // Input/read threads
  std::string pre_, post_, split_, output_;
  double pixel_size_ = 0;
  BalancedOptions balanced_;
  SofiCorrectionSettings correction_settings_;
  std::optional<SofiCorrections> corrections_;  // after the first pass, when one is asked for
  std::unique_ptr<SmreRunner> pre_runner_;
  FrameFilter filter_;
  std::vector<std::unique_ptr<StackReader>> gpu_readers_;  // cuda:all: GPU g's reader at g - 1
  std::chrono::steady_clock::time_point start_;
};

}  // namespace nanoscopy
