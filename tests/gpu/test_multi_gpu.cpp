// --device cuda:all on the paths that share work between GPUs (fit2d's
// localize pipeline, sofi), run here on one machine's first GPU listed twice:
// two engines on the same GPU, each with its own streams and buffers, go
// through every line the engines of two GPUs go through. With two GPUs or more
// the real cuda:all runs as well. fit2d's output must be byte-identical to
// cuda:0's; sofi's images equal cuda:0's to the rounding of the order the block
// values are added in, and bit for bit the same parts run one by one and merged
// as sofi merge merges them. The engines that run on one GPU say so once.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/device.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/loc/pipeline.hpp"
#include "nanoscopy/sim/movie.hpp"
#include "nanoscopy/sofi/merge.hpp"
#include "nanoscopy/sofi/runner.hpp"
#include "nanoscopy/sofi/split_run.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
namespace fs = std::filesystem;

namespace {

Device one_gpu() { return select_device(DeviceRequest::parse("cuda"), true); }

// The first GPU twice: what cuda:all does, on one card.
Device first_gpu_twice() {
  Device d = one_gpu();
  d.gpus = {d.gpus.front(), d.gpus.front()};
  return d;
}

// The devices that share work: the first GPU twice, and cuda:all where there are several.
std::vector<Device> shared_devices() {
  std::vector<Device> out{first_gpu_twice()};
  if (list_gpus().size() > 1) out.push_back(select_device(DeviceRequest::parse("cuda:all"), true));
  return out;
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("nanoscopy-multi-gpu-" + std::to_string(std::rand()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string localize_csv(const fs::path& stack, const Device& device, const fs::path& csv) {
  auto reader = open_stack(stack.string());
  PipelineSettings settings;
  settings.chunk_frames = 16;
  settings.quiet = true;
  const auto engines = make_localize_engines(device, LocalizeSettings{settings.detect, settings.fit, {}});
  std::vector<LocalizeEngine*> localizers;
  for (const auto& e : engines) localizers.push_back(e.get());
  CHECK(localizers.size() == device.gpus.size());
  auto writer = create_localization_writer(csv.string(), "", writer_context(reader->info(), settings.camera));
  run_localization(*reader, FrameRange::Resolved{0, reader->info().frames}, localizers, settings,
                   [&](std::span<const Localization> locs) { writer->append(locs); });
  writer->finish();
  return nanoscopy::test::read_file(csv);
}

}  // namespace

TEST_CASE("fit2d pipeline on the first GPU twice (and cuda:all): byte-identical output to one GPU") {
  const TempDir dir;
  MovieSettings m;
  m.frames = 200;  // 13 chunks of 16
  m.width = 96;
  m.height = 80;
  m.emitters = 120;
  m.on_fraction = 0.3;
  m.seed = 3;
  const fs::path stack = dir.path / "movie.tif";
  simulate_movie(m, stack.string());
  const std::string reference = localize_csv(stack, one_gpu(), dir.path / "one.csv");
  REQUIRE(reference.size() > 10000);  // localizations were found
  for (const Device& d : shared_devices()) {
    CAPTURE(device_label(d));
    CHECK(localize_csv(stack, d, dir.path / "shared.csv") == reference);
  }
}

TEST_CASE("sofi on the first GPU twice (and cuda:all): cuda:0's images, and the parts merged bit for bit") {
  const std::int64_t w = 64, h = 48, frames = 2100, block = 500;  // 4 blocks, the last of 600
  const TempDir dir;
  MovieSettings m;
  m.frames = frames;
  m.width = w;
  m.height = h;
  m.emitters = 60;
  m.on_fraction = 0.3;
  m.seed = 9;
  const fs::path stack = dir.path / "movie.tif";
  simulate_movie(m, stack.string());
  SofiProblemOptions o;
  o.orders = {2, 3, 4};
  const SofiProblem problem = make_sofi_problem(w, h, o);
  auto input = [&](StackReader& r, std::int64_t begin, std::int64_t end) {
    SofiRunInput in;
    in.reader = &r;
    in.sequence = {0, 1, frames};
    in.begin = begin;
    in.end = end;
    in.block = block;
    in.quiet = true;
    return in;
  };
  auto reader = open_stack(stack.string());
  auto one_engine = make_sofi_engine(one_gpu(), problem, 256 + problem.max_lag);
  const SofiImages one = finish_images(problem, run_sofi(problem, *one_engine, input(*reader, 0, frames)).finished);

  for (const Device& d : shared_devices()) {
    CAPTURE(device_label(d));
    const auto engines = make_sofi_engines(d, problem, 256 + problem.max_lag);
    REQUIRE(engines.size() == d.gpus.size());
    std::vector<std::unique_ptr<StackReader>> readers;
    std::vector<SofiEngine*> parts;
    std::vector<SofiRunInput> inputs;
    for (const auto& e : engines) {
      readers.push_back(open_stack(stack.string()));
      parts.push_back(e.get());
      inputs.push_back(input(*readers.back(), 0, frames));
    }
    const SofiImages split = finish_images(problem, run_sofi_split(problem, parts, inputs).finished);
    CHECK(split.blocks == one.blocks);
    double worst = 0;
    for (std::size_t p = 0; p < one.planes.size(); ++p)
      for (std::size_t i = 0; i < one.planes[p].size(); ++i) {
        const double a = split.planes[p][i], b = one.planes[p][i];
        worst = std::max(worst, std::abs(a - b) / std::max(std::abs(b), 1e-30));
      }
    MESSAGE("sofi on " << device_label(d) << " against one GPU: max relative difference " << worst);
    CHECK(worst < 1e-6);

    // The same parts on one engine, one after the other, merged as sofi merge merges part files.
    const auto points = sofi_split_points(SofiBlocks{frames, block}, 0, frames, static_cast<int>(engines.size()));
    SofiAccumulation merged;
    merged.finished.reset(problem);
    for (std::size_t g = 0; g + 1 < points.size(); ++g) {
      auto engine = make_sofi_engine(one_gpu(), problem, 256 + problem.max_lag);
      merge_accumulation(merged, run_sofi(problem, *engine, input(*reader, points[g], points[g + 1])), "part");
    }
    close_open_blocks(problem, SofiBlocks{frames, block}, merged, "merge", 1);
    const SofiImages parts_merged = finish_images(problem, merged.finished);
    CHECK(split.planes == parts_merged.planes);
  }
}

TEST_CASE("an engine that runs on one GPU says so once when several are asked for") {
  std::ostringstream captured;
  std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
  (void)make_deconvolve_engine(first_gpu_twice());
  (void)make_deconvolve_engine(first_gpu_twice());
  (void)make_deconvolve_engine(one_gpu());
  std::cerr.rdbuf(old);
  const std::string text = captured.str();
  const int gpu = one_gpu().gpus.front();
  CHECK(text == "note: the balanced-SOFI deconvolution runs on one GPU (cuda:" + std::to_string(gpu) +
                    ") of the 2 that cuda:all asks for\n");
}
