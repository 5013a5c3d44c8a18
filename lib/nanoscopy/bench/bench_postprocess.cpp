#include "nanoscopy/bench/bench_postprocess.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <unordered_map>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/bench/bench_common.hpp"
#include "nanoscopy/bench/link_table.hpp"
#include "nanoscopy/bench/segment_table.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/fit2d/link_cmd.hpp"
#include "nanoscopy/fit2d/settings.hpp"
#include "nanoscopy/fit2d/undrift_cmd.hpp"
#include "nanoscopy/loc/link.hpp"
#include "nanoscopy/loc/render.hpp"
#include "nanoscopy/loc/track/drift.hpp"
#include "nanoscopy/loc/undrift/fiducial.hpp"
#include "nanoscopy/loc/undrift/rcc.hpp"
#include "nanoscopy/params/tool_schemas.hpp"
#include "nanoscopy/sim/loc_sim.hpp"

namespace nanoscopy {

using json = nlohmann::json;

void add_postprocess_bench_options(CLI::App& cmd, PostprocessBenchOptions& o) {
  cmd.add_flag("--quick", o.quick, "a short run: 4,000 frames, 10^5 localizations, render 10^5 and 10^6");
  cmd.add_option("--frames", o.frames, "frames of the simulated recording")->default_val(o.frames)
      ->check(CLI::Range(std::int64_t{100}, std::int64_t{100000000}));
  cmd.add_option("--localizations", o.localizations, "localizations to simulate (about), e.g. 1e6")
      ->default_str("1e6")->check(CLI::Range(1e3, 1e8));
  cmd.add_option("--emitters", o.emitters, "blinking emitters (their duty cycle gives --localizations)")
      ->default_val(o.emitters)->check(CLI::Range(10, 10000000));
  cmd.add_option("--structure", o.structure, "emitter positions: random, lines or rings")->default_val(o.structure)
      ->check(CLI::IsMember({"random", "lines", "rings"}));
  cmd.add_option("--drift-linear", o.drift_linear_nm, "imposed steady drift, nm per 1000 frames")
      ->default_val(o.drift_linear_nm);
  cmd.add_option("--drift-walk", o.drift_walk_nm, "imposed random-walk drift, nm per sqrt(frame) on each axis")
      ->default_val(o.drift_walk_nm)->check(CLI::NonNegativeNumber);
  cmd.add_option("--precision", o.precision_nm, "median localization precision, nm")->default_val(o.precision_nm)
      ->check(CLI::PositiveNumber);
  cmd.add_option("--markers", o.markers, "fiducial markers (on in every frame), for fiducial and combined")
      ->default_val(o.markers)->check(CLI::Range(0, 1000));
  cmd.add_option("--marker-precision", o.marker_precision_nm, "the markers' precision per frame, nm")
      ->default_val(o.marker_precision_nm)->check(CLI::PositiveNumber);
  cmd.add_option("--segment", o.segment, "RCC segment, frames, or auto (fit2d's default)")->default_val(o.segment);
  cmd.add_flag("--no-tables", o.no_tables, "leave out the auto segment's and the link candidates' tables");
  cmd.add_option("--render-sizes", o.render_sizes, "localizations to render, e.g. 1e6,1e7,1e8")
      ->delimiter(',')->default_str("1e6,1e7,1e8");
  cmd.add_option("--devices", o.devices, "render and RCC devices (cpu, cuda:N); default: cpu and every GPU")->delimiter(',');
  cmd.add_option("--json", o.json, "also write the results as JSON")->type_name("FILE");
}

namespace {

constexpr double kPixelNm = 130;   // camera pixel of the simulated recording
constexpr std::int64_t kField = 256;  // px a side: 33 µm
constexpr std::int64_t kRenderChunk = 10000000;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// RMS per axis of estimate − truth after removing each axis' mean difference, px.
struct DriftError {
  double x = 0, y = 0;
  double both() const { return std::sqrt(0.5 * (x * x + y * y)); }
};
DriftError drift_error(const DriftTrace& estimate, const DriftTrace& truth) {
  const auto rms = [](const std::vector<double>& e, const std::vector<double>& t) {
    double mean = 0;
    for (std::size_t i = 0; i < t.size(); ++i) mean += e[i] - t[i];
    mean /= static_cast<double>(t.size());
    double s = 0;
    for (std::size_t i = 0; i < t.size(); ++i) s += (e[i] - t[i] - mean) * (e[i] - t[i] - mean);
    return std::sqrt(s / static_cast<double>(t.size()));
  };
  return {rms(estimate.dx, truth.dx), rms(estimate.dy, truth.dy)};
}

// The render hook: seconds to render `locs` on `device` with the backend registry's render engine (the one
// fit2d render --device uses; made before the clock starts): the accumulation and reading the picture back.
std::optional<double> render_engine_time(const BenchDevice& dev, std::span<const Localization> locs,
                                         const RenderSettings& settings, double& checksum, std::string&) {
  Renderer renderer(settings, make_render_engine(dev.device, render_geometry(settings)));
  const auto t0 = std::chrono::steady_clock::now();
  renderer.add(locs);
  const RenderedImage image = renderer.finish();
  const double t = seconds_since(t0);
  double sum = 0;
  for (float v : image.pixels) sum += v;
  checksum += sum;
  return t;
}

// `count` localizations uniformly over the field with the simulation's precisions (lognormal around it).
std::vector<Localization> random_localizations(std::int64_t count, double precision_nm, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, static_cast<double>(kField) - 1.0);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<Localization> locs(static_cast<std::size_t>(count));
  for (Localization& l : locs) {
    l.x = u(rng);
    l.y = u(rng);
    l.lpx = l.lpy = precision_nm / kPixelNm * std::exp(0.3 * g(rng));
  }
  return locs;
}

}  // namespace

void run_postprocess_bench(PostprocessBenchOptions o, std::uint64_t seed, bool quiet, std::ostream& out) {
  if (o.quick) {
    o.frames = std::min<std::int64_t>(o.frames, 4000);
    o.localizations = std::min(o.localizations, 1e5);
    o.emitters = std::min(o.emitters, 1000);
    o.render_sizes = {1e5, 1e6};
  }
  for (double n : o.render_sizes)
    if (!(n >= 1 && n <= 1e9)) throw UsageError("--render-sizes", "sizes must lie in [1, 1e9]");
  const auto devices = bench_devices(o.devices);
  // fit2d's own defaults for every step (its schema), with the segment asked for.
  Params p = fit2d_schema().defaults();
  p.set("Undrift/segment", o.segment, ParamSource{"--segment", 0});
  UndriftStepSettings undrift = undrift_step_settings(p);

  LocSimSettings sim;
  sim.frames = o.frames;
  sim.width = sim.height = kField;
  sim.pixel_size_nm = kPixelNm;
  sim.structure.structure = o.structure;
  sim.emitters = o.emitters;
  // The markers' localizations count towards --localizations (they are in the file RCC reads).
  const double frames = static_cast<double>(o.frames);
  sim.on_fraction = (o.localizations - o.markers * frames) / (static_cast<double>(o.emitters) * frames);
  if (!(sim.on_fraction > 0))
    throw UsageError("--localizations", "fewer than the markers alone give (--markers x --frames)");
  if (!(sim.on_fraction < 0.5))
    throw UsageError("--localizations", "too many for --emitters over --frames (each emitter on more than half "
                                        "of the frames): give more --emitters");
  sim.precision_nm = o.precision_nm;
  sim.markers = o.markers;
  sim.marker_precision_nm = o.marker_precision_nm;
  sim.drift.linear_nm = o.drift_linear_nm;
  sim.drift.walk_nm = o.drift_walk_nm;
  sim.seed = seed;
  if (!quiet) std::cerr << "bench postprocess: simulating " << o.localizations << " localizations\n";
  const SimulatedLocalizations s = simulate_localizations(sim);
  const auto n_locs = static_cast<std::int64_t>(s.locs.size());
  std::string segment_why;
  undrift = resolve_undrift_segment(undrift, o.frames, n_locs, segment_why);

  char line[320];
  out << "bench postprocess: " << n_locs << " localizations (" << s.blinks << " blinks of " << o.emitters << " "
      << o.structure << " emitters, precision " << o.precision_nm << " nm; " << o.markers << " markers at "
      << o.marker_precision_nm << " nm) in " << o.frames << " frames of " << kField << "x" << kField << " px of "
      << kPixelNm << " nm; imposed drift " << o.drift_linear_nm << " nm/1000 frames + walk " << o.drift_walk_nm
      << " nm/sqrt(frame)\n";
  if (!segment_why.empty()) out << "RCC " << segment_why << "\n";
  out << "\n";

  // Drift.
  json drift_rows = json::array();
  out << "| method | RMS error x (nm) | RMS error y (nm) | RMS per axis (nm) | per axis (px) | time (s) |\n"
      << "|---|---:|---:|---:|---:|---:|\n";
  const auto drift_row = [&](const std::string& method, const DriftTrace& trace, double t) {
    const DriftError e = drift_error(trace, s.drift);
    std::snprintf(line, sizeof line, "| %s | %.2f | %.2f | %.2f | %.4f | %.2f |\n", method.c_str(), e.x * kPixelNm,
                  e.y * kPixelNm, e.both() * kPixelNm, e.both(), t);
    out << line << std::flush;
    drift_rows.push_back({{"method", method},
                          {"rms_x_nm", e.x * kPixelNm},
                          {"rms_y_nm", e.y * kPixelNm},
                          {"rms_per_axis_nm", e.both() * kPixelNm},
                          {"rms_per_axis_px", e.both()},
                          {"seconds", t}});
  };
  // The correlations on the CPU with every thread, as fit2d undrift --device cpu runs them; then on each GPU
  // of --devices (the cuFFT engine, as fit2d undrift --device cuda), whose drift must match the CPU's.
  const Device cpu = select_device(DeviceRequest::parse("cpu"), true);
  auto t0 = std::chrono::steady_clock::now();
  const RccResult rcc = undrift_rcc(s.locs, o.frames, rcc_step_settings(undrift, kPixelNm, quiet), "simulated",
                                    [&](const CorrelationGeometry& g) { return make_correlation_engine(cpu, g); });
  const double t_rcc = seconds_since(t0);
  drift_row("none (the imposed drift itself)", DriftTrace{std::vector<double>(s.drift.dx.size(), 0.0),
                                                         std::vector<double>(s.drift.dy.size(), 0.0), {}},
            0.0);
  drift_row("rcc (" + std::to_string(rcc.segments.size()) + " segments of " + std::to_string(undrift.segment) + ")",
            rcc.trace, t_rcc);
  for (const BenchDevice& dev : devices) {
    if (dev.device.kind == DeviceKind::cpu) continue;
    t0 = std::chrono::steady_clock::now();
    const RccResult on_gpu = undrift_rcc(s.locs, o.frames, rcc_step_settings(undrift, kPixelNm, quiet), "simulated",
                                         [&](const CorrelationGeometry& g) { return make_correlation_engine(dev.device, g); });
    drift_row("rcc on " + dev.label, on_gpu.trace, seconds_since(t0));
  }
  if (o.markers > 0) {
    t0 = std::chrono::steady_clock::now();
    const FiducialDrift f = fiducial_drift(s.locs, o.frames, fit2d_track_settings(p), undrift.smooth, "simulated");
    const double t_fiducial = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    const DriftTrace combined = combine_drift(rcc.trace, f.raw, undrift.smooth);
    const double t_combine = seconds_since(t0);
    drift_row("markers raw (fit2d --track, " + std::to_string(f.summary.markers) + " markers)", f.raw, t_fiducial);
    drift_row("fiducial (smoothed over " + std::to_string(undrift.smooth) + " frames)", f.smooth, t_fiducial);
    drift_row("combined", combined, t_rcc + t_fiducial + t_combine);
  }

  // Link, on the RCC-undrifted localizations as fit2d --undrift --link does.
  std::vector<Localization> undrifted = s.locs;
  apply_drift(undrifted, rcc.trace);
  const LinkSettings link = link_step_settings(p, kPixelNm);
  std::vector<std::int64_t> group_of;
  t0 = std::chrono::steady_clock::now();
  const auto linked = link_localizations(undrifted, link, &group_of);
  const double t_link = seconds_since(t0);
  // Recall: the blinks kept whole (1 − split rate); over-merging: the merge rate (link_table.hpp).
  const LinkRates score = score_link_groups(s.blink, group_of);
  out << "\n| link (radius " << p.get_string("Link/radius") << ", max dark " << link.max_dark
      << ") | localizations | groups | true blinks | recall | over-merged groups | time (s) |\n"
      << "|---|---:|---:|---:|---:|---:|---:|\n";
  std::snprintf(line, sizeof line, "| cpu | %lld | %lld | %lld | %.4f | %.4f | %.2f |\n",
                static_cast<long long>(n_locs), static_cast<long long>(linked.size()),
                static_cast<long long>(score.blinks), 1 - score.split_rate(), score.merge_rate(), t_link);
  out << line;
  json link_row{{"localizations", n_locs},
                {"groups", linked.size()},
                {"blinks", score.blinks},
                {"recall", 1 - score.split_rate()},
                {"over_merging", score.merge_rate()},
                {"split_rate", score.split_rate()},
                {"merge_rate", score.merge_rate()},
                {"seconds", t_link},
                {"radius", p.get_string("Link/radius")},
                {"max_dark", link.max_dark}};
  SegmentTableResult segment_table;
  LinkTableResult link_table;
  if (!o.no_tables) {
    segment_table = run_segment_table(o.quick, seed, quiet, out);
    link_table = run_link_table(o.quick, seed, p.get_string("Link/radius"), link.max_dark, quiet, out);
  }

  // Render.
  json render_rows = json::array();
  out << "\n| render | localizations | device | time (s) | localizations/s | picture |\n"
      << "|---|---:|---|---:|---:|---|\n";
  RenderSettings rs;
  rs.camera_px_nm = kPixelNm;
  rs.pixel_nm = p.get_real("Render/pixel");
  rs.field_width_px = rs.field_height_px = kField;
  for (double size : o.render_sizes) {
    const auto count = static_cast<std::int64_t>(std::llround(size));
    for (RenderMode mode : {RenderMode::gaussian, RenderMode::histogram}) {
      rs.mode = mode;
      const char* mode_name = mode == RenderMode::gaussian ? "gaussian" : "histogram";
      for (const BenchDevice& dev : devices) {
        if (!quiet) std::cerr << "bench postprocess: render " << count << " (" << mode_name << ") on " << dev.label << "\n";
        std::mt19937_64 rng(seed + static_cast<std::uint64_t>(count));
        double total = 0, checksum = 0;
        std::string why;
        bool timed = true;
        for (std::int64_t done = 0; done < count && timed; done += kRenderChunk) {
          const auto chunk = random_localizations(std::min(kRenderChunk, count - done), o.precision_nm, rng);
          const auto t = render_engine_time(dev, chunk, rs, checksum, why);
          timed = t.has_value();
          total += t.value_or(0.0);
        }
        const auto w = static_cast<long long>(std::ceil(static_cast<double>(kField) * kPixelNm / rs.pixel_nm));
        if (timed)
          std::snprintf(line, sizeof line, "| %s | %lld | %s | %.3f | %.3g | %lldx%lld px of %g nm |\n", mode_name,
                        static_cast<long long>(count), dev.label.c_str(), total, static_cast<double>(count) / total,
                        w, w, rs.pixel_nm);
        else
          std::snprintf(line, sizeof line, "| %s | %lld | %s | - | - | %s |\n", mode_name,
                        static_cast<long long>(count), dev.label.c_str(), why.c_str());
        out << line << std::flush;
        json row{{"mode", mode_name}, {"localizations", count}, {"device", dev.label}};
        row["seconds"] = timed ? json(total) : json(nullptr);
        if (!timed) row["note"] = why;
        render_rows.push_back(row);
      }
    }
  }
  if (!o.json.empty()) {
    json j = bench_document("postprocess");
    j.update({{"seed", seed},
              {"simulation",
               {{"frames", o.frames},
                {"localizations", n_locs},
                {"blinks", s.blinks},
                {"emitters", o.emitters},
                {"structure", o.structure},
                {"field_px", kField},
                {"pixel_size_nm", kPixelNm},
                {"precision_nm", o.precision_nm},
                {"markers", o.markers},
                {"marker_precision_nm", o.marker_precision_nm},
                {"drift_linear_nm_per_1000_frames", o.drift_linear_nm},
                {"drift_walk_nm_per_sqrt_frame", o.drift_walk_nm}}},
              {"drift", drift_rows},
              {"link", link_row},
              {"segment_table", segment_table.rows},
              {"link_table", link_table.rows},
              {"render", render_rows}});
    write_file_atomically(o.json, j.dump(2) + "\n");
    out << "wrote " << o.json << "\n";
  }
  // The checks, after every table is printed and written: a failure is the run's exit status.
  if (!segment_table.passed)
    throw Error(ErrorKind::other, "bench postprocess",
                "the auto RCC segment's drift error is above max(1.2 x best fixed, best fixed + 0.3 nm) in a "
                "scenario (the segment table's FAIL rows)");
}

}  // namespace nanoscopy
