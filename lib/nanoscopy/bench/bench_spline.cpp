#include "nanoscopy/bench/bench_spline.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/bench/bench_common.hpp"
#include "nanoscopy/bench/spline_spots.hpp"
#include "nanoscopy/commit.hpp"
#include "nanoscopy/config.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/progress.hpp"
#include "nanoscopy/core/spline_psf_io.hpp"
#include "nanoscopy/io/spline_calibration_formats.hpp"
#include "nanoscopy/fit/engine.hpp"

namespace nanoscopy {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr double kPhotons = 2000, kBackground = 20;

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

std::string fmt(double v, int precision = 3) {
  if (!std::isfinite(v)) return "–";
  std::ostringstream s;
  s << std::setprecision(precision) << v;
  return s.str();
}

// Gpufit's C interface (gpufit.h, Gpufit 1.2; REAL = float), resolved at run time.
using GpufitFn = int (*)(std::size_t n_fits, std::size_t n_points, float* data, float* weights, int model_id,
                         float* initial_parameters, float tolerance, int max_n_iterations, int* parameters_to_fit,
                         int estimator_id, std::size_t user_info_size, char* user_info, float* output_parameters,
                         int* output_states, float* output_chi_squares, int* output_n_iterations);
using GpufitErrorFn = const char* (*)();
constexpr int kGpufitSpline3d = 10, kGpufitMle = 1, kGpufitConverged = 0;

class Gpufit {
 public:
  explicit Gpufit(const std::string& path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw InputError(path, std::string("cannot load Gpufit: ") + dlerror());
    fit_ = reinterpret_cast<GpufitFn>(dlsym(handle_, "gpufit"));
    error_ = reinterpret_cast<GpufitErrorFn>(dlsym(handle_, "gpufit_get_last_error"));
    if (!fit_) throw InputError(path, "no function gpufit() in this library (is it Gpufit's libGpufit.so?)");
  }
  ~Gpufit() {
    if (handle_) dlclose(handle_);
  }
  Gpufit(const Gpufit&) = delete;
  Gpufit& operator=(const Gpufit&) = delete;

  // SPLINE_3D on `count` ROIs of size×size photons; user_info = sizes + the coefficient table (as Gpufit
  // wants it: all REAL). Parameters (amplitude, x, y, z, offset) in Gpufit's coordinates.
  struct Out {
    std::vector<float> parameters;
    std::vector<int> states, iterations;
    std::vector<float> chi2;
  };
  Out fit(std::vector<float>& data, int size, std::int64_t count, std::vector<float>& initial,
          std::vector<float>& user_info) const {
    Out o;
    o.parameters.resize(static_cast<std::size_t>(count) * 5);
    o.states.resize(static_cast<std::size_t>(count));
    o.iterations.resize(static_cast<std::size_t>(count));
    o.chi2.resize(static_cast<std::size_t>(count));
    int to_fit[5] = {1, 1, 1, 1, 1};
    const int rc = fit_(static_cast<std::size_t>(count), static_cast<std::size_t>(size) * size, data.data(), nullptr,
                        kGpufitSpline3d, initial.data(), 1e-4f, 20, to_fit, kGpufitMle,
                        user_info.size() * sizeof(float), reinterpret_cast<char*>(user_info.data()),
                        o.parameters.data(), o.states.data(), o.chi2.data(), o.iterations.data());
    if (rc != 0) throw DeviceError("gpufit", error_ ? error_() : "gpufit() failed");
    return o;
  }

 private:
  void* handle_ = nullptr;
  GpufitFn fit_ = nullptr;
  GpufitErrorFn error_ = nullptr;
};

std::vector<float> gpufit_user_info(const SplinePsf& psf, int size) {
  std::vector<float> u{static_cast<float>(size), static_cast<float>(size), 1.0f, static_cast<float>(psf.size_x),
                       static_cast<float>(psf.size_y), static_cast<float>(psf.size_z)};
  u.insert(u.end(), psf.coefficients.begin(), psf.coefficients.end());
  return u;
}

// Our (x, y, z nm) ↔ Gpufit's (x, y, z): Gpufit evaluates the spline at (c − p1, r − p2, 0 − p3) voxels.
void to_gpufit(const SplinePsf& psf, double x, double y, double z, float* p) {
  p[1] = static_cast<float>(x - psf.centre_x * psf.voxel_xy_px);
  p[2] = static_cast<float>(y - psf.centre_y * psf.voxel_xy_px);
  p[3] = static_cast<float>(-(psf.focus_index + z / psf.z_step_nm));
}

struct Run {
  std::string label;
  Device device;
};

}  // namespace

void run_spline_fit_bench(const FitBenchOptions& given, std::uint64_t seed, int repeats, bool quiet,
                          std::ostream& out) {
  FitBenchOptions o = given;
  // The spline's own defaults: the ROI sizes, mle.
  if (o.sizes == FitBenchOptions{}.sizes) o.sizes = {9, 11, 13};
  if (o.estimators == FitBenchOptions{}.estimators) o.estimators = {"mle"};
  if (o.quick) {
    o.sizes = {13};
    o.batches = {1000, 10000};
    o.accuracy_fits = std::min<std::int64_t>(o.accuracy_fits, 12000);
  }
  for (int s : o.sizes)
    if (s < 5 || s * s > kMaxRoiPixels) throw UsageError("--sizes", "ROI edge " + std::to_string(s) + " is outside 5…32");
  if (!o.json.empty()) AtomicOutput check(o.json);
  const auto psf = std::make_shared<const SplinePsf>(o.calibration.empty() ? astigmatic_spline_psf(27, 121, 10.0, 100.0)
                                                                           : read_spline_any(o.calibration));
  if (psf->voxel_xy_px != 1.0 && !o.gpufit.empty())
    throw UsageError("--gpufit", "Gpufit's SPLINE_3D evaluates the spline at camera pixels: a calibration with "
                                 "voxel_xy_px 1 is needed");
  std::unique_ptr<Gpufit> gpufit = o.gpufit.empty() ? nullptr : std::make_unique<Gpufit>(o.gpufit);
  // Depths: ±600 nm (the emitter range) inside the calibration with 50 nm to spare.
  const double z_lo = std::max(-600.0, psf->z_min_nm() + 50), z_hi = std::min(600.0, psf->z_max_nm() - 50);
  if (!(z_hi > z_lo)) throw UsageError("--calibration", "the calibration spans less than 100 nm of z");

  std::vector<Run> runs;
  for (const auto& d : bench_devices(o.devices))
    for (const auto& e : o.estimators) runs.push_back({d.label + " (" + e + ")", d.device});
  json doc;
  doc["tool"] = "bench fit2d --model spline";
  doc["version"] = NANOSCOPY_VERSION;
  doc["commit"] = NANOSCOPY_GIT_COMMIT;
  doc["date"] = utc_now();
  doc["machine"] = machine_info();
  doc["parameters"] = {{"sizes", o.sizes},
                       {"batches", o.batches},
                       {"seed", seed},
                       {"photons", kPhotons},
                       {"background", kBackground},
                       {"z_range_nm", {z_lo, z_hi}},
                       {"calibration", o.calibration.empty() ? "built-in astigmatic spline" : o.calibration},
                       {"spline_voxels", {psf->size_x + 1, psf->size_y + 1, psf->size_z + 1}},
                       {"coefficient_bytes", psf->coefficients.size() * sizeof(float)},
                       {"estimators", o.estimators},
                       {"gpufit", o.gpufit}};
  doc["throughput"] = json::array();
  doc["crb"] = json::array();
  doc["gpufit"] = json::array();
  const std::int64_t max_batch = *std::max_element(o.batches.begin(), o.batches.end());

  if (o.throughput) {
    Progress progress("bench fit2d spline throughput",
                      static_cast<std::int64_t>(o.sizes.size() * o.batches.size() * (runs.size() + (gpufit ? 1 : 0))),
                      quiet);
    std::int64_t done = 0;
    for (int size : o.sizes) {
      const std::int64_t pool_n = std::min<std::int64_t>(max_batch, 65536);
      const SplineSpots pool = simulate_spline_spots(*psf, size, size, pool_n, kPhotons, kBackground, z_lo, z_hi,
                                                     seed + static_cast<std::uint64_t>(size));
      const std::size_t n = static_cast<std::size_t>(size) * size;
      std::vector<std::uint16_t> tiled(static_cast<std::size_t>(max_batch) * n);
      for (std::int64_t k = 0; k < max_batch; ++k)
        std::copy_n(pool.pixels_u16.begin() + static_cast<std::ptrdiff_t>((k % pool_n) * n), n,
                    tiled.begin() + static_cast<std::ptrdiff_t>(k * n));
      for (const Run& run : runs) {
        const bool cpu = run.device.kind == DeviceKind::cpu;
        FitSettings st;
        st.model = ShapeModel::spline;
        st.spline = psf;
        const std::string e = run.label.substr(run.label.find('(') + 1, run.label.size() - run.label.find('(') - 2);
        st.estimator = e == "lsq" ? Estimator::lsq : e == "wlsq" ? Estimator::wlsq : Estimator::mle;
        auto engine = make_fit_engine(run.device, st);
        for (std::int64_t batch : o.batches) {
          progress.update(done++);
          if (cpu && batch > o.cpu_max_batch) continue;
          RoiBatch b{tiled.data(), PixelType::u16, batch, size, size, nullptr};
          std::vector<FitResult> res(static_cast<std::size_t>(batch));
          engine->fit(b, res);  // warm-up
          std::vector<double> seconds;
          const auto start = Clock::now();
          const int calls = cpu ? repeats : std::max(repeats, 10);
          for (int r = 0; r < calls; ++r) {
            const auto t0 = Clock::now();
            engine->fit(b, res);
            seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
            if (cpu && std::chrono::duration<double>(Clock::now() - start).count() > 3) break;
          }
          std::int64_t conv = 0;
          for (const auto& r : res) conv += converged(r.status);
          const double s = median(seconds);
          doc["throughput"].push_back({{"size", size},
                                       {"batch", batch},
                                       {"device", run.label},
                                       {"fits_per_s", static_cast<double>(batch) / s},
                                       {"latency_us", s * 1e6},
                                       {"converged_fraction", static_cast<double>(conv) / static_cast<double>(batch)},
                                       {"repeats", static_cast<int>(seconds.size())}});
        }
      }
      if (gpufit) {
        // The same ROIs in photons (Gpufit fits what it is given), started from the truth moved by
        // (+0.2 px, −0.2 px, +50 nm, photons ×0.9, background ×1.1): Gpufit has no z search of its own.
        std::vector<float> data(tiled.size());
        for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(tiled[i]);
        std::vector<float> user_info = gpufit_user_info(*psf, size);
        for (std::int64_t batch : o.batches) {
          progress.update(done++);
          std::vector<float> initial(static_cast<std::size_t>(batch) * 5);
          for (std::int64_t k = 0; k < batch; ++k) {
            const auto& t = pool.truth[static_cast<std::size_t>(k % pool_n)];
            float* p = initial.data() + k * 5;
            p[0] = static_cast<float>(0.9 * t.photons);
            to_gpufit(*psf, t.x + 0.2, t.y - 0.2, t.z + 50, p);
            p[4] = static_cast<float>(1.1 * t.background);
          }
          std::vector<float> data_batch(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(batch * n));
          std::vector<float> init_copy = initial;
          auto g = gpufit->fit(data_batch, size, batch, init_copy, user_info);  // warm-up
          std::vector<double> seconds;
          for (int r = 0; r < std::max(repeats, 5); ++r) {
            init_copy = initial;
            const auto t0 = Clock::now();
            g = gpufit->fit(data_batch, size, batch, init_copy, user_info);
            seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
          }
          // Agreement with our first GPU run (else the first run) on the same ROIs.
          const Run* ours = &runs.front();
          for (const Run& r : runs)
            if (r.device.kind != DeviceKind::cpu) {
              ours = &r;
              break;
            }
          FitSettings st;
          st.model = ShapeModel::spline;
          st.spline = psf;
          st.estimator = Estimator::mle;
          std::vector<FitResult> mine(static_cast<std::size_t>(batch));
          make_fit_engine(ours->device, st)
              ->fit(RoiBatch{tiled.data(), PixelType::u16, batch, size, size, nullptr}, mine);
          std::vector<double> dx, dz, dphot;
          std::int64_t g_conv = 0;
          for (std::int64_t k = 0; k < batch; ++k) {
            g_conv += g.states[static_cast<std::size_t>(k)] == kGpufitConverged;
            if (g.states[static_cast<std::size_t>(k)] != kGpufitConverged || !converged(mine[static_cast<std::size_t>(k)].status))
              continue;
            const float* p = g.parameters.data() + k * 5;
            const double gx = p[1] + psf->centre_x * psf->voxel_xy_px, gy = p[2] + psf->centre_y * psf->voxel_xy_px;
            const double gz = (-p[3] - psf->focus_index) * psf->z_step_nm;
            const FitResult& m = mine[static_cast<std::size_t>(k)];
            dx.push_back(std::max(std::fabs(gx - m.x), std::fabs(gy - m.y)));
            dz.push_back(std::fabs(gz - m.z));
            dphot.push_back(std::fabs(p[0] - m.amplitude) / std::max(1.0f, std::fabs(m.amplitude)));
          }
          const double s = median(seconds);
          doc["gpufit"].push_back({{"size", size},
                                   {"batch", batch},
                                   {"fits_per_s", static_cast<double>(batch) / s},
                                   {"latency_us", s * 1e6},
                                   {"converged_fraction", static_cast<double>(g_conv) / static_cast<double>(batch)},
                                   {"compared_with", ours->label},
                                   {"both_converged", dx.size()},
                                   {"dxy_median_px", median(dx)},
                                   {"dxy_p99_px", quantile(dx, 0.99)},
                                   {"dz_median_nm", median(dz)},
                                   {"dz_p99_nm", quantile(dz, 0.99)},
                                   {"dphotons_median_rel", median(dphot)}});
        }
      }
    }
    progress.finish();
  }

  if (o.accuracy) {
    // Precision per 100 nm of z against the CRB at each spot's truth (the spline's own Poisson Fisher
    // information), 13×13 ROIs, spots simulated from the spline.
    const int size = 13;
    std::vector<double> edges;
    for (double z = z_lo; z < z_hi - 1e-9; z += 100) edges.push_back(z);
    edges.push_back(z_hi);
    const std::int64_t per_bin = std::max<std::int64_t>(100, o.accuracy_fits / static_cast<std::int64_t>(edges.size() - 1));
    Progress progress("bench fit2d spline precision", static_cast<std::int64_t>(runs.size() * (edges.size() - 1)), quiet);
    std::int64_t done = 0;
    for (const Run& run : runs) {
      FitSettings st;
      st.model = ShapeModel::spline;
      st.spline = psf;
      const std::string e = run.label.substr(run.label.find('(') + 1, run.label.size() - run.label.find('(') - 2);
      st.estimator = e == "lsq" ? Estimator::lsq : e == "wlsq" ? Estimator::wlsq : Estimator::mle;
      auto engine = make_fit_engine(run.device, st);
      for (std::size_t b = 0; b + 1 < edges.size(); ++b) {
        progress.update(done++);
        const SplineSpots spots = simulate_spline_spots(*psf, size, size, per_bin, kPhotons, kBackground, edges[b],
                                                        edges[b + 1], seed + 3000 + b);
        std::vector<FitResult> res(static_cast<std::size_t>(per_bin));
        engine->fit(spots.batch(PixelType::u16), res);
        double ex2 = 0, ey2 = 0, ez2 = 0, cx2 = 0, cy2 = 0, cz2 = 0, zb = 0, xb = 0, crlb_z = 0;
        std::int64_t used = 0;
        for (std::int64_t k = 0; k < per_bin; ++k) {
          const FitResult& r = res[static_cast<std::size_t>(k)];
          if (!converged(r.status)) continue;
          const auto& t = spots.truth[static_cast<std::size_t>(k)];
          const SplineCrb c = spline_crb(*psf, size, size, t);
          ex2 += (r.x - t.x) * (r.x - t.x);
          ey2 += (r.y - t.y) * (r.y - t.y);
          ez2 += (r.z - t.z) * (r.z - t.z);
          cx2 += c.x * c.x;
          cy2 += c.y * c.y;
          cz2 += c.z * c.z;
          zb += r.z - t.z;
          xb += r.x - t.x;
          crlb_z += r.crlb_z;
          ++used;
        }
        const double u = static_cast<double>(std::max<std::int64_t>(used, 1));
        doc["crb"].push_back({{"device", run.label},
                              {"z_from_nm", edges[b]},
                              {"z_to_nm", edges[b + 1]},
                              {"n", per_bin},
                              {"converged_fraction", static_cast<double>(used) / static_cast<double>(per_bin)},
                              {"x_rms_nm", std::sqrt(ex2 / u) * psf->pixel_size_nm},
                              {"y_rms_nm", std::sqrt(ey2 / u) * psf->pixel_size_nm},
                              {"z_rms_nm", std::sqrt(ez2 / u)},
                              {"x_rms_over_crb", std::sqrt(ex2 / cx2)},
                              {"y_rms_over_crb", std::sqrt(ey2 / cy2)},
                              {"z_rms_over_crb", std::sqrt(ez2 / cz2)},
                              {"crb_z_nm", std::sqrt(cz2 / u)},
                              {"mean_crlb_z_nm", crlb_z / u},
                              {"x_bias_nm", xb / u * psf->pixel_size_nm},
                              {"z_bias_nm", zb / u}});
      }
    }
    progress.finish();
  }

  out << "# bench fit2d --model spline — " << doc["date"].get<std::string>() << ", commit " << NANOSCOPY_GIT_COMMIT
      << "\n\nCPU: " << doc["machine"]["cpu"].get<std::string>();
  for (const auto& g : doc["machine"]["gpus"]) out << "; GPU " << g["index"] << ": " << g["name"].get<std::string>();
  out << "\n\nSpline: " << doc["parameters"]["calibration"].get<std::string>() << ", " << psf->size_x + 1 << "×"
      << psf->size_y + 1 << "×" << psf->size_z + 1 << " voxels (" << fmt(static_cast<double>(psf->coefficients.size()) * 4 / 1e6)
      << " MB of coefficients); spots " << kPhotons << " photons, " << kBackground << " background photons/px, z "
      << z_lo << " to " << z_hi << " nm.\n";
  if (!doc["throughput"].empty()) {
    out << "\n### fits/s, host to host (latency per call; converged share)\n\n| device | S | fits per call | fits/s | "
           "latency | converged |\n|---|---|---|---|---|---|\n";
    for (const auto& c : doc["throughput"])
      out << "| " << c["device"].get<std::string>() << " | " << c["size"] << " | " << c["batch"] << " | "
          << fmt(c["fits_per_s"].get<double>()) << " | " << fmt(c["latency_us"].get<double>()) << " µs | "
          << fmt(100 * c["converged_fraction"].get<double>(), 4) << " % |\n";
  }
  if (!doc["gpufit"].empty()) {
    out << "\n### Gpufit SPLINE_3D (MLE, tolerance 1e-4, 20 iterations) on the same ROIs, host to host\n\n"
           "| S | fits per call | fits/s | converged | vs | both converged | |dxy| median / p99 (px) | |dz| median / "
           "p99 (nm) | |dphotons| median |\n|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& c : doc["gpufit"])
      out << "| " << c["size"] << " | " << c["batch"] << " | " << fmt(c["fits_per_s"].get<double>()) << " | "
          << fmt(100 * c["converged_fraction"].get<double>(), 4) << " % | " << c["compared_with"].get<std::string>()
          << " | " << c["both_converged"] << " | " << fmt(c["dxy_median_px"].get<double>()) << " / "
          << fmt(c["dxy_p99_px"].get<double>()) << " | " << fmt(c["dz_median_nm"].get<double>()) << " / "
          << fmt(c["dz_p99_nm"].get<double>()) << " | " << fmt(c["dphotons_median_rel"].get<double>()) << " |\n";
  }
  if (!doc["crb"].empty()) {
    out << "\n### Precision against the CRB per 100 nm of z (13×13, spots from the spline)\n\n"
           "| device | z (nm) | n | converged | x RMS (nm) | y RMS (nm) | z RMS (nm) | x/CRB | y/CRB | z/CRB | CRB z (nm) "
           "| z bias (nm) |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& c : doc["crb"])
      out << "| " << c["device"].get<std::string>() << " | " << c["z_from_nm"].get<double>() << " to "
          << c["z_to_nm"].get<double>() << " | " << c["n"] << " | "
          << fmt(100 * c["converged_fraction"].get<double>(), 4) << " % | " << fmt(c["x_rms_nm"].get<double>())
          << " | " << fmt(c["y_rms_nm"].get<double>()) << " | " << fmt(c["z_rms_nm"].get<double>()) << " | "
          << fmt(c["x_rms_over_crb"].get<double>()) << " | " << fmt(c["y_rms_over_crb"].get<double>()) << " | "
          << fmt(c["z_rms_over_crb"].get<double>()) << " | " << fmt(c["crb_z_nm"].get<double>()) << " | "
          << fmt(c["z_bias_nm"].get<double>(), 2) << " |\n";
  }
  if (!o.json.empty()) write_file_atomically(o.json, doc.dump(1) + "\n");
}

}  // namespace nanoscopy
