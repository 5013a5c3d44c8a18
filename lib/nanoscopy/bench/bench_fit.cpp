#include "nanoscopy/bench/bench_fit.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <thread>

#include "nanoscopy/commit.hpp"
#include "nanoscopy/config.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/progress.hpp"
#include "nanoscopy/fit/engine.hpp"
#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/fit/simulate_spots.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/io/table_writer.hpp"
#include "nanoscopy/bench/bench_common.hpp"
#include "nanoscopy/bench/crb.hpp"
#include "nanoscopy/bench/bench_spline.hpp"

namespace nanoscopy {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// Gpufit 1.2 on one H100, host to host, fits/s (notes/reference.md §1).
const std::map<int, std::map<std::int64_t, double>> kGpufitH100 = {
    {5, {{10, 7.6e3}, {100, 6.6e4}, {1000, 6.7e5}, {10000, 4.5e6}, {100000, 1.17e7}, {1000000, 1.38e7}}},
    {7, {{10, 6.5e3}, {100, 6.0e4}, {1000, 4.4e5}, {10000, 4.1e6}, {100000, 9.0e6}, {1000000, 9.9e6}}},
    {9, {{10, 1.1e4}, {100, 1.4e5}, {1000, 1.1e6}, {10000, 4.9e6}, {100000, 8.0e6}, {1000000, 8.0e6}}},
    {13, {{10, 1.3e4}, {100, 1.1e5}, {1000, 9.1e5}, {10000, 3.3e6}, {100000, 4.4e6}, {1000000, 4.4e6}}},
    {16, {{10, 1.5e4}, {100, 1.5e5}, {1000, 9.2e5}, {10000, 2.4e6}, {100000, 3.4e6}, {1000000, 3.4e6}}},
    {32, {{10, 1.3e4}, {100, 8.5e4}, {1000, 5.0e5}, {10000, 8.4e5}, {100000, 9.2e5}, {1000000, 9.2e5}}},
};

// The paper's Table 1 (Fit2DGaussian, 9×9, 1e5 fits): median/mean/std of |x̂−x|/σ and |σ̂−σ|/σ.
struct PaperRow {
  double signal, background, x_median, x_mean, x_std, s_median, s_mean, s_std;
};
const PaperRow kPaperTable1[] = {
    {400, 40, 0.0464, 0.0550, 0.0418, 0.0420, 0.0506, 0.0396},
    {1600, 40, 0.0228, 0.0270, 0.0205, 0.0203, 0.0244, 0.0190},
    {1600, 0, 0.0228, 0.0269, 0.0203, NAN, NAN, NAN},
};

double median_of(std::vector<double> v) {
  if (v.empty()) return NAN;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

struct Moments {
  double median = NAN, mean = NAN, std = NAN;
};
Moments moments(const std::vector<double>& v) {
  Moments m;
  if (v.empty()) return m;
  double sum = 0, sum2 = 0;
  for (double e : v) sum += e;
  m.mean = sum / static_cast<double>(v.size());
  for (double e : v) sum2 += (e - m.mean) * (e - m.mean);
  m.std = v.size() > 1 ? std::sqrt(sum2 / static_cast<double>(v.size() - 1)) : 0.0;
  m.median = median_of(v);
  return m;
}

json histogram(const std::vector<double>& v, double hi, int bins) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(bins), 0);
  std::vector<double> edges(static_cast<std::size_t>(bins + 1));
  for (int i = 0; i <= bins; ++i) edges[static_cast<std::size_t>(i)] = hi * i / bins;
  for (double e : v) {
    const int b = static_cast<int>(e / hi * bins);
    if (b >= 0 && b < bins) ++counts[static_cast<std::size_t>(b)];
  }
  return json{{"edges", edges}, {"counts", counts}};
}

// A pool of simulated ROIs of one size, tiled to any batch size (the fit time
// does not depend on the pool being unique; the accuracy part uses fresh data).
struct Pool {
  SimulatedSpots spots;
  std::vector<std::uint16_t> tiled;
  void tile(std::int64_t count) {
    const std::size_t n = static_cast<std::size_t>(spots.width * spots.height);
    tiled.resize(static_cast<std::size_t>(count) * n);
    for (std::int64_t k = 0; k < count; ++k) {
      const auto src = static_cast<std::size_t>(k % spots.count) * n;
      std::copy_n(spots.pixels_u16.begin() + static_cast<std::ptrdiff_t>(src), n,
                  tiled.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(k) * n));
    }
  }
};

// One measured configuration: a device, the precision of its fit math and the estimator.
struct FitRun {
  const BenchDevice* dev;
  FitSettings settings;
  std::string label;      // "cpu" (double only), "cuda:0 (fp32)", "cuda:0 (fp64, mle)"
  std::string precision;  // "fp32", "fp64"
  std::string estimator;  // "lsq", "wlsq", "mle"
};

Estimator estimator_named(const std::string& name) {
  return name == "mle" ? Estimator::mle : name == "wlsq" ? Estimator::wlsq : Estimator::lsq;
}

// Every device with each precision it is measured in: the CPU in double (its
// reference), a GPU in each of --precisions; each with every estimator.
std::vector<FitRun> fit_runs(const std::vector<BenchDevice>& devices, const FitSettings& settings,
                             const std::vector<std::string>& precisions, const std::vector<std::string>& estimators) {
  std::vector<FitRun> runs;
  for (const auto& e : estimators)
    for (const auto& d : devices) {
      FitSettings s = settings;
      s.estimator = estimator_named(e);
      const std::string suffix = e == "lsq" ? "" : ", " + e;
      if (d.device.kind == DeviceKind::cpu) {
        s.precision = FitPrecision::fp64;
        runs.push_back({&d, s, e == "lsq" ? d.label : d.label + " (" + e + ")", "fp64", e});
        continue;
      }
      for (const auto& p : precisions) {
        s.precision = p == "double" ? FitPrecision::fp64 : FitPrecision::fp32;
        const std::string name = p == "double" ? "fp64" : "fp32";
        runs.push_back({&d, s, d.label + " (" + name + suffix + ")", name, e});
      }
    }
  return runs;
}

// The precision table's condition for a model: the targets, Poisson data.
// 2D: 9×9 ROIs at 400:40 (the paper's first row); 3D: 13×13, 1500 photons on 10/px, z over ±400 nm.
SpotRecipe crb_recipe(ShapeModel model) {
  SpotRecipe r;
  r.model = model;
  r.poisson = true;
  if (model == ShapeModel::astigmatic) {
    r.width = r.height = 13;
    r.signal = 1500;
    r.background = 10.0 * 13 * 13;
  } else {
    r.width = r.height = 9;
    r.signal = 400;
    r.background = 40;
  }
  return r;
}

// Precision against the Poisson CRB (at each spot's truth, bench/crb.hpp) for one run.
json crb_cell(const FitRun& run, std::int64_t n, std::uint64_t seed) {
  const FitSettings& settings = run.settings;
  const SpotRecipe recipe = crb_recipe(settings.model);
  const auto spots = simulate_spots(recipe, n, seed);
  std::vector<FitResult> out(static_cast<std::size_t>(n));
  make_fit_engine(run.dev->device, settings)->fit(spots.batch(PixelType::u16), out);
  const bool three_d = settings.model == ShapeModel::astigmatic;
  double e2 = 0, c2 = 0, bias = 0, z2 = 0, zc2 = 0, zbias = 0, iterations = 0;
  std::vector<double> abs_e, crb_x;
  std::int64_t used = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    const auto& r = out[static_cast<std::size_t>(k)];
    const auto& t = spots.truth[static_cast<std::size_t>(k)];
    iterations += r.iterations;
    if (!converged(r.status)) continue;
    const SpotCrb crb = poisson_spot_crb(recipe, t);
    const double e = r.x - t.x;
    e2 += e * e;
    c2 += crb.x * crb.x;
    bias += e / t.sigma;
    abs_e.push_back(std::abs(e));
    crb_x.push_back(crb.x);
    if (three_d) {
      const double ez = r.z - t.z;
      z2 += ez * ez;
      zc2 += crb.z * crb.z;
      zbias += ez;
    }
    ++used;
  }
  const double u = static_cast<double>(std::max<std::int64_t>(used, 1));
  json cell = {{"device", run.label},
               {"precision", run.precision},
               {"estimator", run.estimator},
               {"model", to_string(settings.model)},
               {"size", recipe.width},
               {"signal", recipe.signal},
               {"background", recipe.background},
               {"noise", "poisson"},
               {"n", n},
               {"converged_fraction", static_cast<double>(used) / static_cast<double>(n)},
               {"x_rms_over_crb", std::sqrt(e2 / c2)},
               {"x_median_over_crb", median_of(abs_e) / (0.6745 * median_of(crb_x))},
               {"x_bias_sigma_percent", 100 * bias / u},
               {"crb_x_rms_px", std::sqrt(c2 / u)},
               {"mean_iterations", iterations / static_cast<double>(n)}};
  if (three_d) {
    cell["z_rms_over_crb"] = std::sqrt(z2 / zc2);
    cell["z_bias_nm"] = zbias / u;
    cell["crb_z_rms_nm"] = std::sqrt(zc2 / u);
    cell["z_range_nm"] = {recipe.z_min, recipe.z_max};
  }
  return cell;
}

json throughput_cell(int size, std::int64_t batch, const FitRun& run, const std::string& timing,
                     double seconds_per_call, int repeats) {
  const std::string& device = run.label;
  json cell = {{"size", size},
               {"batch", batch},
               {"device", device},
               {"precision", run.precision},
               {"estimator", run.estimator},
               {"timing", timing},
               {"fits_per_s", static_cast<double>(batch) / seconds_per_call},
               {"latency_us", seconds_per_call * 1e6},
               {"pixels_per_s", static_cast<double>(batch) * size * size / seconds_per_call},
               {"repeats", repeats}};
  if (timing == "host" && device.rfind("cuda", 0) == 0 && run.precision == "fp32" && run.estimator == "lsq") {
    auto s = kGpufitH100.find(size);
    if (s != kGpufitH100.end()) {
      auto b = s->second.find(batch);
      if (b != s->second.end()) cell["speedup_vs_gpufit_h100"] = cell["fits_per_s"].get<double>() / b->second;
    }
  }
  return cell;
}

void run_throughput(const FitBenchOptions& o, const std::vector<FitRun>& runs, std::uint64_t seed, int repeats,
                    bool quiet, json& cells) {
  const std::int64_t max_batch = *std::max_element(o.batches.begin(), o.batches.end());
  const std::int64_t total = static_cast<std::int64_t>(o.sizes.size() * o.batches.size() * runs.size());
  Progress progress("bench fit2d throughput", total, quiet);
  std::int64_t done = 0;
  // One device at a time, GPUs first: the CPU backend's threads keep spinning
  // for a while after a call and would disturb host-to-host GPU timings.
  std::vector<const FitRun*> order;
  for (const auto& r : runs)
    if (r.dev->device.kind != DeviceKind::cpu) order.push_back(&r);
  for (const auto& r : runs)
    if (r.dev->device.kind == DeviceKind::cpu) order.push_back(&r);
  for (const FitRun* run : order) {
    const BenchDevice* dev = run->dev;
    const FitSettings& settings = run->settings;
    const bool cpu = dev->device.kind == DeviceKind::cpu;
    auto backend = make_fit_engine(dev->device, settings);
    for (int size : o.sizes) {
      Pool pool;
      SpotRecipe recipe;
      recipe.width = recipe.height = size;
      recipe.model = settings.model;
      pool.spots = simulate_spots(recipe, std::min<std::int64_t>(max_batch, 65536), seed + static_cast<std::uint64_t>(size));
      pool.tile(cpu ? std::min(max_batch, o.cpu_max_batch) : max_batch);
      for (std::int64_t batch : o.batches) {
        progress.update(done++);
        if (cpu && batch > o.cpu_max_batch) continue;
        RoiBatch b{pool.tiled.data(), PixelType::u16, batch, size, size, nullptr};
        std::vector<FitResult> out(static_cast<std::size_t>(batch));
        backend->fit(b, out);  // warm-up
        std::vector<double> seconds;
        const auto cell_start = Clock::now();
        // GPU: at least 10 calls; CPU: `repeats` calls, fewer past 3 s.
        const int calls = cpu ? repeats : std::max(repeats, 10);
        for (int r = 0; r < calls; ++r) {
          const auto t0 = Clock::now();
          backend->fit(b, out);
          seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
          if (cpu && std::chrono::duration<double>(Clock::now() - cell_start).count() > 3) break;
        }
        cells.push_back(throughput_cell(size, batch, *run, "host", median_of(seconds), static_cast<int>(seconds.size())));
        if (auto resident = time_device_resident_fit(dev->device, settings, b, std::max(repeats, 10), out))
          cells.push_back(throughput_cell(size, batch, *run, "device", *resident, std::max(repeats, 10)));
      }
    }
  }
  progress.finish();
}

json accuracy_cell(const FitRun& run, double signal, double background, std::int64_t n, std::uint64_t seed) {
  const BenchDevice& dev = *run.dev;
  const FitSettings& settings = run.settings;
  SpotRecipe recipe;
  recipe.width = recipe.height = 9;
  recipe.signal = signal;
  recipe.background = background;
  recipe.model = settings.model;
  const auto spots = simulate_spots(recipe, n, seed);
  std::vector<FitResult> out(static_cast<std::size_t>(n));
  make_fit_engine(dev.device, settings)->fit(spots.batch(PixelType::u16), out);

  std::vector<double> ex, ey, es, crb_x, crb_x_sd;
  double sigma_rel_bias = 0;
  std::vector<std::int64_t> iterations(static_cast<std::size_t>(settings.max_iterations + 1), 0);
  std::map<std::string, std::int64_t> stops;
  std::int64_t converged_count = 0;
  double iteration_sum = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    const auto& r = out[static_cast<std::size_t>(k)];
    const auto& t = spots.truth[static_cast<std::size_t>(k)];
    ++stops[to_string(r.status)];
    iterations[static_cast<std::size_t>(std::clamp(r.iterations, 0, settings.max_iterations))]++;
    iteration_sum += r.iterations;
    if (!converged(r.status)) continue;
    ++converged_count;
    ex.push_back(std::abs(r.x - t.x) / t.sigma);
    ey.push_back(std::abs(r.y - t.y) / t.sigma);
    es.push_back(std::abs(r.sigma - t.sigma) / t.sigma);
    sigma_rel_bias += (r.sigma - t.sigma) / t.sigma;
    const double peak = settings.model == ShapeModel::sampled ? t.amplitude : t.amplitude / (2 * M_PI * t.sigma * t.sigma);
    const auto crb = spot_crb(9, 9, t.x, t.y, t.sigma, peak, t.background);
    crb_x_sd.push_back(crb.x / t.sigma);
  }
  const auto mx = moments(ex), my = moments(ey), ms = moments(es);
  // |e| of a zero-mean normal with sd s: median 0.6745·s, mean √(2/π)·s.
  double crb_mean = 0;
  for (double s : crb_x_sd) crb_mean += std::sqrt(2 / M_PI) * s;
  crb_mean /= std::max<double>(1, static_cast<double>(crb_x_sd.size()));
  json stop_shares;
  for (const auto& [name, count] : stops) stop_shares[name] = static_cast<double>(count) / static_cast<double>(n);
  return {{"device", run.label},
          {"precision", run.precision},
          {"size", 9},
          {"signal", signal},
          {"background", background},
          {"n", n},
          {"converged_fraction", static_cast<double>(converged_count) / static_cast<double>(n)},
          {"x_median", mx.median}, {"x_mean", mx.mean}, {"x_std", mx.std},
          {"y_median", my.median}, {"y_mean", my.mean}, {"y_std", my.std},
          {"sigma_median", ms.median}, {"sigma_mean", ms.mean}, {"sigma_std", ms.std},
          {"sigma_relative_bias", converged_count ? sigma_rel_bias / static_cast<double>(converged_count) : NAN},
          {"crb_x_median", 0.6745 * median_of(crb_x_sd)},
          {"crb_x_mean", crb_mean},
          {"mean_iterations", iteration_sum / static_cast<double>(n)},
          {"iterations_hist", iterations},
          {"stop_shares", stop_shares},
          {"x_error_hist", histogram(ex, 0.3, 60)},
          {"y_error_hist", histogram(ey, 0.3, 60)},
          {"sigma_error_hist", histogram(es, 0.3, 60)}};
}

std::string fmt(double v, int precision = 3) {
  if (!std::isfinite(v)) return "–";
  std::ostringstream s;
  s << std::setprecision(precision) << v;
  return s.str();
}

void print_markdown(std::ostream& out, const json& doc) {
  const auto& cells = doc["throughput"];
  std::map<std::pair<std::string, std::string>, std::map<int, std::map<std::int64_t, const json*>>> grid;
  std::vector<std::int64_t> batches;
  for (const auto& c : cells) {
    grid[{c["device"], c["timing"]}][c["size"]][c["batch"]] = &c;
    const auto b = c["batch"].get<std::int64_t>();
    if (std::find(batches.begin(), batches.end(), b) == batches.end()) batches.push_back(b);
  }
  std::sort(batches.begin(), batches.end());
  // The columns of a throughput table: one per batch size.
  const auto batch_columns = [](std::ostream& o, const std::vector<std::int64_t>& sizes) {
    for (auto b : sizes) o << " " << b << " |";
    o << "\n|---|";
    for (std::size_t i = 0; i < sizes.size(); ++i) o << "---|";
    o << "\n";
  };
  for (const auto& [key, rows] : grid) {
    out << "\n### fits/s — " << key.first << ", " << (key.second == "host" ? "host to host" : "data on the device")
        << " (latency per call in µs)\n\n| S \\ fits per call |";
    batch_columns(out, batches);
    for (const auto& [size, row] : rows) {
      out << "| " << size << " |";
      for (auto b : batches) {
        auto it = row.find(b);
        if (it == row.end()) {
          out << " – |";
          continue;
        }
        const auto& c = *it->second;
        out << " " << fmt(c["fits_per_s"].get<double>()) << " (" << fmt(c["latency_us"].get<double>()) << " µs";
        if (c.contains("speedup_vs_gpufit_h100")) out << ", " << fmt(c["speedup_vs_gpufit_h100"].get<double>(), 2) << "× Gpufit";
        out << ") |";
      }
      out << "\n";
    }
  }
  // Ratios cell by cell: FP32 ÷ FP64 on each GPU (per estimator), and each estimator ÷ lsq (per device and
  // precision). The key names the pair; first = numerator, second = denominator.
  std::map<std::pair<std::string, std::string>, std::map<int, std::map<std::int64_t, std::pair<double, double>>>> ratio;
  std::vector<std::string> estimators;
  for (const auto& c : cells) {
    const std::string e = c["estimator"];
    if (std::find(estimators.begin(), estimators.end(), e) == estimators.end()) estimators.push_back(e);
  }
  for (const auto& c : cells) {
    const std::string label = c["device"];
    const std::string device = label.substr(0, label.find(" ("));
    const std::string estimator = c["estimator"], precision = c["precision"];
    const std::string timing = c["timing"] == "host" ? "host to host" : "data on the device";
    const double v = c["fits_per_s"].get<double>();
    if (device.rfind("cuda", 0) == 0) {
      auto& cell = ratio[{"FP32 ÷ FP64 fits/s — " + device + " (" + estimator + ")", timing}][c["size"]][c["batch"]];
      (precision == "fp32" ? cell.first : cell.second) = v;
    }
    for (const auto& e : estimators) {
      if (e == "lsq" || (estimator != e && estimator != "lsq")) continue;
      auto& cell = ratio[{e + " ÷ lsq fits/s — " + device + " (" + precision + ")", timing}][c["size"]][c["batch"]];
      (estimator == e ? cell.first : cell.second) = v;
    }
  }
  for (const auto& [key, rows] : ratio) {
    out << "\n### " << key.first << ", " << key.second << "\n\n| S \\ fits per call |";
    batch_columns(out, batches);
    for (const auto& [size, row] : rows) {
      out << "| " << size << " |";
      for (auto b : batches) {
        auto it = row.find(b);
        const bool both = it != row.end() && it->second.first > 0 && it->second.second > 0;
        out << " " << (both ? fmt(it->second.first / it->second.second, 3) + "×" : "–") << " |";
      }
      out << "\n";
    }
  }
  if (!doc["accuracy"].empty()) {
    out << "\n### Accuracy, 9×9 ROIs (errors in units of σ₀; paper = Fit2DGaussian's Table 1; CRB = Cramér–Rao bound)\n\n"
        << "| device (precision) | signal:bg | n | converged | x median | x mean | x std | σ median | σ mean | σ std | σ bias | "
           "CRB x median | CRB x mean | paper x median/mean | mean iterations |\n"
        << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& c : doc["accuracy"]) {
      std::string paper = "–";
      for (const auto& p : kPaperTable1)
        if (p.signal == c["signal"].get<double>() && p.background == c["background"].get<double>())
          paper = fmt(p.x_median) + " / " + fmt(p.x_mean);
      out << "| " << c["device"].get<std::string>() << " | " << c["signal"].get<double>() << ":" << c["background"].get<double>()
          << " | " << c["n"] << " | " << fmt(100 * c["converged_fraction"].get<double>(), 6) << " % | "
          << fmt(c["x_median"]) << " | " << fmt(c["x_mean"]) << " | " << fmt(c["x_std"]) << " | " << fmt(c["sigma_median"])
          << " | " << fmt(c["sigma_mean"]) << " | " << fmt(c["sigma_std"]) << " | "
          << fmt(100 * c["sigma_relative_bias"].get<double>(), 2) << " % | " << fmt(c["crb_x_median"]) << " | "
          << fmt(c["crb_x_mean"]) << " | " << paper << " | " << fmt(c["mean_iterations"]) << " |\n";
    }
    out << "\nGpufit 1.2 on the H100 (9×9, 400:40): x median 0.0477, mean 0.0566.\n";
    out << "\n### Stop conditions and iterations\n\n| device (precision) | signal:bg | stop conditions | iterations 0…max |\n|---|---|---|---|\n";
    for (const auto& c : doc["accuracy"]) {
      std::string shares;
      for (const auto& [name, v] : c["stop_shares"].items())
        shares += (shares.empty() ? "" : ", ") + name + " " + fmt(100 * v.get<double>(), 3) + " %";
      std::string hist;
      for (const auto& v : c["iterations_hist"]) hist += std::to_string(v.get<std::int64_t>()) + " ";
      out << "| " << c["device"].get<std::string>() << " | " << c["signal"].get<double>() << ":" << c["background"].get<double>()
          << " | " << shares << " | " << hist << "|\n";
    }
  }
  if (doc.contains("crb") && !doc["crb"].empty()) {
    out << "\n### Precision against the Cramér–Rao bound (Poisson data; CRB at each spot's truth)\n\n"
        << "| device (precision, estimator) | model | ROI, photons, background/px | n | converged | x RMS/CRB | "
           "x median/CRB | x bias (% σ) | CRB x (px) | z RMS/CRB | z bias (nm) | CRB z (nm) | mean iterations |\n"
        << "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& c : doc["crb"]) {
      const int size = c["size"].get<int>();
      const bool z = c.contains("z_rms_over_crb");
      out << "| " << c["device"].get<std::string>() << " | " << c["model"].get<std::string>() << " | " << size << "×"
          << size << ", " << c["signal"].get<double>() << ", " << fmt(c["background"].get<double>() / (size * size))
          << " | " << c["n"] << " | " << fmt(100 * c["converged_fraction"].get<double>(), 5) << " % | "
          << fmt(c["x_rms_over_crb"]) << " | " << fmt(c["x_median_over_crb"]) << " | "
          << fmt(c["x_bias_sigma_percent"], 2) << " | " << fmt(c["crb_x_rms_px"]) << " | "
          << (z ? fmt(c["z_rms_over_crb"]) : "–") << " | " << (z ? fmt(c["z_bias_nm"], 2) : "–") << " | "
          << (z ? fmt(c["crb_z_rms_nm"]) : "–") << " | " << fmt(c["mean_iterations"]) << " |\n";
    }
  }
}

}  // namespace

void add_fit_bench_options(CLI::App& cmd, FitBenchOptions& o) {
  cmd.add_option("--sizes", o.sizes, "ROI edges S (S×S pixels)")->delimiter(',')->default_str("4,5,7,9,11,13,16,24,32");
  cmd.add_option("--batches", o.batches, "fits per call")->delimiter(',')->default_str("10,100,1000,10000,100000,1000000");
  cmd.add_option("--devices", o.devices, "devices to measure (cpu, cuda:N); default: cpu and every GPU")->delimiter(',');
  cmd.add_option("--cpu-max-batch", o.cpu_max_batch, "skip CPU cells with more fits per call")->default_val(o.cpu_max_batch);
  cmd.add_option("--accuracy-fits", o.accuracy_fits, "fits per accuracy condition")->default_val(o.accuracy_fits);
  cmd.add_option("--model", o.model, "spot model: sampled, integrated, elliptical, astigmatic (3D, the built-in "
                                    "calibration) or spline (3D, a 27x27x121-voxel astigmatic spline or --calibration; "
                                    "sizes 9,11,13 and mle unless given)")
      ->default_val(o.model)
      ->check(CLI::IsMember({"sampled", "integrated", "elliptical", "astigmatic", "spline"}));
  cmd.add_option("--calibration", o.calibration, "--model spline: a spline calibration (psf.h5) to fit with")
      ->type_name("FILE");
  cmd.add_option("--gpufit", o.gpufit,
                 "--model spline: Gpufit's libGpufit.so; its SPLINE_3D model fits the same ROIs (dlopen'ed, MLE, "
                 "tolerance 1e-4) and its fits/s and estimates are reported beside ours")
      ->type_name("LIB");
  cmd.add_option("--estimators", o.estimators, "estimators to measure: lsq (the paper's), wlsq, mle")
      ->delimiter(',')->default_str("lsq")->check(CLI::IsMember({"lsq", "wlsq", "mle"}));
  cmd.add_option("--fit-precision", o.precisions, "the GPUs' fit arithmetic to measure (the CPU: double)")
      ->delimiter(',')->default_str("float,double")->check(CLI::IsMember({"float", "double"}));
  cmd.add_flag("--quick", o.quick, "a small grid: S 7,9,13, batches 10,1000,10000, 10000 accuracy fits");
  cmd.add_flag("!--no-throughput", o.throughput, "skip the throughput grid");
  cmd.add_flag("!--no-accuracy", o.accuracy, "skip the accuracy table");
  cmd.add_option("--json", o.json, "write every cell, the machine and the parameters as JSON")->type_name("FILE");
}

void run_fit_bench(FitBenchOptions o, std::uint64_t seed, int repeats, bool quiet, std::ostream& out) {
  if (o.model == "spline") return run_spline_fit_bench(o, seed, repeats, quiet, out);
  if (!o.calibration.empty() || !o.gpufit.empty())
    throw UsageError(o.gpufit.empty() ? "--calibration" : "--gpufit", "is for --model spline");
  if (o.quick) {
    o.sizes = {7, 9, 13};
    o.batches = {10, 1000, 10000};
    o.accuracy_fits = std::min<std::int64_t>(o.accuracy_fits, 10000);
  }
  for (int s : o.sizes)
    if (s < 1 || s * s > kMaxRoiPixels) throw UsageError("--sizes", "ROI edge " + std::to_string(s) + " is outside 1…32");
  for (auto b : o.batches)
    if (b < 1) throw UsageError("--batches", "fits per call must be positive");
  if (o.accuracy_fits < 1) throw UsageError("--accuracy-fits", "must be positive");
  // Validate the JSON destination before minutes of measuring.
  if (!o.json.empty()) AtomicOutput check(o.json);

  FitSettings settings;
  settings.model = o.model == "integrated"   ? ShapeModel::integrated
                   : o.model == "elliptical" ? ShapeModel::elliptical
                   : o.model == "astigmatic" ? ShapeModel::astigmatic
                                             : ShapeModel::sampled;
  const auto devices = bench_devices(o.devices);
  if (o.precisions.empty()) throw UsageError("--fit-precision", "name float, double or both");
  for (const auto& e : o.estimators)
    if (e != "lsq" && e != "wlsq" && e != "mle") throw UsageError("--estimators", "'" + e + "' is not lsq, wlsq or mle");
  const auto runs = fit_runs(devices, settings, o.precisions, o.estimators);

  json doc;
  doc["tool"] = "bench fit2d";
  doc["version"] = NANOSCOPY_VERSION;
  doc["commit"] = NANOSCOPY_GIT_COMMIT;
  doc["date"] = utc_now();
  doc["machine"] = machine_info();
  doc["parameters"] = {{"sizes", o.sizes},       {"batches", o.batches},         {"seed", seed},
                       {"repeats", repeats},     {"pixel_type", "uint16"},       {"model", o.model},
                       {"max_iterations", settings.max_iterations},            {"min_delta", settings.min_delta},
                       {"min_step", settings.min_step}, {"accuracy_fits", o.accuracy_fits},
                       {"cpu_max_batch", o.cpu_max_batch}, {"gpu_precisions", o.precisions},
                       {"estimators", o.estimators}};
  doc["throughput"] = json::array();
  doc["accuracy"] = json::array();
  doc["crb"] = json::array();
  if (o.throughput) run_throughput(o, runs, seed, repeats, quiet, doc["throughput"]);
  if (o.accuracy) {
    // Table 1 is the paper's: lsq on its (Gaussian-noise) 2D data; every run gets the Poisson CRB table.
    Progress progress("bench fit2d accuracy", static_cast<std::int64_t>(runs.size() * 4), quiet);
    std::int64_t done = 0;
    for (const auto& run : runs) {
      if (run.estimator == "lsq" && settings.model != ShapeModel::astigmatic)
        for (const auto& p : kPaperTable1) {
          doc["accuracy"].push_back(accuracy_cell(run, p.signal, p.background, o.accuracy_fits, seed + 1000));
          progress.update(++done);
        }
      doc["crb"].push_back(crb_cell(run, o.accuracy_fits, seed + 2000));
      progress.update(++done);
    }
    progress.finish();
  }
  out << "# bench fit2d — " << doc["date"].get<std::string>() << ", commit " << NANOSCOPY_GIT_COMMIT << "\n\nCPU: "
      << doc["machine"]["cpu"].get<std::string>() << " (" << doc["machine"]["cpu_threads"] << " threads)";
  for (const auto& g : doc["machine"]["gpus"]) out << "; GPU " << g["index"] << ": " << g["name"].get<std::string>();
  out << "\n";
  print_markdown(out, doc);
  if (!o.json.empty()) write_file_atomically(o.json, doc.dump(1) + "\n");
}

void add_spot_sim_options(CLI::App& cmd, SpotSimOptions& o) {
  cmd.add_option("-o,--output", o.output, "output TIFF stack, one ROI per page")->default_val(o.output);
  cmd.add_option("--size", o.size, "ROI edge S")->default_val(o.size)->check(CLI::Range(1, 32));
  cmd.add_option("--count", o.count, "number of ROIs")->default_val(o.count)->check(CLI::Range(1, 100000000));
  cmd.add_option("--signal", o.signal, "integrated signal counts")->default_val(o.signal)->check(CLI::NonNegativeNumber);
  cmd.add_option("--background", o.background, "total background counts over the ROI")
      ->default_val(o.background)->check(CLI::NonNegativeNumber);
}

void run_simulate_spots(const SpotSimOptions& o, std::uint64_t seed, bool quiet) {
  SpotRecipe recipe;
  recipe.width = recipe.height = o.size;
  recipe.signal = o.signal;
  recipe.background = o.background;
  const auto spots = simulate_spots(recipe, o.count, seed);
  const std::filesystem::path out(o.output);
  const auto truth_path = (out.parent_path() / (out.stem().string() + "_truth.csv")).string();
  // Open both outputs first, so a bad path fails before any work is written.
  ImageMeta meta;
  meta.width = meta.height = o.size;
  meta.frames = o.count;
  meta.type = PixelType::u16;
  meta.software = "nanoscopy bench simulate spots";
  auto image = create_image_writer(o.output, meta);
  auto table = create_csv_writer(truth_path, {{"roi", ColumnType::u32}, {"x [px]", ColumnType::f64},
                                              {"y [px]", ColumnType::f64}, {"sigma [px]", ColumnType::f64},
                                              {"amplitude", ColumnType::f64}, {"background", ColumnType::f64}});
  image->write(spots.pixels_u16.data(), o.count);
  std::vector<double> rows;
  rows.reserve(static_cast<std::size_t>(o.count) * 6);
  for (std::int64_t k = 0; k < o.count; ++k) {
    const auto& t = spots.truth[static_cast<std::size_t>(k)];
    rows.insert(rows.end(), {static_cast<double>(k), t.x, t.y, t.sigma, t.amplitude, t.background});
  }
  table->append(rows);
  OutputGroup outputs;  // the ROIs and their truth appear together
  image->close();
  table->finish();
  outputs.commit();
  if (!quiet)
    std::cerr << "wrote " << o.output << " (" << o.count << " ROIs of " << o.size << "x" << o.size << ") and "
              << truth_path << "\n";
}

}  // namespace nanoscopy
