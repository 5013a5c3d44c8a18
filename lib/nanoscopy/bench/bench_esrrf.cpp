#include "nanoscopy/bench/bench_esrrf.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <limits>

#include <nlohmann/json.hpp>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/bench/bench_common.hpp"
#include "nanoscopy/bench/sofi_truth.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/image_png.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/sim/blinking.hpp"
#include "nanoscopy/sofi/balanced.hpp"
#include "nanoscopy/sofi/esrrf.hpp"
#include "nanoscopy/sofi/esrrf_cli.hpp"
#include "nanoscopy/sofi/runner.hpp"

namespace nanoscopy {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;
using esrrf_math::Temporal;

double since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

double pearson(const std::vector<float>& a, const std::vector<float>& b) {
  const double n = static_cast<double>(a.size());
  double ma = 0, mb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) ma += a[i], mb += b[i];
  ma /= n, mb /= n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double da = a[i] - ma, db = b[i] - mb;
    sab += da * db, saa += da * da, sbb += db * db;
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0.0;
}

// An image of n x n camera pixels on the m-times finer grid: Catmull-Rom at each fine cell's centre
// ((i + 1/2) / m in coordinates where camera pixel k spans [k, k + 1)), the grid the truth is rendered on.
std::vector<float> upsample(const std::vector<float>& image, std::int64_t n, int m) {
  if (m == 1) return image;
  const std::int64_t nm = n * m;
  std::vector<float> out(static_cast<std::size_t>(nm * nm));
  for (std::int64_t y = 0; y < nm; ++y)
    for (std::int64_t x = 0; x < nm; ++x)
      out[static_cast<std::size_t>(y * nm + x)] = esrrf_math::cr_interpolate(
          image.data(), n, n, (static_cast<float>(y) + 0.5f) / static_cast<float>(m),
          (static_cast<float>(x) + 0.5f) / static_cast<float>(m));
  return out;
}

// Pearson r of `image` shifted by (dx, dy) fine pixels against `truth` over the square [b, nm - b)^2.
double pearson_region(const std::vector<float>& image, const std::vector<float>& truth, std::int64_t nm, std::int64_t b,
                      int dx, int dy) {
  std::vector<float> a, t;
  for (std::int64_t y = b; y < nm - b; ++y)
    for (std::int64_t x = b; x < nm - b; ++x) {
      const std::int64_t xs = x + dx, ys = y + dy;
      if (xs < 0 || ys < 0 || xs >= nm || ys >= nm) continue;
      a.push_back(image[static_cast<std::size_t>(ys * nm + xs)]);
      t.push_back(truth[static_cast<std::size_t>(y * nm + x)]);
    }
  return pearson(a, t);
}

// Whole-range eSRRF on a device: the image and the seconds end to end (engine, reading, finishing).
std::vector<float> esrrf_image(const std::string& path, const Device& device, const EsrrfSettings& s,
                               std::int64_t frames, double* seconds) {
  const auto t = clock_type::now();
  auto reader = open_stack(path);
  const auto& info = reader->info();
  const std::vector<EsrrfSlot> tps{{0, frames, 1}};
  const std::int64_t chunk = 64;
  auto engine = make_esrrf_engine(device, {info.width, info.height, esrrf_slots_needed(tps, chunk)}, s, chunk);
  EsrrfRunInput in;
  in.reader = reader.get();
  in.chunk_frames = chunk;
  in.time_points = tps;
  in.quiet = true;
  std::vector<float> image;
  run_esrrf(*engine, s, in, [&](EsrrfTimePoint& tp) { image = std::move(tp.image); });
  if (seconds) *seconds = since(t);
  return image;
}

SofiImages sofi_images(const std::string& path, const Device& device, const SofiProblem& problem, std::int64_t frames) {
  auto reader = open_stack(path);
  auto engine = make_sofi_engine(device, problem, 256 + problem.max_lag);
  SofiRunInput in;
  in.reader = reader.get();
  in.sequence = FrameSequence{0, 1, frames};
  in.end = frames;
  in.block = std::min<std::int64_t>(500, frames);
  in.quiet = true;
  return finish_images(problem, run_sofi(problem, *engine, in).finished);
}

void save(const EsrrfBenchOptions& o, const std::string& name, std::int64_t w, std::int64_t h,
          const std::vector<float>& pixels, double pixel_nm) {
  if (o.images.empty()) return;
  fs::create_directories(o.images);
  const float* page = pixels.data();
  write_float_pages((fs::path(o.images) / (name + ".tif")).string(), w, h, {&page, 1}, pixel_nm);
  write_gray_png((fs::path(o.images) / (name + ".png")).string(), w, h, pixels);
}

json quality(const EsrrfBenchOptions& o, const BenchDevice& dev, const fs::path& dir, const std::string& structure,
             std::uint64_t seed, bool quiet, std::ostream& out) {
  BlinkingSettings s;
  s.frames = o.frames;
  s.width = s.height = o.size;
  s.emitters = o.emitters;
  s.psf_sigma = o.psf_sigma;
  s.pixel_size_nm = o.pixel_size;
  s.structure = structure;
  s.ring_radius_min_nm = o.ring_radius_min_nm;
  s.ring_radius_max_nm = o.ring_radius_max_nm;
  s.seed = seed;
  const std::string stack = (dir / ("bench_esrrf_" + structure + ".tif")).string();
  const auto sim = simulate_blinking(s, stack, quiet);
  const std::int64_t n = o.size;
  const int m = o.magnification;
  // The sample on each grid: every emitter by its brightness, PSF sigma / 2 (sofi_truth.hpp, order 4, linear).
  const auto truth1 = sofi_truth_image(sim.emitter_list, n, n, 1, o.psf_sigma, 4, TruthWeight::linear);
  const auto truth_m = sofi_truth_image(sim.emitter_list, n * m, n * m, m, o.psf_sigma, 4, TruthWeight::linear);
  save(o, structure + "_truth", n * m, n * m, truth_m, o.pixel_size / m);
  out << "\neSRRF quality, " << structure;
  if (structure == "rings") out << " (radius " << o.ring_radius_min_nm << "-" << o.ring_radius_max_nm << " nm)";
  out << ": " << o.frames << " frames of " << n << "x" << n << ", "
      << sim.emitters << " emitters (power-law blinking, mean on-fraction " << std::setprecision(3)
      << sim.mean_on_fraction << "), PSF sigma " << o.psf_sigma << " px, on " << dev.label
      << "\n  Pearson r against the sample (emitters by brightness, PSF sigma/2) on the " << m
      << "x grid (camera-grid images by Catmull-Rom), inside eSRRF's border of floor(radius M) px;\n"
      << "  next to it r against each kind's own ideal (its weighting of the emitters, its resolution):\n";
  json rows = json::array();
  // Every image on the truth's M-times finer grid (the camera-grid images by Catmull-Rom at the fine cells' centres),
  // compared over the interior eSRRF defines (its border of floor(radius M) fine pixels is 0 by definition).
  const std::int64_t nm = n * m;
  const std::int64_t border = static_cast<std::int64_t>(std::floor(EsrrfSettings{}.radius * m));
  // Each kind's own ideal on the fine grid (sofi_truth.hpp's cumulant weights): the mean and eSRRF-AVG (the mean
  // intensity times the RGC) are linear in brightness x on-fraction (order 1), SOFI2 and eSRRF-VAR/TAC2 (second
  // moments of the intensity-weighted RGC) weigh an emitter by brightness^2 x rho (1 - rho) (order 2); the mean and
  // SOFI2 with their own PSF (sigma, sigma/sqrt 2), eSRRF with the sample's sigma/2. Not the target's score: it
  // tells a method's resolution from its nonlinear weighting of emitters that blink differently.
  const double s2 = o.psf_sigma / 2;
  const auto ideal_mean = sofi_truth_image(sim.emitter_list, nm, nm, m, o.psf_sigma, 1);
  const auto ideal_sofi2 = sofi_truth_image(sim.emitter_list, nm, nm, m, o.psf_sigma, 2);
  const auto ideal_esrrf1 = sofi_truth_image(sim.emitter_list, nm, nm, m, s2, 1);
  const auto ideal_esrrf2 = sofi_truth_image(sim.emitter_list, nm, nm, m, s2 * std::sqrt(2.0), 2);
  auto report = [&](const std::string& method, const std::vector<float>& image, const std::vector<float>& truth,
                    int grid, double seconds, const std::vector<float>& ideal) {
    const double r_own = pearson(image, truth);
    const std::vector<float> fine = upsample(image, n, m / grid);
    const double r = pearson_region(fine, truth_m, nm, border, 0, 0);
    const double r_ideal = pearson_region(fine, ideal, nm, border, 0, 0);
    double r_best = r;
    int bx = 0, by = 0;
    for (int dy = -m; dy <= m; ++dy)
      for (int dx = -m; dx <= m; ++dx) {
        const double v = pearson_region(fine, truth_m, nm, border, dx, dy);
        if (v > r_best) r_best = v, bx = dx, by = dy;
      }
    out << "  " << std::left << std::setw(16) << method << std::right << " r = " << std::fixed << std::setprecision(3)
        << r << "  own ideal " << r_ideal << "  (best shift (" << bx << "," << by << ") fine px: " << r_best
        << "; whole " << grid << "x grid, zero border included: " << r_own << "; " << std::setprecision(2) << seconds
        << " s)\n"
        << std::defaultfloat;
    rows.push_back({{"method", method}, {"pearson_r", r}, {"pearson_r_ideal", r_ideal}, {"pearson_r_whole_own_grid", r_own}, {"grid", grid},
                    {"best_shift", {bx, by}}, {"pearson_r_best_shift", r_best}, {"seconds", seconds}});
    save(o, structure + "_" + method, n * grid, n * grid, image, o.pixel_size / grid);
    return r;
  };
  auto t = clock_type::now();
  const SofiProblem p4 = [&] {
    SofiProblemOptions po;
    po.orders = {2, 3, 4};
    return make_sofi_problem(n, n, po);
  }();
  const SofiImages c4 = sofi_images(stack, dev.device, p4, o.frames);
  const double sofi_seconds = since(t);
  const double r_mean = report("mean", c4.mean, truth1, 1, sofi_seconds, ideal_mean);
  report("SOFI2", c4.planes[0], truth1, 1, sofi_seconds, ideal_sofi2);
  t = clock_type::now();
  BalancedSettings bs;
  bs.psf_sigma = o.psf_sigma;
  const auto bal = balance_sofi(p4, c4, bs, richardson_lucy_deconvolver(o.psf_sigma, kBalancedRlIterations,
                                                                        make_deconvolve_engine(dev.device)));
  report("balanced", bal.balanced, truth1, 1, sofi_seconds + since(t), truth_m);
  EsrrfSettings es;
  es.magnification = m;
  double best_esrrf = -1;
  for (const Temporal kind : {Temporal::avg, Temporal::var, Temporal::tac2}) {
    es.temporal = kind;
    double seconds = 0;
    const auto image = esrrf_image(stack, dev.device, es, o.frames, &seconds);
    const char* name = kind == Temporal::avg ? "eSRRF-AVG" : kind == Temporal::var ? "eSRRF-VAR" : "eSRRF-TAC2";
    best_esrrf = std::max(best_esrrf, report(name, image, truth_m, m, seconds, kind == Temporal::avg ? ideal_esrrf1 : ideal_esrrf2));
  }
  // Pearson r is at most 1: no image can beat the mean by more than 1 - r(mean).
  out << "  eSRRF (best of AVG/VAR/TAC2) - mean: " << std::fixed << std::setprecision(3) << best_esrrf - r_mean
      << " (target >= 0.1; room above the mean, 1 - r(mean): " << 1 - r_mean << ")\n"
      << std::defaultfloat;
  json result{{"structure", structure}, {"frames", o.frames},  {"size", n},
              {"pixel_size_nm", o.pixel_size}, {"psf_sigma_px", o.psf_sigma},
              {"emitters", sim.emitters}, {"magnification", m}, {"device", dev.label},
              {"rows", rows},           {"esrrf_minus_mean", best_esrrf - r_mean},
              {"room_above_mean", 1 - r_mean}};

  if (structure == "rings") result["ring_radius_nm"] = {o.ring_radius_min_nm, o.ring_radius_max_nm};
  if (!o.skip_sweep) {
    // The sweep's choice by QnR, and the pair the truth prefers (AVG, the sweep's whole-range images).
    es.temporal = Temporal::avg;
    const EsrrfSweepSpec spec = parse_esrrf_sweep(o.sweep, es, "bench esrrf --sweep");
    auto reader = open_stack(stack);
    EsrrfSweepInput in;
    in.reader = reader.get();
    in.first = 0;
    in.last = o.frames;
    in.radii = spec.radii;
    in.sensitivities = spec.sensitivities;
    in.make_engine = [&](const EsrrfGeometry& g, const EsrrfSettings& st) { return make_esrrf_engine(dev.device, g, st, 64); };
    in.threads = std::max(dev.device.cpu_threads, 1);
    std::vector<double> truth_r;
    // All pairs over the same interior: the border of the largest radius.
    const std::int64_t sweep_border = static_cast<std::int64_t>(
        std::floor(*std::max_element(spec.radii.begin(), spec.radii.end()) * m));
    in.each = [&](const EsrrfSweepRow&, const std::vector<float>& image) {
      truth_r.push_back(pearson_region(image, truth_m, nm, sweep_border, 0, 0));
    };
    std::size_t best = 0;
    t = clock_type::now();
    const auto rows_s = esrrf_sweep(es, in, &best);
    const double sweep_seconds = since(t);
    const std::size_t truth_best =
        static_cast<std::size_t>(std::max_element(truth_r.begin(), truth_r.end()) - truth_r.begin());
    out << "  sweep (" << o.sweep << ", AVG, " << std::setprecision(3) << sweep_seconds << " s):\n"
        << "    radius  sensitivity     RSP  FRC (px)     QnR  r(truth)\n";
    json sweep_rows = json::array();
    for (std::size_t i = 0; i < rows_s.size(); ++i) {
      const auto& r = rows_s[i];
      char line[160];
      std::snprintf(line, sizeof line, "    %6.3g  %11.3g  %6.4f  %8.3f  %6.4f  %8.4f%s%s\n", r.radius, r.sensitivity,
                    r.rsp, r.resolution_px, r.qnr, truth_r[i], i == best ? "  <- QnR" : "",
                    i == truth_best ? "  <- truth" : "");
      out << line;
      sweep_rows.push_back({{"radius", r.radius},
                            {"sensitivity", r.sensitivity},
                            {"rsp", r.rsp},
                            {"frc_resolution_px", std::isfinite(r.resolution_px) ? json(r.resolution_px) : json()},
                            {"qnr", std::isfinite(r.qnr) ? json(r.qnr) : json()},
                            {"pearson_r_truth", truth_r[i]}});
    }
    out << "  the sweep's choice against the truth: r = " << std::fixed << std::setprecision(3) << truth_r[best]
        << ", the truth's best pair r = " << truth_r[truth_best] << " (loss " << truth_r[truth_best] - truth_r[best]
        << ")\n"
        << std::defaultfloat;
    result["sweep"] = {{"spec", o.sweep},
                       {"rows", sweep_rows},
                       {"qnr_choice", best},
                       {"truth_choice", truth_best},
                       {"r_loss", truth_r[truth_best] - truth_r[best]},
                       {"seconds", sweep_seconds}};
  }
  fs::remove(stack);
  return result;
}

void write_speed_stack(const std::string& path, std::int64_t frames, std::int64_t size, std::uint64_t seed) {
  ImageMeta meta;
  meta.width = size, meta.height = size, meta.frames = frames, meta.type = PixelType::u16;
  auto writer = create_image_writer(path, meta);
  std::vector<std::uint16_t> frame(static_cast<std::size_t>(size * size));
  std::uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (std::int64_t t = 0; t < frames; ++t) {
    for (auto& v : frame) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      v = static_cast<std::uint16_t>(100 + ((state >> 33) % 1000));
    }
    writer->write(frame.data(), 1);
  }
  writer->close();
}

json speed(const EsrrfBenchOptions& o, const std::vector<BenchDevice>& devices, const fs::path& dir, std::uint64_t seed,
           std::ostream& out) {
  out << "\neSRRF speed: end to end (uint16 TIFF in the page cache -> image), magnification " << o.magnification
      << ", radius 1.5, AVG; the CPU over " << o.cpu_frames << " frames\n";
  json rows = json::array();
  EsrrfSettings s;
  s.magnification = o.magnification;
  for (const std::int64_t size : o.speed_sizes) {
    const std::string path = (dir / ("bench_esrrf_speed_" + std::to_string(size) + ".tif")).string();
    write_speed_stack(path, o.speed_frames, size, seed);
    for (const auto& dev : devices) {
      const std::int64_t frames = dev.device.kind == DeviceKind::cpu ? std::min(o.cpu_frames, o.speed_frames) : o.speed_frames;
      double warm = 0, seconds = 0;
      esrrf_image(path, dev.device, s, std::min<std::int64_t>(frames, 8), &warm);  // page cache, GPU context
      esrrf_image(path, dev.device, s, frames, &seconds);
      const double fps = static_cast<double>(frames) / seconds;
      out << "  " << std::left << std::setw(10) << dev.label << std::right << std::setw(5) << size << "^2  "
          << std::setw(6) << frames << " frames in " << std::setprecision(3) << seconds << " s = " << std::setw(8)
          << std::setprecision(4) << fps << " frames/s";
      json row{{"device", dev.label}, {"size", size}, {"frames", frames}, {"seconds", seconds}, {"frames_per_s", fps}};
      if (size == 512 && o.magnification == 5) {
        const double per_1000 = 1000.0 / fps;
        out << "  -> 1,000 frames: " << std::setprecision(3) << per_1000 << " s (target <= 2 s on an H100; "
            << "special-function floor ~0.3 s: " << std::setprecision(2) << per_1000 / 0.3 << "x)";
        row["seconds_per_1000_frames"] = per_1000;
      }
      out << "\n";
      rows.push_back(row);
    }
    fs::remove(path);
  }
  return rows;
}

}  // namespace

void add_esrrf_bench_options(CLI::App& cmd, EsrrfBenchOptions& o) {
  cmd.add_option("--devices", o.devices, "devices to time (cpu, cuda:0, ...); default: cpu and every GPU")->delimiter(',');
  cmd.add_option("--magnification", o.magnification, "eSRRF magnification")->default_val(o.magnification);
  cmd.add_option("--frames", o.frames, "quality: frames of the simulated blinking stacks")->default_val(o.frames);
  cmd.add_option("--size", o.size, "quality: frame edge in pixels")->default_val(o.size);
  cmd.add_option("--emitters", o.emitters, "quality: emitters")->default_val(o.emitters);
  cmd.add_option("--psf-sigma", o.psf_sigma, "quality: PSF sigma in pixels")->default_val(o.psf_sigma);
  cmd.add_option("--pixel-size", o.pixel_size, "quality: pixel size in nm")->default_val(o.pixel_size);
  cmd.add_option("--ring-radius-min", o.ring_radius_min_nm, "quality: smallest ring radius, nm")
      ->default_val(o.ring_radius_min_nm)->check(CLI::PositiveNumber);
  cmd.add_option("--ring-radius-max", o.ring_radius_max_nm, "quality: largest ring radius, nm")
      ->default_val(o.ring_radius_max_nm)->check(CLI::PositiveNumber);
  cmd.add_option("--quality-device", o.quality_device, "device of the quality runs (default: first GPU, else cpu)");
  cmd.add_option("--sweep", o.sweep, "quality: the parameter sweep judged against the truth")->default_val(o.sweep);
  cmd.add_option("--speed-frames", o.speed_frames, "speed: frames in the test stacks")->default_val(o.speed_frames);
  cmd.add_option("--speed-sizes", o.speed_sizes, "speed: frame edges")->delimiter(',');
  cmd.add_option("--cpu-frames", o.cpu_frames, "speed: frames the CPU is timed over")->default_val(o.cpu_frames);
  cmd.add_option("--dir", o.dir, "where the test stacks are written (default: system temp dir)");
  cmd.add_flag("--skip-quality", o.skip_quality, "skip the comparison with the truth");
  cmd.add_flag("--skip-speed", o.skip_speed, "skip the speed measurements");
  cmd.add_flag("--skip-sweep", o.skip_sweep, "quality: leave out the parameter sweep");
  cmd.add_option("--images", o.images, "write the images (TIFF and PNG) to this directory")->type_name("DIR");
  cmd.add_option("--json", o.json, "also write the results as JSON")->type_name("FILE");
}

void run_esrrf_bench(const EsrrfBenchOptions& o, std::uint64_t seed, bool quiet, std::ostream& out) {
  const auto devices = bench_devices(o.devices);
  if (!o.json.empty()) AtomicOutput check(o.json);
  const fs::path dir = bench_scratch_dir(o.dir);
  json result{{"bench", "esrrf"}, {"machine", machine_info()}, {"time", utc_now()}, {"seed", seed}};
  if (!o.skip_speed) result["speed"] = speed(o, devices, dir, seed, out);
  if (!o.skip_quality) {
    const BenchDevice* dev = &devices.front();
    for (const auto& d : devices)
      if (o.quality_device.empty() ? d.device.kind == DeviceKind::cuda : d.label == o.quality_device) {
        dev = &d;
        break;
      }
    json q = json::array();
    for (const char* structure : {"random", "rings"}) q.push_back(quality(o, *dev, dir, structure, seed, quiet, out));
    result["quality"] = q;
  }
  if (!o.json.empty()) write_file_atomically(o.json, result.dump(2) + "\n");
}

}  // namespace nanoscopy
