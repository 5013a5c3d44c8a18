// Frame ranges, atomic output (also across an interrupt), device requests, progress.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/device.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/frame_range.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
namespace fs = std::filesystem;

TEST_CASE("frame ranges follow Python slice rules") {
  auto r = [](const std::string& text, std::int64_t n) { return FrameRange::parse(text).resolve(n, "stack.tif"); };
  CHECK(r("0:10", 100).first == 0);
  CHECK(r("0:10", 100).last == 10);
  CHECK(r(":", 100).count() == 100);
  CHECK(r("5:", 100).first == 5);
  CHECK(r(":-1", 100).last == 99);
  CHECK(r("-10:", 100).first == 90);
  CHECK(r("-10:-5", 100).count() == 5);
  CHECK(r("7", 100).first == 7);
  CHECK(r("7", 100).last == 8);
  CHECK(r("-1", 100).first == 99);
  CHECK(r("-1", 100).last == 100);
  CHECK(r("0:100", 100).count() == 100);
}

TEST_CASE("frame ranges outside the stack name the file and the valid range") {
  const auto bad = [](const std::string& text, std::int64_t n) {
    try {
      (void)FrameRange::parse(text).resolve(n, "stack.tif");
    } catch (const InputError& e) {
      return e.message();
    }
    return std::string("no error");
  };
  CHECK(bad("0:101", 100).find("stack.tif: frame range 0:101 is outside the stack of 100 frames") == 0);
  CHECK(bad("100:", 100).find("outside") != std::string::npos);
  CHECK(bad("5:5", 100).find("outside") != std::string::npos);
  CHECK(bad("-101:", 100).find("outside") != std::string::npos);
  CHECK_THROWS_AS(FrameRange::parse("a:b"), UsageError);
  CHECK_THROWS_AS(FrameRange::parse("1:2:3"), UsageError);
  CHECK_THROWS_AS(FrameRange::parse(""), UsageError);
}

TEST_CASE("atomic output appears only on commit") {
  test::TempDir dir;
  const auto target = dir / "out.txt";
  {
    AtomicOutput out(target);
    std::ofstream(out.temp_path()) << "partial";
    CHECK(fs::exists(out.temp_path()));
    CHECK(out.temp_path().parent_path() == target.parent_path());
  }
  CHECK_FALSE(fs::exists(target));
  CHECK(fs::is_empty(dir.path()));
  {
    AtomicOutput out(target);
    std::ofstream(out.temp_path()) << "complete";
    out.commit();
  }
  CHECK(test::read_file(target) == "complete");
  // A failed rewrite keeps the complete previous output.
  {
    AtomicOutput out(target);
    std::ofstream(out.temp_path()) << "half";
  }
  CHECK(test::read_file(target) == "complete");
  write_file_atomically(dir / "b.txt", "abc");
  CHECK(test::read_file(dir / "b.txt") == "abc");
}

TEST_CASE("an output group: its files appear together on commit, or none of them") {
  test::TempDir dir;
  auto finish = [](const fs::path& target, const std::string& text) {
    AtomicOutput out(target);
    std::ofstream(out.temp_path()) << text;
    out.commit();
  };
  write_file_atomically(dir / "a.txt", "previous a");
  {  // the second output fails: the first, already finished, is removed; the previous a.txt stays
    OutputGroup group;
    finish(dir / "a.txt", "new a");
    CHECK(test::read_file(dir / "a.txt") == "previous a");  // finished, not yet renamed
    CHECK_THROWS_AS(finish(dir / "sub" / "b.txt", "b"), OutputError);
  }
  CHECK(test::read_file(dir / "a.txt") == "previous a");
  CHECK_FALSE(fs::exists(dir / "b.txt"));
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) entries += (e.path().filename() == "a.txt") ? 1 : 100;
  CHECK(entries == 1);  // no temporary file left
  {
    OutputGroup group;
    finish(dir / "a.txt", "new a");
    {
      OutputGroup inner;  // joins the open group: its commit renames nothing yet
      finish(dir / "b.txt", "b");
      inner.commit();
    }
    CHECK_FALSE(fs::exists(dir / "b.txt"));
    group.commit();
  }
  CHECK(test::read_file(dir / "a.txt") == "new a");
  CHECK(test::read_file(dir / "b.txt") == "b");
  finish(dir / "c.txt", "c");  // no group open: renamed at once
  CHECK(test::read_file(dir / "c.txt") == "c");
}

TEST_CASE("atomic output refuses a missing or unwritable directory") {
  test::TempDir dir;
  CHECK_THROWS_AS(AtomicOutput(dir / "missing" / "out.tif"), OutputError);
  try {
    AtomicOutput out(dir / "missing" / "out.tif");
  } catch (const OutputError& e) {
    CHECK(e.message().find("out.tif") != std::string::npos);
    CHECK(e.message().find("does not exist") != std::string::npos);
  }
  CHECK_THROWS_AS(AtomicOutput(dir.path()), OutputError);  // a directory as the output name
  if (::geteuid() != 0) {  // root may write anywhere
    fs::create_directory(dir / "ro");
    fs::permissions(dir / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    CHECK_THROWS_AS(AtomicOutput(dir / "ro" / "x.tif"), OutputError);
  }
}

TEST_CASE("an interrupt removes the temporary output and leaves no final file") {
  test::TempDir dir;
  const auto target = dir / "interrupted.tif";
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    install_interrupt_cleanup("test_core");
    AtomicOutput out(target);
    std::ofstream(out.temp_path()) << "half written";
    std::raise(SIGINT);
    ::_exit(0);  // not reached
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 128 + SIGINT);
  CHECK_FALSE(fs::exists(target));
  CHECK(fs::is_empty(dir.path()));  // the temporary file is gone too
}

TEST_CASE("device requests parse and CUDA without a GPU is an error, never a CPU run") {
  CHECK(DeviceRequest::parse("auto").mode == DeviceRequest::Mode::automatic);
  CHECK(DeviceRequest::parse("cpu").mode == DeviceRequest::Mode::cpu);
  CHECK(DeviceRequest::parse("cuda:3").gpu == 3);
  CHECK(DeviceRequest::parse("cuda:all").all);
  CHECK_THROWS_AS(DeviceRequest::parse("gpu:x"), UsageError);
  CHECK_THROWS_AS(DeviceRequest::parse("cuda:-1"), UsageError);
  CHECK(select_device(DeviceRequest::parse("cpu"), true).kind == DeviceKind::cpu);
  if (list_gpus().empty()) {
    CHECK_THROWS_AS(select_device(DeviceRequest::parse("cuda"), true), DeviceError);
    CHECK(select_device(DeviceRequest::parse("auto"), true).kind == DeviceKind::cpu);
  }
}
