#include "nanoscopy/bench/bench_io.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "nanoscopy/bench/bench_common.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/stack_reader.hpp"

namespace nanoscopy {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void run_io_bench(const IoBenchOptions& o, std::int64_t repeats, std::ostream& out) {
  namespace fs = std::filesystem;
  if (o.pages < 1 || o.size < 1) throw UsageError("bench io", "--pages and --size must be positive");
  const fs::path dir = bench_scratch_dir(o.dir);
  const fs::path path = dir / ("nanoscopy-bench-io-" + std::to_string(::getpid()) + ".tif");
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code ec;
      fs::remove(p, ec);
    }
  } cleanup{path};

  ImageMeta meta;
  meta.width = meta.height = o.size;
  meta.frames = o.pages;
  meta.type = PixelType::u16;
  std::vector<std::uint16_t> frame(static_cast<std::size_t>(o.size * o.size));
  const auto t_write = std::chrono::steady_clock::now();
  {
    auto writer = create_image_writer(path.string(), meta);
    for (std::int64_t i = 0; i < o.pages; ++i) {
      frame[0] = static_cast<std::uint16_t>(i);
      writer->write(frame.data(), 1);
    }
    writer->close();
  }
  const double write_s = seconds_since(t_write);

  std::vector<double> open_s, read_s;
  for (std::int64_t r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    auto reader = open_stack(path.string());
    open_s.push_back(seconds_since(t0));
    if (reader->info().frames != o.pages) throw InputError(path.string(), "bench io: wrong page count after indexing");
    const auto t1 = std::chrono::steady_clock::now();
    const std::int64_t chunk = 4096;
    std::vector<std::uint16_t> buffer(static_cast<std::size_t>(chunk * o.size * o.size));
    for (std::int64_t f = 0; f < o.pages; f += chunk) {
      const std::int64_t n = std::min(chunk, o.pages - f);
      reader->read_raw(f, n, buffer.data());
      if (buffer[0] != static_cast<std::uint16_t>(f)) throw InputError(path.string(), "bench io: read back wrong data");
    }
    read_s.push_back(seconds_since(t1));
  }
  const double mb = static_cast<double>(o.pages * o.size * o.size * 2) / 1e6;
  out << "| pages | frame | write s | index (open) s | read s | read MB/s | frames/s |\n"
      << "|---|---|---|---|---|---|---|\n"
      << "| " << o.pages << " | " << o.size << "x" << o.size << " | " << write_s << " | " << median(open_s) << " | "
      << median(read_s) << " | " << mb / median(read_s) << " | " << static_cast<double>(o.pages) / median(read_s) << " |\n";
  if (!o.json.empty()) {
    nlohmann::json j = {{"pages", o.pages},          {"frame_edge", o.size},     {"write_s", write_s},
                        {"index_s", median(open_s)}, {"read_s", median(read_s)}, {"repeats", repeats}};
    write_file_atomically(o.json, j.dump(2) + "\n");
  }
}

}  // namespace nanoscopy
