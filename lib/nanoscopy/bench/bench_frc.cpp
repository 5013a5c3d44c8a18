#include "nanoscopy/bench/bench_frc.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/frc/frc.hpp"
#include "nanoscopy/bench/bench_common.hpp"

namespace nanoscopy {

using json = nlohmann::json;

void add_frc_bench_options(CLI::App& cmd, FrcBenchOptions& o) {
  cmd.add_option("--sizes", o.sizes, "image edges (square images)")
      ->delimiter(',')
      ->default_str("256,512,1024,2048,4096");
  cmd.add_option("--devices", o.devices, "devices (cpu, cuda:N); default: cpu and every GPU")->delimiter(',');
  cmd.add_option("--json", o.json, "also write the results as JSON")->type_name("FILE");
}

namespace {

// Box blur of radius r along rows then columns (in place), twice: a smooth structure.
void blur(std::vector<float>& v, std::int64_t n, int r) {
  std::vector<float> line(static_cast<std::size_t>(n));
  for (int pass = 0; pass < 4; ++pass) {
    const bool rows = pass % 2 == 0;
    for (std::int64_t j = 0; j < n; ++j) {
      const auto at = [&](std::int64_t i) -> float& {
        return v[static_cast<std::size_t>(rows ? j * n + i : i * n + j)];
      };
      double sum = 0;
      for (std::int64_t i = -r; i <= r; ++i) sum += at(std::clamp<std::int64_t>(i, 0, n - 1));
      for (std::int64_t i = 0; i < n; ++i) {
        line[static_cast<std::size_t>(i)] = static_cast<float>(sum / (2 * r + 1));
        sum += at(std::min(i + r + 1, n - 1)) - at(std::max<std::int64_t>(i - r, 0));
      }
      for (std::int64_t i = 0; i < n; ++i) at(i) = line[static_cast<std::size_t>(i)];
    }
  }
}

struct Pair {
  std::vector<float> a, b;
};

Pair test_pair(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 100.0f);
  std::normal_distribution<float> noise(0.0f, 2.0f);
  std::vector<float> s(static_cast<std::size_t>(n * n));
  for (float& x : s) x = u(rng);
  blur(s, n, 2);
  Pair p{s, s};
  for (float& x : p.a) x += noise(rng);
  for (float& x : p.b) x += noise(rng);
  return p;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

void run_frc_bench(const FrcBenchOptions& o, std::uint64_t seed, int repeats, bool quiet, std::ostream& out) {
  const auto devices = bench_devices(o.devices);
  for (int s : o.sizes)
    if (s < 2 || s > 32768)
      throw UsageError("--sizes", "image edges must lie in [2, 32768] (got " + std::to_string(s) + ")");
  json rows = json::array();
  char line[256];
  std::snprintf(line, sizeof line, "%-8s %-34s %12s %14s %12s %14s\n", "edge", "device", "median ms", "Mpixel/s",
                "resolution", "max |dFRC|");
  out << "bench frc: window + FFT + ring sums of an image pair, median of " << repeats << "\n" << line;
  for (int edge : o.sizes) {
    const Pair pair = test_pair(edge, seed + static_cast<std::uint64_t>(edge));
    FrcGeometry g;
    g.width = g.height = edge;
    std::vector<double> cpu_curve;
    for (const BenchDevice& dev : devices) {
      if (!quiet) std::cerr << "bench frc: " << edge << "^2 on " << dev.label << "\n";
      auto backend = make_frc_engine(dev.device, g);
      FrcResult result = compute_frc(*backend, pair.a, pair.b, FrcThreshold{});  // warm-up (and the curve)
      std::vector<double> times;
      for (int r = 0; r < repeats; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        static_cast<void>(backend->ring_sums(pair.a, pair.b));
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      std::vector<double> curve;
      for (const FrcPoint& p : result.curve) curve.push_back(p.frc);
      double max_diff = 0;
      bool compared = false;
      if (dev.device.kind == DeviceKind::cpu) {
        cpu_curve = curve;
      } else if (cpu_curve.size() == curve.size()) {
        compared = true;
        for (std::size_t i = 0; i < curve.size(); ++i)
          max_diff = std::max(max_diff, std::isfinite(curve[i]) ? std::abs(curve[i] - cpu_curve[i]) : INFINITY);
      }
      const double t = median(times);
      const double rate = static_cast<double>(edge) * edge / t / 1e6;
      char diff[32] = "-";
      if (compared) std::snprintf(diff, sizeof diff, "%.2e", max_diff);
      std::snprintf(line, sizeof line, "%-8d %-34s %12.3f %14.1f %9.2f px %14s\n", edge, backend->name().c_str(),
                    t * 1e3, rate, result.crossing.resolution_px, diff);
      out << line << std::flush;
      json row{{"edge", edge},
               {"device", dev.label},
               {"backend", backend->name()},
               {"median_s", t},
               {"times_s", times},
               {"mpixel_per_s", rate},
               {"resolution_px", result.crossing.resolution_px}};
      row["max_abs_diff_vs_cpu"] = compared ? json(max_diff) : json(nullptr);
      rows.push_back(row);
    }
  }
  if (!o.json.empty()) {
    json j = bench_document("frc");
    j["seed"] = seed;
    j["repeats"] = repeats;
    j["rows"] = rows;
    write_file_atomically(o.json, j.dump(2) + "\n");
    out << "wrote " << o.json << "\n";
  }
}

}  // namespace nanoscopy
