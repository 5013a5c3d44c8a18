// The files of one run of a tool: what it reads and what it will write.
//
// A user's movie, its .yaml, calibrations and camera maps are irreplaceable, and batch
// scripts build output names from input names. So every run (ToolApp::run opens one
// around the tool's body) keeps one plan:
//   - inputs: declared by the tool (plan_input) and by every reader as it opens a file
//     (input_path), so a sidecar found on the way (the movie's .yaml, the camera maps it
//     names) is known too;
//   - outputs: declared by the tool before any work (plan_output: main output, sidecars,
//     previews, plots, drift tables, pipeline steps, parts), and by AtomicOutput for any
//     file the tool forgot (a backstop: still before anything is renamed into place).
// An output that is the same file as an input (same path once links are resolved, or the
// same device and inode: a hard link) or as another output is refused with exit 2 and one
// line naming both. Every output is locked for the run: an O_EXCL file `.NAME.lock` beside it
// holds host and PID (flock is not reliable on Lustre, GPFS or NFS); a second run writing it
// is refused, and a lock is taken over only when it comes from this host and its PID is dead.
//
// Before the first output of a folder is locked, the temporary and lock files that killed runs of
// this host left in that folder (their PID is gone) are removed.
//
// A run's files are one generation: they are renamed into place together at the end (the
// run's OutputGroup; signals are held during the renames), and a run that writes several
// files then writes a manifest, `<main output>.run.json` (its whole name: `locs.hdf5.run.json`), naming each file with its size, a
// sampled fingerprint and the run's generation id. Writers that have metadata record the
// generation and the manifest's name (localization .yaml). check_run_set() tells a file
// from another run than the manifest of its set (a run killed with SIGKILL between renames,
// or a later run that wrote fewer files).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace nanoscopy {

class OutputGroup;

class RunFiles {
 public:
  // `one_set`: the run's outputs are renamed into place together at commit(); false for a tool that
  // writes scratch files and reads them back (bench): each output is renamed as it is finished.
  explicit RunFiles(std::string tool, bool one_set = true);
  ~RunFiles();  // removes what was not committed, releases the locks
  RunFiles(const RunFiles&) = delete;
  RunFiles& operator=(const RunFiles&) = delete;

  // The run of this process (nullptr outside a tool's run, as in library tests).
  static RunFiles* current();

  // `what` is the file's role in the user's words: "the movie", "--params", "the preview (--png)".
  void add_input(const std::filesystem::path& path, const std::string& what);
  // `confirm`: a writer confirming its file (declared by the tool, or not): no clash with a declared
  // output of that name. Otherwise a second role for a declared name is a clash.
  void add_output(const std::filesystem::path& path, const std::string& what, bool confirm);
  // Checks every output against every input and every other output (UsageError naming both),
  // then locks the outputs and removes this host's stale temporary files of them. After
  // check(), add_input and add_output check (and lock) each new file at once.
  void check();

  // Renames the run's finished outputs into place together and writes the manifest when
  // there are several. Throws OutputError.
  void commit();

  // A random id of this run (16 hex digits), recorded in the outputs' metadata and the manifest.
  const std::string& generation() const { return generation_; }
  // The manifest's file name (no directory) once the run has two outputs or more, else "".
  std::string manifest_name() const;
  std::filesystem::path manifest_path() const;
  // Whether `path` is a file this run reads (declared or opened so far).
  bool is_input(const std::filesystem::path& path) const;
  // An output renamed into place before commit(): the run may read it back.
  void note_written(const std::filesystem::path& path);
  const std::string& tool() const { return tool_; }
  bool one_set() const { return group_ != nullptr; }

 private:
  struct File {
    std::filesystem::path path;
    std::string what;
  };
  void check_output(const File& out, std::size_t index) const;
  void check_input_against_outputs(const File& in) const;
  void lock(const std::filesystem::path& path);
  void warn_if_previous_set_mixed() const;
  // Once per output folder: removes the temporary and lock files of this host's killed runs there.
  void clean_directory(const std::filesystem::path& output);

  std::string tool_;
  std::string generation_;
  std::vector<File> inputs_, outputs_;
  std::vector<std::filesystem::path> written_;  // outputs already renamed into place (no group)
  std::vector<std::filesystem::path> cleaned_;  // output folders cleaned of killed runs' files
  std::vector<std::string> locks_;  // lock files this run holds
  std::vector<int> lock_slots_;     // their registration for the interrupt handler
  bool checked_ = false;
  bool writes_ = true;  // false on an MPI rank other than 0: it checks, but rank 0 writes and locks
  std::unique_ptr<OutputGroup> group_;
  // Outputs may be opened on several threads at once (sofi --balanced writes its files side by side).
  mutable std::recursive_mutex mutex_;
};

// The run whose generation the files being written record (their metadata): the current run when
// its outputs are one set; nullptr outside a run and for bench, whose simulated data stay the same
// bytes for the same seed.
const RunFiles* recorded_run();

// Free functions for the tools and readers; each does nothing outside a run.
void plan_input(const std::string& path, const std::string& what);
void plan_output(const std::string& path, const std::string& what);
// A writer's own declaration of the file it opens (AtomicOutput, the localization writers): adds it
// when the tool did not, and never clashes with the tool's declaration of it.
void confirm_output(const std::string& path, const std::string& what);
void check_run_plan();
// Whether the current run reads `path` (false outside a run).
bool planned_input(const std::string& path);

// Where a reader opens `path`: the path itself, registered as an input of the run; or, when
// it is an output this run has finished but not yet renamed (fit2d --undrift reads the
// localizations it just wrote), that temporary file.
std::string input_path(const std::string& path, const std::string& what);

// The hidden names beside `final_path` that a run uses: `.NAME.part-HOST-PID` and
// `.NAME.lock`, shortened (a prefix of NAME and a hash of it) so that they stay within the
// file system's 255-byte name limit whenever NAME itself is legal.
std::filesystem::path temporary_path_for(const std::filesystem::path& final_path);
std::filesystem::path lock_path_for(const std::filesystem::path& final_path);

// This host's name as used in temporary and lock names (at most 64 bytes, no '/').
const std::string& run_host_name();

// What a file's metadata says of its run ("" where it says nothing).
struct RunRecord {
  std::string generation, manifest;
};
using RunRecordReader = std::function<RunRecord(const std::filesystem::path&)>;

// Checks the set that `path` belongs to, from what its metadata records (`generation`, the
// `manifest`'s name beside it): "" when the set is whole or cannot be told (no manifest), else
// what is mixed: the manifest names another generation (a later run wrote the set without this
// file, or this file's run was killed before its manifest), or another file of the set names this
// manifest with another generation (its run did not finish). `record_of` reads another file's record.
std::string check_run_set(const std::filesystem::path& path, const std::string& generation,
                          const std::string& manifest, const RunRecordReader& record_of);

// "<tool>: warning: <where>: <what>" on stderr, one line of at most 1,000 characters.
void run_warning(const std::string& where, const std::string& what);

}  // namespace nanoscopy
