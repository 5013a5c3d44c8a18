#include "nanoscopy/bench/bench_render.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/bench/bench_common.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/loc/render.hpp"

namespace nanoscopy {
namespace {

using json = nlohmann::json;

constexpr double kCameraPixelNm = 100;
constexpr std::size_t kPool = std::size_t{1} << 22;
constexpr std::size_t kFeed = std::size_t{1} << 20;  // localizations per Renderer::add, as fit2d render's chunks

std::vector<Localization> simulate(std::size_t count, double field_px, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> position(0.0, field_px), precision(0.05, 0.15), depth(-400.0, 400.0);
  std::vector<Localization> locs(count);
  for (Localization& l : locs) {
    l.x = position(rng) - 0.5;  // pixel centres at integers: the field is [−0.5, field − 0.5)
    l.y = position(rng) - 0.5;
    l.lpx = l.lpy = precision(rng);
    l.z = depth(rng);
    l.photons = 1000;
  }
  return locs;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

RenderTiming time_render(const Device& device, const RenderBenchCase& c, std::uint64_t seed, int repeats) {
  if (c.localizations < 1) throw UsageError("--locs", "at least one localization");
  if (!(c.field_um > 0) || !(c.pixel_nm > 0)) throw UsageError("--field", "the field and the pixel must be > 0");
  RenderSettings s;
  s.camera_px_nm = kCameraPixelNm;
  s.pixel_nm = c.pixel_nm;
  s.mode = c.mode;
  s.color_z = c.color_z;
  const double field_px = c.field_um * 1000.0 / kCameraPixelNm;
  s.field_width_px = s.field_height_px = static_cast<std::int64_t>(std::ceil(field_px));
  const RenderGeometry g = render_geometry(s);
  const std::vector<Localization> pool =
      simulate(std::min<std::size_t>(kPool, static_cast<std::size_t>(c.localizations)), field_px, seed);
  RenderTiming t;
  t.width = g.width;
  t.height = g.height;
  for (int r = 0; r < std::max(repeats, 1); ++r) {
    Renderer renderer(s, make_render_engine(device, g));
    t.engine = renderer.engine().name();
    const auto t0 = std::chrono::steady_clock::now();
    std::int64_t left = c.localizations;
    std::size_t at = 0;
    while (left > 0) {
      const std::size_t n = std::min({kFeed, pool.size() - at, static_cast<std::size_t>(left)});
      renderer.add(std::span(pool).subspan(at, n));
      left -= static_cast<std::int64_t>(n);
      at = (at + n) % pool.size();
    }
    const RenderedImage image = renderer.finish();
    t.seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    t.rendered = image.rendered;
    t.integral = std::accumulate(image.pixels.begin(), image.pixels.end(), 0.0);
  }
  t.median_seconds = median(t.seconds);
  return t;
}

void add_render_bench_options(CLI::App& cmd, RenderBenchOptions& o) {
  cmd.add_option("--locs", o.locs, "localization counts (1e6,1e7,1e8)")->delimiter(',')->default_str("1e6,1e7");
  cmd.add_option("--devices", o.devices, "devices (cpu, cuda:N); default: cpu and every GPU")->delimiter(',');
  cmd.add_option("--mode", o.mode, "gaussian or histogram")
      ->default_val(o.mode)
      ->check(CLI::IsMember({"gaussian", "histogram"}));
  cmd.add_option("--color", o.color, "none or z (also the z sums)")->default_val(o.color)->check(CLI::IsMember({"none", "z"}));
  cmd.add_option("--pixel", o.pixel_nm, "rendered pixel, nm")->default_val(o.pixel_nm)->check(CLI::PositiveNumber);
  cmd.add_option("--field", o.field_um, "side of the square field, µm")->default_val(o.field_um)->check(CLI::PositiveNumber);
  cmd.add_option("--json", o.json, "also write the results as JSON")->type_name("FILE");
}

void run_render_bench(const RenderBenchOptions& o, std::uint64_t seed, int repeats, bool quiet, std::ostream& out) {
  const auto devices = bench_devices(o.devices);
  json rows = json::array();
  char line[256];
  std::snprintf(line, sizeof line, "%-12s %-34s %12s %14s %14s\n", "locs", "device", "median s", "Mlocs/s", "integral");
  out << "bench render: " << o.mode << (o.color == "z" ? " + z sums" : "") << ", " << o.field_um << " um field at "
      << o.pixel_nm << " nm, median of " << repeats << "\n"
      << line;
  for (double count : o.locs) {
    if (!(count >= 1 && count <= 1e12)) throw UsageError("--locs", "counts from 1 to 1e12");
    RenderBenchCase c;
    c.localizations = static_cast<std::int64_t>(count);
    c.mode = o.mode == "histogram" ? RenderMode::histogram : RenderMode::gaussian;
    c.color_z = o.color == "z";
    c.pixel_nm = o.pixel_nm;
    c.field_um = o.field_um;
    for (const BenchDevice& dev : devices) {
      if (!quiet) std::cerr << "bench render: " << c.localizations << " on " << dev.label << "\n";
      const RenderTiming t = time_render(dev.device, c, seed, repeats);
      std::snprintf(line, sizeof line, "%-12lld %-34s %12.3f %14.1f %14.6g\n", static_cast<long long>(c.localizations),
                    t.engine.c_str(), t.median_seconds, static_cast<double>(c.localizations) / t.median_seconds / 1e6,
                    t.integral);
      out << line << std::flush;
      rows.push_back({{"localizations", c.localizations},
                      {"device", dev.label},
                      {"engine", t.engine},
                      {"width", t.width},
                      {"height", t.height},
                      {"median_s", t.median_seconds},
                      {"times_s", t.seconds},
                      {"integral", t.integral}});
    }
  }
  if (!o.json.empty()) {
    json j = bench_document("render");
    j.update({{"seed", seed},
              {"repeats", repeats},
              {"mode", o.mode},
              {"color", o.color},
              {"pixel_nm", o.pixel_nm},
              {"field_um", o.field_um},
              {"rows", rows}});
    write_file_atomically(o.json, j.dump(2) + "\n");
    out << "wrote " << o.json << "\n";
  }
}

}  // namespace nanoscopy
