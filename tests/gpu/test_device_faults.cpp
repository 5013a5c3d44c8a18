// The GPU failure paths on a real device: a chunk larger than the free device
// memory is localized in pieces (not failed) with the same results; a device
// error mid-run (injected with NANOSCOPY_INJECT_DEVICE_FAULT) ends fit2d and
// sofi with one line naming the frames, exit code 5 and no output; --device auto
// with no usable GPU says so once and runs on the CPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/device.hpp"
#include "nanoscopy/config.hpp"
#include "nanoscopy/loc/localize_engine.hpp"
#include "nanoscopy/sim/movie.hpp"
#include "support/test_support.hpp"

#if NANOSCOPY_HAVE_CUDA
#include <cuda_runtime.h>
#endif

using namespace nanoscopy;
using namespace nanoscopy::test;
namespace fs = std::filesystem;

namespace {

struct Found {
  std::vector<Candidate> candidates;
  std::vector<RoiOrigin> origins;
  std::vector<FitResult> fits;
};

#if NANOSCOPY_HAVE_CUDA
// Holds all but `leave` bytes of the GPU's free memory while it lives.
class MemoryHog {
 public:
  explicit MemoryHog(std::size_t leave) {
    std::size_t free = 0, total = 0;
    REQUIRE(cudaMemGetInfo(&free, &total) == cudaSuccess);
    REQUIRE(free > leave);
    REQUIRE(cudaMalloc(&ptr_, free - leave) == cudaSuccess);
  }
  ~MemoryHog() { cudaFree(ptr_); }

 private:
  void* ptr_ = nullptr;
};

#endif

std::string q(const fs::path& p) { return shell_quote(p.string()); }

}  // namespace

#if NANOSCOPY_HAVE_CUDA
TEST_CASE("a chunk larger than the free device memory is localized in pieces, with the same results") {
  MovieSettings m;
  m.frames = 6000;
  m.width = 256;
  m.height = 256;
  m.emitters = 40;
  m.on_fraction = 0.2;
  m.seed = 4;
  const std::vector<std::uint16_t> movie = simulated_movie_u16(m);  // 786 MB
  const ChunkPixels chunk{movie.data(), PixelType::u16, 0, m.frames, static_cast<int>(m.width),
                          static_cast<int>(m.height)};
  const Device gpu = select_device(DeviceRequest::parse("cuda"), true);
  Found whole;
  {
    auto localizer = make_localize_engine(gpu, LocalizeSettings{});
    localizer->localize(chunk, whole.candidates, whole.origins, whole.fits);
  }
  REQUIRE(whole.candidates.size() > 1000);
  // 1 GB, 512 MB and 256 MB left beside the 786 MB chunk (its float copies on the
  // device need twice that): the chunk must be localized in pieces, with the
  // results of the whole.
  for (const std::size_t leave_mb : {std::size_t{1024}, std::size_t{512}, std::size_t{256}}) {
    CAPTURE(leave_mb);
    Found pieces;
    auto localizer = make_localize_engine(gpu, LocalizeSettings{});
    {
      const MemoryHog hog(leave_mb << 20);
      localizer->localize(chunk, pieces.candidates, pieces.origins, pieces.fits);
    }
    REQUIRE(pieces.candidates.size() == whole.candidates.size());
    std::size_t agree = 0;
    for (std::size_t k = 0; k < whole.candidates.size(); ++k) {
      CHECK(pieces.candidates[k].frame == whole.candidates[k].frame);
      CHECK(pieces.origins[k].x0 == whole.origins[k].x0);
      CHECK(pieces.origins[k].y0 == whole.origins[k].y0);
      const FitResult &a = whole.fits[k], &b = pieces.fits[k];
      // Each piece's fits run with the lanes per fit of its own size, so their float sums add in another order:
      // the stated float tolerance (tests/support/fit_compare.hpp), not the bits. The same outcome (the same
      // status, or both converged: min_delta and min_step trade places under float rounding) and, for
      // converged fits, the same position to 1e-3 px.
      const bool both = converged(a.status) && converged(b.status);
      const bool near = std::abs(a.x - b.x) <= 1e-3 && std::abs(a.y - b.y) <= 1e-3;
      if (both ? near : a.status == b.status) ++agree;
    }
    CHECK(static_cast<double>(agree) >= 0.995 * static_cast<double>(whole.candidates.size()));
    MESSAGE(leave_mb << " MB free: " << whole.candidates.size() << " candidates, " << agree << " fits agree");
  }
}
#endif

TEST_CASE("a device error mid-run names the frames, exits 5 and leaves no output; auto falls back to the CPU once") {
  TempDir dir;
  const fs::path stack = dir / "m.tif";
  auto r = run_command(shell_quote(app_path("bench")) + " simulate movie -o " + q(stack) + " --frames 1200 --width 64 --height 64");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const std::string fault = "NANOSCOPY_INJECT_DEVICE_FAULT=700 ";
  r = run_command(fault + shell_quote(app_path("fit2d")) + " " + q(stack) + " --quiet --device cuda:0 -o " +
                  q(dir / "locs.csv"));
  check_one_line_error(r, "fit2d", 5, "frames 512:768", "injected device fault at frame 700");
  CHECK_FALSE(fs::exists(dir / "locs.csv"));
  r = run_command(fault + shell_quote(app_path("sofi")) + " " + q(stack) + " --quiet --device cuda:0 --block 400 -o " +
                  q(dir / "s.tif"));
  check_one_line_error(r, "sofi", 5, "frames ", "injected device fault at frame 700");
  CHECK_FALSE(fs::exists(dir / "s.tif"));
  for (const auto& entry : fs::directory_iterator(dir.path()))  // no temporary files left either
    CHECK(entry.path().filename().string().find(".part-") == std::string::npos);

  // No usable GPU: auto says so once and runs on the CPU; cuda is refused.
  r = run_command("CUDA_VISIBLE_DEVICES= " + shell_quote(app_path("sofi")) + " " + q(stack) + " --device auto --orders 2 -o " +
                  q(dir / "cpu.tif"));
  CHECK_MESSAGE(r.exit_code == 0, r.output);
  CHECK(contains(r.output, ", cpu ("));  // the engine it ran on
  std::size_t notes = 0;
  for (std::size_t at = r.output.find("note: the GPU cannot be used"); at != std::string::npos;
       at = r.output.find("note: the GPU cannot be used", at + 1))
    ++notes;
  CHECK_MESSAGE(notes == 1, r.output);
  CHECK(fs::exists(dir / "cpu.tif"));
  r = run_command("CUDA_VISIBLE_DEVICES= " + shell_quote(app_path("sofi")) + " " + q(stack) + " --device cuda --quiet -o " +
                  q(dir / "gpu.tif"));
  check_one_line_error(r, "sofi", 5, "--device cuda", "no usable GPU");
}
