// Every output is written under a temporary name in the target directory and
// renamed onto its final name only on success: a failure, an exception or an
// interrupt (SIGINT/SIGTERM/SIGHUP) never leaves a half-written file under the final name.
// Inside a tool's run (core/run_files.hpp) every output is also checked against the
// run's inputs and locked, and the run's outputs are renamed into place together.
#pragma once

#include <signal.h>

#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace nanoscopy {

class AtomicOutput {
 public:
  // Checks that the target's directory exists and is writable and that the
  // target is not a directory or a device (OutputError naming the path
  // otherwise), and reserves a temporary name beside it, registered for the
  // interrupt handler until commit() or destruction.
  // `standalone`: a file outside the run's set (a cache shared by concurrent runs): not planned,
  // not locked, renamed into place by its own commit() even while a group is open.
  enum class Scope { run, standalone };
  explicit AtomicOutput(std::filesystem::path final_path, Scope scope = Scope::run);
  ~AtomicOutput();  // removes the temporary file unless commit() succeeded
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  // Where the writer writes: same directory, hidden name `.NAME.part-HOST-PID` (unique across
  // the hosts of a cluster file system; shortened to fit 255 bytes, see temporary_path_for).
  const std::filesystem::path& temp_path() const { return temp_; }
  const std::filesystem::path& final_path() const { return final_; }

  // fsyncs and renames the temporary file onto the final name. Throws OutputError.
  void commit();

 private:
  std::filesystem::path final_;
  std::filesystem::path temp_;
  int slot_ = -1;  // registration for the interrupt handler
  bool committed_ = false;
  Scope scope_ = Scope::run;
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
  // The same, returning the final names renamed into place, in the order they were finished.
  // SIGINT, SIGTERM and SIGHUP wait until every rename is done: a set is never half renamed by them.
  std::vector<std::filesystem::path> commit_files();

 private:
  friend class AtomicOutput;
  friend std::optional<std::filesystem::path> pending_output_path(const std::filesystem::path& final_path);
  struct Finished {
    std::filesystem::path temp, final;
    int slot;  // still registered: an interrupt removes it
  };
  std::vector<Finished> finished_;
  std::mutex finished_mutex_;  // outputs of one group may be finished on several threads (sofi --balanced)
  bool joined_ = false;  // opened inside another group, which does the work
};

// Writes a whole text file atomically (JSON results, CSV curves, YAML sidecars).
void write_file_atomically(const std::filesystem::path& path, const std::string& text,
                           AtomicOutput::Scope scope = AtomicOutput::Scope::run);

// The temporary file of `final_path` when it is finished in the open group but not yet renamed.
std::optional<std::filesystem::path> pending_output_path(const std::filesystem::path& final_path);

// Refuses (OutputError naming `final_path`) a target whose folder is missing or not writable,
// or that is a directory, a device, a pipe or a socket.
void check_output_target(const std::filesystem::path& final_path);

// A path the interrupt handler removes (a lock file) until released; -1 when no slot is free.
int hold_cleanup_path(const std::string& path);
void release_cleanup_path(int slot);

// Holds SIGINT, SIGTERM and SIGHUP while it lives; they are delivered when it ends. Around a step
// the interrupt handler must see whole: a set's renames, a lock file's creation and its cleanup slot.
class InterruptsHeld {
 public:
  InterruptsHeld();
  ~InterruptsHeld();
  InterruptsHeld(const InterruptsHeld&) = delete;
  InterruptsHeld& operator=(const InterruptsHeld&) = delete;

 private:
  sigset_t previous_;
};

// Installs SIGINT/SIGTERM/SIGHUP handlers that delete every pending temporary output
// (outputs already renamed into place stay), print "<tool>: interrupted" and
// exit with 128 + the signal (130, 143, 129). Installed by ToolApp::run.
void install_interrupt_cleanup(const std::string& tool);

}  // namespace nanoscopy
