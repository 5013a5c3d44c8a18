// Every output is written under a temporary name in the target directory and
// renamed onto its final name only on success: a failure, an exception or an
// interrupt (SIGINT/SIGTERM) never leaves a half-written file under the final name.
#pragma once

#include <filesystem>
#include <string>

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

// Writes a whole text file atomically (JSON results, CSV curves, YAML sidecars).
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

// Installs SIGINT/SIGTERM handlers that delete every pending temporary output
// (outputs already renamed into place stay), print "<tool>: interrupted" and
// exit with 128 + the signal (130, 143). Installed by ToolApp::run.
void install_interrupt_cleanup(const std::string& tool);

}  // namespace nanoscopy
