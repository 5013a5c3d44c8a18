// Progress of a long loop on stderr: a redrawn bar on a terminal, one line per
// 10 % otherwise (logs, SLURM output files); silent with --quiet.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace nanoscopy {

class Progress {
 public:
  Progress(std::string label, std::int64_t total, bool quiet);
  ~Progress();  // finishes the line on a terminal
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` items of `total` are finished; cheap to call often.
  void update(std::int64_t done);
  void finish();

 private:
  void draw(std::int64_t done, bool final);

  std::string label_;
  std::int64_t total_;
  bool quiet_;
  bool tty_;
  bool finished_ = false;
  int last_decile_ = -1;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

// Global default for tools: set from --quiet.
void set_quiet(bool quiet);
bool quiet();

}  // namespace nanoscopy
