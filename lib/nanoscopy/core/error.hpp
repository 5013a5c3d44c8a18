// One exception hierarchy for the whole suite. Each app's main catches once,
// prints `<tool>: error: <where>: <what>` and exits with exit_code(kind).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace nanoscopy {

enum class ErrorKind { usage, input, output, device, other };

// Distinct process exit codes (documented in docs/common.md and in --help).
constexpr int exit_code(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::usage: return 2;
    case ErrorKind::input: return 3;
    case ErrorKind::output: return 4;
    case ErrorKind::device: return 5;
    case ErrorKind::other: return 1;
  }
  return 1;
}

// `where` names the file (or file:line, or frame) the problem is about; may be empty.
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string where, const std::string& what)
      : std::runtime_error(what), kind_(kind), where_(std::move(where)) {}
  ErrorKind kind() const noexcept { return kind_; }
  const std::string& where() const noexcept { return where_; }
  // "where: what", or "what" when there is no place to name.
  std::string message() const { return where_.empty() ? what() : where_ + ": " + what(); }

 private:
  ErrorKind kind_;
  std::string where_;
};

// Bad command line or bad parameter (file) value.
struct UsageError : Error {
  UsageError(std::string where, const std::string& what) : Error(ErrorKind::usage, std::move(where), what) {}
};
// Unreadable, malformed or unsupported input data.
struct InputError : Error {
  InputError(std::string where, const std::string& what) : Error(ErrorKind::input, std::move(where), what) {}
};
// Output that cannot be written.
struct OutputError : Error {
  OutputError(std::string where, const std::string& what) : Error(ErrorKind::output, std::move(where), what) {}
};
// GPU missing, failing or out of memory.
struct DeviceError : Error {
  DeviceError(std::string where, const std::string& what) : Error(ErrorKind::device, std::move(where), what) {}
};
// A device allocation failed: the work may fit in smaller pieces.
struct DeviceMemoryError : DeviceError {
  using DeviceError::DeviceError;
};

// Runs `work`; a DeviceError escaping it also names frames [first, first + count)
// in its `where` ("cuda:0, frames 1200:1456"), so a failure mid-run says which
// frames were on the device.
template <typename Work>
void on_frames(std::int64_t first, std::int64_t count, Work&& work) {
  try {
    work();
  } catch (const DeviceError& e) {
    if (e.where().find(", frames ") != std::string::npos) throw;
    throw DeviceError(e.where() + ", frames " + std::to_string(first) + ":" + std::to_string(first + count), e.what());
  }
}

}  // namespace nanoscopy
