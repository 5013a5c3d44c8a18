#include "nanoscopy/core/atomic_file.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"

namespace nanoscopy {
namespace {

// Pending temporary names, readable from a signal handler: fixed slots, each
// free, claimed (its path being copied) or ready (the handler may unlink it).
enum SlotState : int { kFree = 0, kClaimed = 1, kReady = 2 };
constexpr int kSlots = 256;  // temporary outputs and lock files of one run
constexpr std::size_t kPathMax = 4096;
static_assert(std::atomic<int>::is_always_lock_free, "the interrupt handler needs lock-free atomics");
std::array<std::atomic<int>, kSlots> g_state{};
std::array<std::array<char, kPathMax>, kSlots> g_paths{};
// "<tool>: interrupted\n", written by the handler with write(2).
std::array<char, 128> g_message{};
std::size_t g_message_length = 0;

int register_temp(const std::string& path) {
  if (path.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_state[i].compare_exchange_strong(expected, kClaimed)) continue;
    std::memcpy(g_paths[i].data(), path.c_str(), path.size() + 1);
    g_state[i].store(kReady);
    return i;
  }
  return -1;
}

bool temp_registered(const std::string& path) {
  for (int i = 0; i < kSlots; ++i)
    if (g_state[i].load() == kReady && path == g_paths[i].data()) return true;
  return false;
}

void unregister_temp(int slot) {
  if (slot >= 0) g_state[slot].store(kFree);
}

// Async-signal-safe: unlink, write and _exit only; no allocation, no locks.
extern "C" void cleanup_and_exit(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (g_state[i].load() == kReady) ::unlink(g_paths[i].data());
  if (g_message_length > 0) {
    const ssize_t written = ::write(STDERR_FILENO, g_message.data(), g_message_length);
    (void)written;
  }
  ::_exit(128 + sig);
}

std::string describe_errno(int err) { return std::strerror(err); }

OutputGroup* g_open_group = nullptr;

void rename_into_place(const std::filesystem::path& temp, const std::filesystem::path& final_path) {
  if (std::rename(temp.c_str(), final_path.c_str()) != 0)
    throw OutputError(final_path.string(), "could not rename the finished output into place: " + describe_errno(errno));
}

}  // namespace

void install_interrupt_cleanup(const std::string& tool) {
  // On a terminal the ^C echo (or a progress bar) ends the line; in a log the message is a line of its own.
  std::string message = (::isatty(STDERR_FILENO) ? "\n" : "") + (tool.empty() ? std::string("nanoscopy") : tool);
  message = message.substr(0, g_message.size() - 16) + ": interrupted\n";
  std::memcpy(g_message.data(), message.data(), message.size());
  g_message_length = message.size();
  struct sigaction action {};
  action.sa_handler = cleanup_and_exit;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGINT);
  sigaddset(&action.sa_mask, SIGTERM);
  sigaddset(&action.sa_mask, SIGHUP);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGHUP, &action, nullptr);  // the terminal or the SSH session closed
}

int hold_cleanup_path(const std::string& path) { return register_temp(path); }

InterruptsHeld::InterruptsHeld() {
  sigset_t held;
  sigemptyset(&held);
  sigaddset(&held, SIGINT);
  sigaddset(&held, SIGTERM);
  sigaddset(&held, SIGHUP);
  ::pthread_sigmask(SIG_BLOCK, &held, &previous_);
}

InterruptsHeld::~InterruptsHeld() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

void release_cleanup_path(int slot) { unregister_temp(slot); }

void check_output_target(const std::filesystem::path& final_path) {
  namespace fs = std::filesystem;
  const fs::path dir = final_path.has_parent_path() ? final_path.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw OutputError(final_path.string(), fs::exists(dir, ec) ? dir.string() + " is not a directory"
                                                               : "output directory " + dir.string() + " does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw OutputError(final_path.string(), "output directory " + dir.string() + " is not writable");
  const fs::file_status existing = fs::status(final_path, ec);  // follows a symbolic link to its target
  if (fs::is_directory(existing))
    throw OutputError(final_path.string(), "is a directory, expected a file name");
  // The rename would replace a device (/dev/null, /dev/full), a pipe or a socket with a regular file.
  if (fs::exists(existing) && !fs::is_regular_file(existing))
    throw OutputError(final_path.string(), "is not a regular file (a device, pipe or socket): name a file to write");
}

std::optional<std::filesystem::path> pending_output_path(const std::filesystem::path& final_path) {
  if (!g_open_group) return std::nullopt;
  const auto key = std::filesystem::absolute(final_path).lexically_normal();
  const std::lock_guard lock(g_open_group->finished_mutex_);
  for (const auto& f : g_open_group->finished_)
    if (std::filesystem::absolute(f.final).lexically_normal() == key) return f.temp;
  return std::nullopt;
}

AtomicOutput::AtomicOutput(std::filesystem::path final_path, Scope scope)
    : final_(std::move(final_path)), scope_(scope) {
  check_output_target(final_);
  // The backstop of the run's plan: an output the tool did not declare is still checked against
  // what the run reads and locked, before anything is renamed into place.
  if (scope_ == Scope::run) {
    confirm_output(final_.string(), "the output " + final_.filename().string());
    check_run_plan();  // the first output seals the plan, if the tool has not
  }
  temp_ = temporary_path_for(final_);
  // One name written twice at once, or twice in one set, would leave one file holding the other's bytes.
  if (pending_output_path(final_) || temp_registered(temp_.string()))
    throw UsageError(final_.string(), "two outputs of this run have this name: give them different names");
  slot_ = register_temp(temp_.string());
}

AtomicOutput::~AtomicOutput() {
  if (!committed_) {
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
  }
  unregister_temp(slot_);
}

void write_file_atomically(const std::filesystem::path& path, const std::string& text, AtomicOutput::Scope scope) {
  AtomicOutput file(path, scope);
  {
    std::ofstream out(file.temp_path(), std::ios::binary);
    if (!out) throw OutputError(path.string(), "cannot create " + file.temp_path().string() + ": " + describe_errno(errno));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) throw OutputError(path.string(), "write failed: " + describe_errno(errno));
  }
  file.commit();
}

void AtomicOutput::commit() {
  const int fd = ::open(temp_.c_str(), O_RDONLY);
  if (fd < 0) throw OutputError(final_.string(), "the temporary output " + temp_.string() + " vanished");
  const int sync_result = ::fsync(fd);
  const int sync_errno = errno;
  ::close(fd);
  if (sync_result != 0)
    throw OutputError(final_.string(), "could not flush the output: " + describe_errno(sync_errno));
  if (g_open_group && scope_ == Scope::run) {  // the group renames it, or removes it on failure
    const std::lock_guard lock(g_open_group->finished_mutex_);
    g_open_group->finished_.push_back({temp_, final_, slot_});
    committed_ = true;
    slot_ = -1;
    return;
  }
  rename_into_place(temp_, final_);
  if (scope_ == Scope::run)
    if (RunFiles* run = RunFiles::current()) run->note_written(final_);
  committed_ = true;
  unregister_temp(slot_);  // the temporary name is gone: an interrupt has nothing left to remove
  slot_ = -1;
}

OutputGroup::OutputGroup() {
  joined_ = g_open_group != nullptr;
  if (!joined_) g_open_group = this;
}

OutputGroup::~OutputGroup() {
  if (g_open_group == this) g_open_group = nullptr;
  for (const auto& f : finished_) {
    std::error_code ec;
    std::filesystem::remove(f.temp, ec);
    unregister_temp(f.slot);
  }
}

void OutputGroup::commit() { static_cast<void>(commit_files()); }

std::vector<std::filesystem::path> OutputGroup::commit_files() {
  std::vector<std::filesystem::path> renamed;
  if (joined_) return renamed;
  if (g_open_group == this) g_open_group = nullptr;
  // Each rename is atomic; the signals a run can catch wait until all are done, so they never
  // leave a set half renamed (SIGKILL and power loss can: the run's manifest tells, run_files.hpp).
  const InterruptsHeld held;
  while (!finished_.empty()) {
    const Finished f = finished_.front();
    rename_into_place(f.temp, f.final);
    unregister_temp(f.slot);
    renamed.push_back(f.final);
    finished_.erase(finished_.begin());
  }
  return renamed;
}

}  // namespace nanoscopy
