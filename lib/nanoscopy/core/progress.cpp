#include "nanoscopy/core/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace nanoscopy {
namespace {
bool g_quiet = false;
}

void set_quiet(bool q) { g_quiet = q; }
bool quiet() { return g_quiet; }

Progress::Progress(std::string label, std::int64_t total, bool quiet)
    : label_(std::move(label)),
      total_(std::max<std::int64_t>(total, 1)),
      quiet_(quiet),
      tty_(::isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() {
  if (!finished_ && tty_ && !quiet_ && last_decile_ >= 0) std::fputc('\n', stderr);
}

void Progress::update(std::int64_t done) {
  if (quiet_ || finished_) return;
  const auto now = std::chrono::steady_clock::now();
  const int decile = static_cast<int>(std::min<std::int64_t>(10, done * 10 / total_));
  if (tty_) {
    // Redraw at most 10 times a second.
    if (now - last_draw_ < std::chrono::milliseconds(100) && done < total_) return;
    last_draw_ = now;
    last_decile_ = decile;
    draw(done, false);
  } else if (decile > std::max(last_decile_, 0)) {  // 10 %, 20 %, ...: not the 0 % decile
    last_decile_ = decile;
    draw(done, false);
  }
}

void Progress::finish() {
  if (quiet_ || finished_) return;
  if (tty_ || last_decile_ < 10) draw(total_, true);
  finished_ = true;
}

void Progress::draw(std::int64_t done, bool final) {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double fraction = std::clamp(static_cast<double>(done) / static_cast<double>(total_), 0.0, 1.0);
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0.0;
  if (tty_) {
    constexpr int width = 30;
    const int filled = static_cast<int>(fraction * width);
    std::fprintf(stderr, "\r%s [%.*s%*s] %3.0f%% %lld/%lld  %.3g/s  %.1f s%s", label_.c_str(), filled,
                 "##############################", width - filled, "", fraction * 100.0,
                 static_cast<long long>(done), static_cast<long long>(total_), rate, seconds, final ? "\n" : "");
  } else {
    std::fprintf(stderr, "%s: %3.0f%% (%lld/%lld, %.3g/s, %.1f s)\n", label_.c_str(), fraction * 100.0,
                 static_cast<long long>(done), static_cast<long long>(total_), rate, seconds);
  }
  std::fflush(stderr);
}

}  // namespace nanoscopy
