#include "nanoscopy/core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstring>
#include <fstream>

#include "nanoscopy/core/error.hpp"

namespace nanoscopy {
namespace {

// Pending temporary names, readable from a signal handler: fixed slots with an
// atomic "in use" flag; the path bytes are written before the flag is set.
constexpr int kSlots = 64;
constexpr std::size_t kPathMax = 4096;
std::array<std::atomic<bool>, kSlots> g_in_use{};
std::array<std::array<char, kPathMax>, kSlots> g_paths{};

int register_temp(const std::string& path) {
  if (path.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (g_in_use[i].load() || !g_in_use[i].compare_exchange_strong(expected, true)) continue;
    g_in_use[i].store(false);
    std::memcpy(g_paths[i].data(), path.c_str(), path.size() + 1);
    g_in_use[i].store(true);
    return i;
  }
  return -1;
}

void unregister_temp(int slot) {
  if (slot >= 0) g_in_use[slot].store(false);
}

extern "C" void cleanup_and_reraise(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (g_in_use[i].load()) ::unlink(g_paths[i].data());
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

std::string describe_errno(int err) { return std::strerror(err); }

}  // namespace

void install_interrupt_cleanup() {
  std::signal(SIGINT, cleanup_and_reraise);
  std::signal(SIGTERM, cleanup_and_reraise);
}

AtomicOutput::AtomicOutput(std::filesystem::path final_path) : final_(std::move(final_path)) {
  namespace fs = std::filesystem;
  const fs::path dir = final_.has_parent_path() ? final_.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw OutputError(final_.string(), "output directory " + dir.string() + " does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw OutputError(final_.string(), "output directory " + dir.string() + " is not writable");
  if (fs::is_directory(final_, ec))
    throw OutputError(final_.string(), "is a directory, expected a file name");
  temp_ = dir / ("." + final_.filename().string() + ".part-" + std::to_string(::getpid()));
  slot_ = register_temp(temp_.string());
}

AtomicOutput::~AtomicOutput() {
  if (!committed_) {
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
  }
  unregister_temp(slot_);
}

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  AtomicOutput file(path);
  {
    std::ofstream out(file.temp_path(), std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) throw OutputError(path.string(), "write failed (disk full?)");
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
  if (std::rename(temp_.c_str(), final_.c_str()) != 0)
    throw OutputError(final_.string(), "could not rename the finished output into place: " + describe_errno(errno));
  committed_ = true;
}

}  // namespace nanoscopy
