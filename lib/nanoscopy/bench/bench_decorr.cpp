#include "nanoscopy/bench/bench_decorr.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/bench/bench_common.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/frc/decorr.hpp"
#include "nanoscopy/frc/frc.hpp"

namespace nanoscopy {

using json = nlohmann::json;

std::vector<float> decorr_blurred_points(std::int64_t w, std::int64_t h, double sigma, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> v(static_cast<std::size_t>(w * h), 0.0f), t(v.size(), 0.0f);
  std::uniform_int_distribution<std::int64_t> at(0, w * h - 1);
  for (std::int64_t i = 0; i < w * h / 20; ++i) v[static_cast<std::size_t>(at(rng))] += 100.0f;
  const int r = static_cast<int>(std::ceil(4 * sigma));
  std::vector<float> k(static_cast<std::size_t>(2 * r + 1));
  float ks = 0;
  for (int i = -r; i <= r; ++i)
    ks += k[static_cast<std::size_t>(i + r)] = static_cast<float>(std::exp(-0.5 * i * i / (sigma * sigma)));
  for (float& x : k) x /= ks;
  const auto wrap = [](std::int64_t i, std::int64_t n) { return ((i % n) + n) % n; };
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x) {
      float s = 0;
      for (int i = -r; i <= r; ++i)
        s += k[static_cast<std::size_t>(i + r)] * v[static_cast<std::size_t>(y * w + wrap(x + i, w))];
      t[static_cast<std::size_t>(y * w + x)] = s;
    }
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x) {
      float s = 0;
      for (int i = -r; i <= r; ++i)
        s += k[static_cast<std::size_t>(i + r)] * t[static_cast<std::size_t>(wrap(y + i, h) * w + x)];
      v[static_cast<std::size_t>(y * w + x)] = 10.0f + s;
    }
  return v;
}

std::vector<float> decorr_with_noise(std::vector<float> v, double sd, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g(0.0f, static_cast<float>(sd));
  for (float& x : v) x += g(rng);
  return v;
}

void add_decorr_bench_options(CLI::App& cmd, DecorrBenchOptions& o) {
  cmd.add_option("--sizes", o.sizes, "image edges (square images, at least 32)")
      ->delimiter(',')
      ->default_str("256,512,1024,2048");
  cmd.add_option("--devices", o.devices, "devices (cpu, cuda:N); default: cpu and every GPU")->delimiter(',');
  cmd.add_option("--json", o.json, "also write the results as JSON")->type_name("FILE");
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

template <typename F>
std::vector<double> timed(int repeats, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return t;
}

}  // namespace

void run_decorr_bench(const DecorrBenchOptions& o, std::uint64_t seed, int repeats, bool quiet, std::ostream& out) {
  const auto devices = bench_devices(o.devices);
  for (int s : o.sizes)
    if (s < kMinDecorrSide || s > 16384)
      throw UsageError("--sizes", "image edges must lie in [32, 16384] (got " + std::to_string(s) + ")");
  json rows = json::array();
  char line[320];
  std::snprintf(line, sizeof line, "%-6s %-30s %11s %11s %11s %9s %9s %9s %9s %10s\n", "edge", "device", "total ms",
                "resident", "transform", "kcMax", "decorr", "FRC 1/7", "ratio", "dkc vs cpu");
  out << "bench decorr: one analysis (Nr 50, Ng 10) of blurred points (sigma 1.5 px) + noise (sd 2), median of "
      << repeats
      << ";\n  total: upload + apodize + FFT + 3 passes + host; resident: the image already on the device;"
         " transform: apodize + FFT alone; decorr and FRC (the pair) in px\n"
      << line;
  for (int edge : o.sizes) {
    const auto truth = decorr_blurred_points(edge, edge, 1.5, seed + static_cast<std::uint64_t>(edge));
    const auto a = decorr_with_noise(truth, 2.0, seed + 1), b = decorr_with_noise(truth, 2.0, seed + 2);
    FrcGeometry fg;
    fg.width = fg.height = edge;
    const FrcResult frc = compute_frc(a, b, fg, FrcThreshold{});
    const double frc_px = frc.crossing.status == FrcCrossing::Status::crossed ? frc.crossing.resolution_px : NAN;
    DecorrGeometry g;
    g.width = g.height = edge;
    double cpu_kc = NAN;
    for (const BenchDevice& dev : devices) {
      if (!quiet) std::cerr << "bench decorr: " << edge << "^2 on " << dev.label << "\n";
      auto engine = make_decorr_engine(dev.device, g);
      const DecorrSettings settings;
      DecorrResult result = compute_decorr(*engine, a, settings);  // warm-up (and the result)
      const auto total = timed(repeats, [&] { result = compute_decorr(*engine, a, settings); });
      const auto resident = timed(repeats, [&] { static_cast<void>(analyse_uploaded(*engine, settings)); });
      const auto transform = timed(repeats, [&] {
        engine->transform();
        engine->synchronize();
      });
      const bool is_cpu = dev.device.kind == DeviceKind::cpu;
      if (is_cpu) cpu_kc = result.kc_max;
      const double dkc = is_cpu ? NAN : result.kc_max - cpu_kc;
      const double px = result.resolution_px(), ratio = px / frc_px;
      char dk[32] = "-";
      if (std::isfinite(dkc)) std::snprintf(dk, sizeof dk, "%+.4f", dkc);
      std::snprintf(line, sizeof line, "%-6d %-30s %11.3f %11.3f %11.3f %9.4f %9.3f %9.3f %9.3f %10s\n", edge,
                    engine->name().c_str(), median(total) * 1e3, median(resident) * 1e3, median(transform) * 1e3,
                    result.kc_max, px, frc_px, ratio, dk);
      out << line << std::flush;
      json row{{"edge", edge},
               {"device", dev.label},
               {"backend", engine->name()},
               {"total_median_s", median(total)},
               {"resident_median_s", median(resident)},
               {"transform_median_s", median(transform)},
               {"total_s", total},
               {"kc_max", result.kc_max},
               {"a0", result.a0},
               {"decorr_resolution_px", px}};
      row["frc_resolution_px"] = std::isfinite(frc_px) ? json(frc_px) : json(nullptr);
      row["decorr_over_frc"] = std::isfinite(ratio) ? json(ratio) : json(nullptr);
      row["kc_max_minus_cpu"] = std::isfinite(dkc) ? json(dkc) : json(nullptr);
      rows.push_back(row);
    }
  }
  if (!o.json.empty()) {
    json j = bench_document("decorr");
    j["seed"] = seed;
    j["repeats"] = repeats;
    j["rows"] = rows;
    write_file_atomically(o.json, j.dump(2) + "\n");
    out << "wrote " << o.json << "\n";
  }
}

}  // namespace nanoscopy
