// Every output is written under a temporary name in the target directory and
// renamed onto its final name only on success: a failure, an exception or an
// interrupt (SIGINT/SIGTERM) never leaves a half-written file under the final name.
#pragma once

#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

namespace nanoscopy {

class AtomicOutput {
 public:
  // Checks that the target's directory exists and is writable and that the
  // target is not a directory or a device (OutputError naming the path
  // otherwise), and reserves a temporary name beside it, registered for the
  // interrupt handler until commit() or destruction.
  explicit AtomicOutput(std::filesystem::path final_path);
  ~AtomicOutput();  // removes the temporary file unless commit() succeeded
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  // Where the writer writes: same directory, hidden name, unique per process.
  const std::filesystem::path& temp_path() const { return temp_; }
  const std::filesystem::path& final_path() const { return final_; }

  // fsyncs and renames the temporary file onto the final name. Throws OutputError.
  void commit();

 private:
  std::filesystem::path final_;
  std::filesystem::path temp_;
  int slot_ = -1;  // registration for the interrupt handler
  bool committed_ = false;
};

// Outputs that belong together appear together: while an OutputGroup is open,
// AtomicOutput::commit() finishes its file (fsync) but leaves it under the
// temporary name; the group's commit() renames them all into place, and its
// destructor (an error, an exception) removes them, so the outputs of an
// earlier run stay as they were. A group opened inside an open group joins it
// (the outer one renames). Used in the tool's main thread (fit2d's localizations,
// tracks and drift; sofi --split's images; bench simulate's movie and truth;
// smre --simulate). Nothing may read a grouped output by its final name before commit().
class OutputGroup {
 public:
  OutputGroup();
  ~OutputGroup();
  OutputGroup(const OutputGroup&) = delete;
  OutputGroup& operator=(const OutputGroup&) = delete;
  void commit();  // renames every finished output onto its final name. Throws OutputError.

 private:
  friend class AtomicOutput;
  struct Finished {
    std::filesystem::path temp, final;
    int slot;  // still registered: an interrupt removes it
  };
  std::vector<Finished> finished_;
  std::mutex finished_mutex_;  // outputs of one group may be finished on several threads (sofi --balanced)
  bool joined_ = false;  // opened inside another group, which does the work
};

// Writes a whole text file atomically (JSON results, CSV curves, YAML sidecars).
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

// Installs SIGINT/SIGTERM handlers that delete every pending temporary output
// (outputs already renamed into place stay), print "<tool>: interrupted" and
// exit with 128 + the signal (130, 143). Installed by ToolApp::run.
void install_interrupt_cleanup(const std::string& tool);

}  // namespace nanoscopy
