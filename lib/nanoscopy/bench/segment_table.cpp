#include "nanoscopy/bench/segment_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/loc/undrift/rcc.hpp"
#include "nanoscopy/loc/undrift/segment_choice.hpp"
#include "nanoscopy/sim/loc_sim.hpp"

namespace nanoscopy {
namespace {

constexpr double kPixelNm = 130;
constexpr std::int64_t kField = 128;
constexpr int kEmitters = 1000;

struct Scenario {
  std::string name;
  std::int64_t frames = 0;
  double per_frame = 0;  // localizations
  bool curved = false;
};

// The imposed drift, px per frame (the header's two shapes).
DriftTrace scenario_drift(const Scenario& s) {
  DriftTrace d;
  const double a = 30.0 * M_PI / 180.0;
  for (std::int64_t f = 0; f < s.frames; ++f) {
    const auto t = static_cast<double>(f);
    double x = 0, y = 0;
    if (s.curved) {
      x = 250.0 * (1.0 - std::exp(-t / 1500.0));
      y = 40.0 * std::sin(2.0 * M_PI * t / 4000.0) + 0.02 * t;
    } else {
      x = 0.1 * t * std::cos(a);
      y = 0.1 * t * std::sin(a);
    }
    d.dx.push_back(x / kPixelNm);
    d.dy.push_back(y / kPixelNm);
  }
  d.markers.assign(d.dx.size(), 0);
  return d;
}

// RMS per axis of estimate − truth after removing each axis' mean difference, nm.
double drift_error_nm(const DriftTrace& e, const DriftTrace& t) {
  const auto rms = [](const std::vector<double>& a, const std::vector<double>& b) {
    double mean = 0, s = 0;
    for (std::size_t i = 0; i < b.size(); ++i) mean += a[i] - b[i];
    mean /= static_cast<double>(b.size());
    for (std::size_t i = 0; i < b.size(); ++i) s += (a[i] - b[i] - mean) * (a[i] - b[i] - mean);
    return s / static_cast<double>(b.size());
  };
  return std::sqrt(0.5 * (rms(e.dx, t.dx) + rms(e.dy, t.dy))) * kPixelNm;
}

// RCC's error with `segment` frames; NaN where RCC refuses or finds no two segments that correlate.
double rcc_error(const std::vector<Localization>& locs, const DriftTrace& truth, std::int64_t segment) {
  RccSettings rs;
  rs.segment_frames = segment;
  rs.max_drift_px = 3000.0 / kPixelNm;
  rs.camera_px_nm = kPixelNm;
  try {
    return drift_error_nm(undrift_rcc(locs, static_cast<std::int64_t>(truth.dx.size()), rs, "simulated").trace, truth);
  } catch (const Error&) {
    return NAN;
  }
}

}  // namespace

SegmentTableResult run_segment_table(bool quick, std::uint64_t seed, bool quiet, std::ostream& out) {
  std::vector<Scenario> scenarios;
  for (const std::int64_t frames : {std::int64_t{3000}, std::int64_t{20000}}) {
    if (quick && frames > 3000) continue;
    for (const double per_frame : {5.0, 50.0})
      for (const bool curved : {false, true})
        scenarios.push_back({std::string(frames > 3000 ? "long" : "short") + (per_frame > 10 ? " dense" : " sparse") +
                                 (curved ? " curved" : " linear"),
                             frames, per_frame, curved});
  }
  const std::vector<std::int64_t> fixed{100, 200, 500, 1000, 2000};
  SegmentTableResult result;
  out << "\n| RCC segment: drift error (nm) | frames | loc./frame | auto (segment) |";
  for (std::int64_t f : fixed) out << " " << f << " |";
  out << " best fixed | auto ok |\n|---|---:|---:|---:|";
  for (std::size_t k = 0; k < fixed.size(); ++k) out << "---:|";
  out << "---:|---|\n";
  for (const Scenario& sc : scenarios) {
    if (!quiet) std::cerr << "bench postprocess: segment table, " << sc.name << "\n";
    LocSimSettings sim;
    sim.frames = sc.frames;
    sim.width = sim.height = kField;
    sim.pixel_size_nm = kPixelNm;
    sim.emitters = kEmitters;
    sim.on_fraction = sc.per_frame / kEmitters;
    sim.seed = seed;
    SimulatedLocalizations s = simulate_localizations(sim);
    const DriftTrace truth = scenario_drift(sc);
    for (Localization& l : s.locs) {
      l.x += truth.dx[static_cast<std::size_t>(l.frame)];
      l.y += truth.dy[static_cast<std::size_t>(l.frame)];
    }
    const RccSegmentChoice choice = choose_rcc_segment(sc.frames, static_cast<std::int64_t>(s.locs.size()));
    const double auto_nm = rcc_error(s.locs, truth, choice.segment_frames);
    double best = INFINITY;
    std::int64_t best_segment = 0;
    char cell[96];
    std::snprintf(cell, sizeof cell, "| %s | %lld | %.1f | %.2f (%lld) |", sc.name.c_str(),
                  static_cast<long long>(sc.frames), static_cast<double>(s.locs.size()) / static_cast<double>(sc.frames),
                  auto_nm, static_cast<long long>(choice.segment_frames));
    out << cell;
    nlohmann::json errors = nlohmann::json::object();
    for (std::int64_t f : fixed) {
      // The segmentations of 2 to kAutoMaxSegments segments (the correlations' cost auto accepts); a
      // refusal or no two segments that correlate: "-".
      const auto n = (2 * sc.frames + f) / (2 * f);  // rcc_segments' round(frames / segment)
      const double e = n >= 2 && n <= kAutoMaxSegments ? rcc_error(s.locs, truth, f) : NAN;
      if (std::isfinite(e) && e < best) {
        best = e;
        best_segment = f;
      }
      if (std::isfinite(e))
        std::snprintf(cell, sizeof cell, " %.2f |", e);
      else
        std::snprintf(cell, sizeof cell, " - |");
      out << cell;
      errors[std::to_string(f)] = std::isfinite(e) ? nlohmann::json(e) : nlohmann::json(nullptr);
    }
    const double limit = std::max(1.2 * best, best + 0.3);
    const bool ok = std::isfinite(auto_nm) && auto_nm <= limit;
    result.passed = result.passed && ok;
    std::snprintf(cell, sizeof cell, " %.2f (%lld) | %s |\n", best, static_cast<long long>(best_segment),
                  ok ? "pass" : "FAIL");
    out << cell << std::flush;
    result.rows.push_back({{"scenario", sc.name},
                           {"frames", sc.frames},
                           {"localizations", s.locs.size()},
                           {"curved", sc.curved},
                           {"auto_segment", choice.segment_frames},
                           {"auto_nm", std::isfinite(auto_nm) ? nlohmann::json(auto_nm) : nlohmann::json(nullptr)},
                           {"fixed_nm", errors},
                           {"best_fixed_segment", best_segment},
                           {"best_fixed_nm", best},
                           {"limit_nm", limit},
                           {"pass", ok}});
  }
  out << "auto passes where its error is at most max(1.2 x best fixed, best fixed + 0.3 nm)\n";
  return result;
}

}  // namespace nanoscopy
