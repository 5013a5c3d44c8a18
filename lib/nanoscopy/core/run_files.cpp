#include "nanoscopy/core/run_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/fnv.hpp"

namespace nanoscopy {

namespace fs = std::filesystem;

namespace {

RunFiles* g_current = nullptr;

// Longest file name most file systems take (ext4, XFS, Lustre, GPFS, NFS exports of them).
constexpr std::size_t kNameMax = 255;

std::string hash_of(const std::string& text) {
  Fnv f;
  f.add(text);
  return f.hex();
}

// Paths compared as names: absolute, without "." and "..".
fs::path name_key(const fs::path& path) { return fs::absolute(path).lexically_normal(); }

// The first `limit` bytes of `name`, not cut inside a UTF-8 sequence.
std::string utf8_prefix(const std::string& name, std::size_t limit) {
  if (name.size() <= limit) return name;
  std::size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(name[end]) & 0xC0) == 0x80) --end;
  return name.substr(0, end);
}

// "." + NAME + suffix, or "." + a prefix of NAME + "~" + hash(NAME) + suffix when that is too long.
// `reserve` bytes of the suffix may still grow (a PID's digits).
std::string hidden_name(const std::string& name, const std::string& suffix, std::size_t reserve) {
  const std::size_t room = kNameMax - 1 - suffix.size() - reserve;
  if (name.size() <= room) return "." + name + suffix;
  return "." + utf8_prefix(name, room - 17) + "~" + hash_of(name) + suffix;
}

std::string host_part() { return ".part-" + run_host_name() + "-"; }

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec1, ec2;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a), ec1);
  const fs::path cb = fs::weakly_canonical(fs::absolute(b), ec2);
  if (!ec1 && !ec2 && ca == cb) return true;
  if ((ec1 || ec2) && name_key(a) == name_key(b)) return true;
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool process_dead(long pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

// Who holds a lock file: "HOST PID" (RunFiles::lock writes it); false when it does not read so.
bool lock_owner(const fs::path& lock_file, std::string& host, long& pid) {
  std::ifstream in(lock_file);
  return static_cast<bool>(in >> host >> pid);
}

// The manifest beside a run's main output: "<its name>.run.json". The whole name, extension included, so
// that the runs that wrote x.csv and x.hdf5 (or x.tif) beside each other keep a manifest each.
std::string manifest_file_name(const fs::path& main_output) { return main_output.filename().string() + ".run.json"; }

// An MPI rank other than 0 (from the launcher's environment: the tools start MPI later).
bool secondary_mpi_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    const char* v = std::getenv(name);
    if (v && *v) return std::atoi(v) != 0;
  }
  return false;
}

std::string new_generation() {
  std::random_device random;
  Fnv f;
  f.add(static_cast<std::int64_t>((static_cast<std::uint64_t>(random()) << 32) ^ random()));
  f.add(static_cast<std::int64_t>(std::chrono::system_clock::now().time_since_epoch().count()));
  f.add(run_host_name());
  f.add(static_cast<std::int64_t>(::getpid()));
  return f.hex();
}

// A file's size and a fingerprint of 16 blocks of 4 kB spread over it: a file replaced by another
// run's differs in one or the other, and reading 64 kB costs nothing next to writing the file.
struct FileMark {
  std::uintmax_t bytes = 0;
  std::string fingerprint;
};

FileMark mark_of(const fs::path& path) {
  FileMark m;
  std::ifstream in(path, std::ios::binary);
  if (!in) return m;
  std::error_code ec;
  m.bytes = fs::file_size(path, ec);
  constexpr std::uintmax_t block = 4096, blocks = 16;
  Fnv f;
  f.add(std::to_string(m.bytes));
  std::string buffer(block, '\0');
  for (std::uintmax_t i = 0; i < blocks; ++i) {
    const std::uintmax_t at = m.bytes <= block ? 0 : (m.bytes - block) * i / (blocks - 1);
    in.seekg(static_cast<std::streamoff>(at));
    in.read(buffer.data(), static_cast<std::streamsize>(block));
    f.add(buffer.data(), static_cast<std::size_t>(in.gcount()));
    in.clear();
    if (m.bytes <= block) break;
  }
  m.fingerprint = f.hex();
  return m;
}

// Removes what runs of this host that were killed (SIGKILL, power loss) left in `dir`: their
// temporary files `.NAME.part-HOST-PID` and their locks `.NAME.lock` holding "HOST PID", when that
// PID is gone. Another host's files are never touched: its PIDs mean nothing here.
void remove_stale_run_files(const fs::path& dir) {
  const std::string part = host_part();
  std::error_code ec;
  for (fs::directory_iterator it(dir.empty() ? fs::path(".") : dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] != '.') continue;
    long pid = 0;
    if (const auto at = name.rfind(part); at != std::string::npos) {
      const std::string digits = name.substr(at + part.size());
      if (digits.empty() || digits.size() > 10 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
      pid = std::stol(digits);
    } else if (std::string host; name.ends_with(".lock")) {
      if (!lock_owner(it->path(), host, pid) || host != run_host_name()) continue;
    } else {
      continue;
    }
    if (process_dead(pid)) {
      std::error_code ignored;
      fs::remove(it->path(), ignored);
    }
  }
}

}  // namespace

const std::string& run_host_name() {
  static const std::string host = [] {
    std::array<char, 256> buffer{};
    if (::gethostname(buffer.data(), buffer.size() - 1) != 0 || buffer[0] == '\0') return std::string("localhost");
    std::string h(buffer.data());
    for (char& c : h)
      if (c == '/' || c == ' ' || static_cast<unsigned char>(c) < 32) c = '_';
    return h.size() > 32 ? h.substr(0, 15) + "~" + hash_of(h) : h;
  }();
  return host;
}

fs::path temporary_path_for(const fs::path& final_path) {
  // Room for the longest PID, so that a name's temporaries all shorten alike.
  const std::string name = hidden_name(final_path.filename().string(), host_part(), 10) + std::to_string(::getpid());
  return final_path.parent_path() / name;
}

fs::path lock_path_for(const fs::path& final_path) {
  return final_path.parent_path() / hidden_name(final_path.filename().string(), ".lock", 0);
}

RunFiles::RunFiles(std::string tool, bool one_set)
    : tool_(std::move(tool)), generation_(new_generation()), writes_(!secondary_mpi_rank()),
      group_(one_set ? std::make_unique<OutputGroup>() : nullptr) {
  g_current = this;
}

RunFiles::~RunFiles() {
  if (g_current == this) g_current = nullptr;
  group_.reset();  // removes the finished but uncommitted outputs
  for (std::size_t i = 0; i < locks_.size(); ++i) {
    ::unlink(locks_[i].c_str());
    release_cleanup_path(lock_slots_[i]);
  }
}

RunFiles* RunFiles::current() { return g_current; }

const RunFiles* recorded_run() {
  return g_current && g_current->one_set() && !g_current->manifest_name().empty() ? g_current : nullptr;
}

fs::path RunFiles::manifest_path() const {
  const std::lock_guard guard(mutex_);
  if (outputs_.empty()) return {};
  return outputs_.front().path.parent_path() / manifest_file_name(outputs_.front().path);
}

std::string RunFiles::manifest_name() const {
  const std::lock_guard guard(mutex_);
  if (outputs_.size() < 2) return "";  // one file is no set: nothing to name (and its bytes stay the same)
  return manifest_file_name(outputs_.front().path);
}

bool RunFiles::is_input(const fs::path& path) const {
  const std::lock_guard guard(mutex_);
  for (const File& in : inputs_)
    if (same_file(in.path, path)) return true;
  return false;
}

void RunFiles::note_written(const fs::path& path) {
  const std::lock_guard guard(mutex_);
  written_.push_back(name_key(path));
}

void RunFiles::add_input(const fs::path& path, const std::string& what) {
  const std::lock_guard guard(mutex_);
  if (path.empty()) return;
  for (const File& in : inputs_)
    if (in.path == path) return;
  File file{path, what};
  if (checked_) check_input_against_outputs(file);
  inputs_.push_back(std::move(file));
}

void RunFiles::add_output(const fs::path& path, const std::string& what, bool confirm) {
  const std::lock_guard guard(mutex_);
  if (path.empty()) return;
  const fs::path key = name_key(path);
  for (const File& out : outputs_) {
    if (name_key(out.path) != key) continue;
    // A writer confirming a declared output, or a step declaring its files again once the plan is
    // checked (fit2d's chain declared them, then runs the step), is the same output; two roles for
    // one name in the plan are two outputs in one file.
    if (confirm || checked_ || out.what == what) return;
    throw UsageError(path.string(), what + " and " + out.what + " (" + out.path.string() +
                                        ") are the same file: give them different names");
  }
  outputs_.push_back({path, what});
  if (!checked_) return;
  check_output(outputs_.back(), outputs_.size() - 1);
  if (writes_) {
    clean_directory(path);
    lock(path);
  }
}

void RunFiles::clean_directory(const fs::path& output) {
  const fs::path dir = output.has_parent_path() ? output.parent_path() : fs::path(".");
  const fs::path key = name_key(dir);
  if (std::find(cleaned_.begin(), cleaned_.end(), key) != cleaned_.end()) return;
  cleaned_.push_back(key);
  remove_stale_run_files(dir);
}

void RunFiles::check_input_against_outputs(const File& in) const {
  for (const File& out : outputs_) {
    if (!same_file(out.path, in.path)) continue;
    // The run reading back what it wrote (fit2d --undrift reads the new localizations) is no clash.
    if (pending_output_path(out.path)) continue;
    if (std::find(written_.begin(), written_.end(), name_key(out.path)) != written_.end()) continue;
    throw UsageError(out.path.string(), out.what + " would write over " + in.what + " (" + in.path.string() +
                                            "), which this run reads: name the output differently");
  }
}

void RunFiles::check_output(const File& out, std::size_t index) const {
  for (const File& in : inputs_)
    if (same_file(out.path, in.path))
      throw UsageError(out.path.string(), out.what + " would write over " + in.what + " (" + in.path.string() +
                                              "), which this run reads: name the output differently");
  for (std::size_t j = 0; j < outputs_.size(); ++j)
    if (j != index && same_file(out.path, outputs_[j].path))
      throw UsageError(out.path.string(), out.what + " and " + outputs_[j].what + " (" + outputs_[j].path.string() +
                                              ") are the same file: give them different names");
}

void RunFiles::lock(const fs::path& path) {
  check_output_target(path);  // a missing or unwritable folder is named as for the output itself
  const fs::path lock_file = lock_path_for(path);
  const std::string me = run_host_name() + " " + std::to_string(::getpid()) + "\n";
  for (int attempt = 0; attempt < 2; ++attempt) {
    // An interrupt between creating the lock and registering it for cleanup would leave it behind
    // (test_output_plan's SIGHUP case under load); registering first could remove another run's lock.
    const InterruptsHeld held;
    const int fd = ::open(lock_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      const ssize_t written = ::write(fd, me.data(), me.size());
      const int err = errno;
      ::close(fd);
      if (written != static_cast<ssize_t>(me.size())) {
        ::unlink(lock_file.c_str());
        // A full disk: the output's own write fails in a moment and names the output.
        if (err == ENOSPC || err == EDQUOT) return;
        throw OutputError(path.string(), "cannot write the lock file " + lock_file.string() + ": " + std::strerror(err));
      }
      locks_.push_back(lock_file.string());
      lock_slots_.push_back(hold_cleanup_path(lock_file.string()));
      return;
    }
    if (errno != EEXIST)
      throw OutputError(path.string(), "cannot create the lock file " + lock_file.string() + ": " + std::strerror(errno));
    std::string host;
    long pid = 0;
    const bool readable = lock_owner(lock_file, host, pid);
    if (attempt == 0 && readable && host == run_host_name() && process_dead(pid)) {
      ::unlink(lock_file.c_str());  // its run was killed on this host: take it over
      continue;
    }
    const std::string who = readable ? "host " + host + ", PID " + std::to_string(pid) : "an unreadable lock";
    throw OutputError(path.string(), "another run is writing it (" + who + ", lock file " + lock_file.string() +
                                         "): wait for that run, or remove the lock file if it is gone");
  }
}

void RunFiles::check() {
  const std::lock_guard guard(mutex_);
  if (checked_) return;
  if (outputs_.size() >= 2) add_output(manifest_path(), "the run's manifest", false);
  for (std::size_t i = 0; i < outputs_.size(); ++i) check_output(outputs_[i], i);
  checked_ = true;
  if (!writes_) return;
  for (const File& out : outputs_) clean_directory(out.path);
  for (const File& out : outputs_) lock(out.path);
  warn_if_previous_set_mixed();
}

// The set this run replaces, as its manifest recorded it: a file changed since (a run killed between
// its renames, or a step run again on its own) is said once; this run writes the set anew.
void RunFiles::warn_if_previous_set_mixed() const {
  const fs::path manifest = manifest_path();
  std::ifstream in(manifest);
  if (manifest.empty() || !in) return;
  try {
    const nlohmann::json doc = nlohmann::json::parse(in);
    for (const auto& f : doc.at("files")) {
      const fs::path file = manifest.parent_path() / f.at("file").get<std::string>();
      std::error_code ec;
      if (!fs::is_regular_file(file, ec)) continue;  // gone, or no file of any run
      const FileMark m = mark_of(file);
      if (m.bytes != f.at("bytes").get<std::uintmax_t>() || m.fingerprint != f.at("fingerprint").get<std::string>()) {
        run_warning(manifest.string(), "the previous run's files are a mixed set (" + file.filename().string() +
                                           " changed after that run); this run writes the set anew");
        return;
      }
    }
  } catch (const std::exception&) {
    run_warning(manifest.string(), "not a readable run manifest; this run writes it anew");
  }
}

void RunFiles::commit() {
  const std::lock_guard guard(mutex_);
  if (!group_) return;  // outputs renamed one by one (bench's scratch files): no set to name
  const std::vector<fs::path> files = group_->commit_files();
  if (files.size() < 2 || !writes_) return;
  // Written last: the set it names is complete once it is there.
  const fs::path manifest = manifest_path();
  nlohmann::ordered_json doc;
  doc["format"] = "nanoscopy run manifest";
  doc["version"] = 1;
  doc["tool"] = tool_;
  doc["generation"] = generation_;
  doc["host"] = run_host_name();
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const fs::path& f : files) {
    const FileMark m = mark_of(f);
    list.push_back({{"file", f.filename().string()}, {"bytes", m.bytes}, {"fingerprint", m.fingerprint}});
  }
  doc["files"] = list;
  if (std::find(files.begin(), files.end(), manifest) != files.end()) return;  // a tool's own output of that name
  add_output(manifest, "the run's manifest", true);
  write_file_atomically(manifest, doc.dump(1) + "\n");
}

void plan_input(const std::string& path, const std::string& what) {
  if (g_current) g_current->add_input(path, what);
}

void plan_output(const std::string& path, const std::string& what) {
  if (g_current) g_current->add_output(path, what, false);
}

void confirm_output(const std::string& path, const std::string& what) {
  if (g_current) g_current->add_output(path, what, true);
}

bool planned_input(const std::string& path) { return g_current && g_current->is_input(path); }

void check_run_plan() {
  if (g_current) g_current->check();
}

std::string input_path(const std::string& path, const std::string& what) {
  if (!g_current) return path;
  if (const auto pending = pending_output_path(path)) return pending->string();
  g_current->add_input(path, what);  // checked against the outputs (one already written is no clash)
  return path;
}

std::string check_run_set(const fs::path& path, const std::string& generation, const std::string& manifest,
                          const RunRecordReader& record_of) {
  if (generation.empty() || manifest.empty()) return "";
  const fs::path manifest_path = path.parent_path() / manifest;
  std::ifstream in(manifest_path);
  if (!in) return "";  // a set copied without its manifest: nothing to compare
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const std::exception&) {
    return manifest_path.string() + " is not a readable run manifest";
  }
  if (!doc.is_object()) return manifest_path.string() + " is not a readable run manifest";
  const auto text = [&](const char* key) {
    const auto it = doc.find(key);
    return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (text("generation") != generation)
    return "is from another run than the rest of its set (" + manifest_path.string() +
           "): a later run wrote the set without it, or a run was killed before it finished; run it again";
  const auto files = doc.find("files");
  if (files == doc.end() || !files->is_array()) return "";
  // A file of the set that names this manifest but another generation was written by a run of this
  // set that did not finish (SIGKILL, power loss between the renames). A file that names another
  // manifest was made again by a later step on purpose.
  for (const auto& f : *files) {
    if (!f.is_object() || !f.contains("file") || !f["file"].is_string()) continue;
    const fs::path other = path.parent_path() / f["file"].get<std::string>();
    if (other == path) continue;
    const RunRecord record = record_of(other);
    if (record.manifest == manifest && !record.generation.empty() && record.generation != generation)
      return "its set (" + manifest_path.string() + ") is mixed: " + other.string() +
             " is from another run that did not finish; run it again";
  }
  return "";
}

void run_warning(const std::string& where, const std::string& what) {
  const std::string tool = g_current ? g_current->tool() : std::string("nanoscopy");
  std::string line = tool + ": warning: " + where + ": " + what;
  if (line.size() > 1000) line = line.substr(0, 997) + "...";
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace nanoscopy
