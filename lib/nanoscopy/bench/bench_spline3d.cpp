#include "nanoscopy/bench/bench_spline3d.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <vector>

#include "nanoscopy/bench/exact_pupil_fit.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/sim/pupil_psf.hpp"

namespace nanoscopy {
namespace {

constexpr double kPixelNm = 108;
constexpr int kBins = 12;

std::string quote(const std::string& s) {
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string fit2d_path(const std::string& given) {
  if (!given.empty()) return given;
  std::error_code ec;
  const auto self = std::filesystem::canonical("/proc/self/exe", ec).parent_path();
  for (const auto& p : {self / "fit2d", self.parent_path() / "fit2d" / "fit2d"})
    if (std::filesystem::exists(p)) return p.string();
  throw UsageError("--fit2d", "fit2d is not beside bench: give its path");
}

// Runs a command with its output in `log`; returns the exit status and the log's last line.
int run_logged(const std::string& command, const std::string& log, std::string& last_line) {
  const int status = std::system((command + " > " + quote(log) + " 2>&1").c_str());
  std::ifstream in(log);
  std::string line;
  last_line.clear();
  while (std::getline(in, line))
    if (!line.empty()) last_line = line;
  return status;
}

struct BinStats {
  std::int64_t n = 0;
  double sx = 0, sy = 0, sz = 0, sxx = 0, syy = 0, szz = 0;
};

}  // namespace

void add_spline3d_options(CLI::App& cmd, Spline3dBenchOptions& o) {
  cmd.add_option("--dir", o.dir, "folder for the beads, calibrations, movie and localizations")->default_val(o.dir);
  cmd.add_option("--fit2d", o.fit2d, "fit2d to run [default: the one beside bench]");
  cmd.add_option("--device", o.device, "fit2d's --device for the movie fits")->default_val(o.device);
  cmd.add_option("--beads", o.beads, "beads in the calibration stack")->default_val(o.beads)->check(CLI::Range(1, 20));
  cmd.add_option("--bead-z-range", o.bead_z_range_nm, "the bead stack spans ± this, nm")->default_val(o.bead_z_range_nm)
      ->check(CLI::Range(100.0, 3000.0));
  cmd.add_option("--z-step", o.z_step_nm, "the bead stack's z step, nm")->default_val(o.z_step_nm)->check(CLI::Range(1.0, 200.0));
  cmd.add_option("--bead-photons", o.bead_photons, "photons per bead per slice")->default_val(o.bead_photons)
      ->check(CLI::PositiveNumber);
  cmd.add_option("--z-range", o.z_range_nm, "emitters at z evenly spaced over ± this, nm (a multiple of 100)")
      ->default_val(o.z_range_nm)->check(CLI::Range(100.0, 3000.0));
  cmd.add_option("--frames", o.frames, "movie frames")->default_val(o.frames)->check(CLI::Range(1, 100000));
  cmd.add_option("--grid", o.grid, "emitters per side of the grid (grid² per frame, --spacing px apart)")
      ->default_val(o.grid)
      ->check(CLI::Range(1, 64));
  cmd.add_option("--spacing", o.spacing, "px between grid neighbours")->default_val(o.spacing)->check(CLI::Range(8, 64));
  cmd.add_option("--photons", o.photons, "photons per emitter per frame")->default_val(o.photons)->check(CLI::PositiveNumber);
  cmd.add_option("--background", o.background, "background photons per pixel")->default_val(o.background)
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--box", o.box, "fit2d's box for the movie (odd)")->default_val(o.box)->check(CLI::Range(7, 31));
  cmd.add_option("--recenter", o.recenter, "fit2d's --recenter for the spline fits (auto, off or px)")
      ->default_val(o.recenter);
  cmd.add_option("--exact-fits", o.exact_fits,
                 "ROIs per 100-nm bin fitted by maximum likelihood with the true pupil PSF itself (centred boxes): "
                 "the reference no calibration can beat; 0: none")
      ->default_val(o.exact_fits)
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{100000}));
}

void run_spline3d_bench(const Spline3dBenchOptions& o, std::ostream& out) {
  namespace fs = std::filesystem;
  const std::string fit2d = fit2d_path(o.fit2d);
  fs::create_directories(o.dir);
  const fs::path dir(o.dir);
  const auto path = [&](const char* name) { return (dir / name).string(); };
  const PupilPsfSettings pupil = astigmatic_pupil_settings(kPixelNm);

  // 1. Beads (bench itself in a process of its own: this run only reads the files the steps write).
  std::string last;
  std::error_code ec;
  const std::string bench = std::filesystem::canonical("/proc/self/exe", ec).string();
  const auto num = [](double v) {
    std::ostringstream t;
    t << v;
    return t.str();
  };
  const std::string optics = " --psf pupil --pixel-size " + num(kPixelNm) + " --background " + num(o.background);
  for (const char* f : {"beads.tif", "beads.yaml", "beads_truth.csv", "beads_emitters.csv"}) fs::remove(path(f));
  if (run_logged(quote(bench) + " --quiet --seed " + std::to_string(o.seed) + " simulate movie --z-stack" + optics +
                     " --width 160 --height 160 --photons " + num(o.bead_photons) + " --z-min " +
                     num(-o.bead_z_range_nm) + " --z-max " + num(o.bead_z_range_nm) + " --z-step " + num(o.z_step_nm) +
                     " --beads " + std::to_string(o.beads) + " -o " + quote(path("beads.tif")),
                 path("simulate_beads.log"), last) != 0)
    throw InputError(path("simulate_beads.log"), "bench simulate movie --z-stack failed: " + last);
  // 2. Calibrations.
  std::ostringstream step;
  step << o.z_step_nm;
  for (const char* f : {"psf.h5", "psf.png", "astig.json", "astig.png", "psf.h5.run.json", "astig.json.run.json"})
    fs::remove(path(f));
  const int spline_cal = run_logged(quote(fit2d) + " calibrate " + quote(path("beads.tif")) + " --z-step " + step.str() +
                                        " --model spline -o " + quote(path("psf.h5")),
                                    path("calibrate_spline.log"), last);
  out << "bench spline3d: beads " << path("beads.tif") << " (" << o.beads << " beads, ±" << o.bead_z_range_nm << " nm in "
      << o.z_step_nm << " nm steps, pupil NA " << pupil.na << ", " << pupil.wavelength_nm
      << " nm, Zernike (Noll: waves RMS) 6: 0.12, 8: 0.03, 11: 0.04)\n";
  out << "  spline calibration:     " << (spline_cal == 0 ? "ok" : "FAILED: " + last) << " (" << path("calibrate_spline.log")
      << ")\n";
  const int astig_cal = run_logged(quote(fit2d) + " calibrate " + quote(path("beads.tif")) + " --z-step " + step.str() +
                                       " --model astigmatic -o " + quote(path("astig.json")),
                                   path("calibrate_astig.log"), last);
  out << "  astigmatic calibration: " << (astig_cal == 0 ? "ok" : "FAILED: " + last) << " (" << path("calibrate_astig.log")
      << ")\n";
  // 3. The movie.
  for (const char* f : {"movie.tif", "movie.yaml", "movie_truth.csv", "movie_emitters.csv"}) fs::remove(path(f));
  const std::string edge = std::to_string(o.spacing * (o.grid + 1));  // the square frame's edge, px
  if (run_logged(quote(bench) + " --quiet --seed " + std::to_string(o.seed + 1) + " simulate movie" + optics +
                     " --structure grid --emitters " + std::to_string(o.grid * o.grid) + " --width " +
                     edge + " --height " + edge +
                     " --on-fraction 1 --z-even --frames " + std::to_string(o.frames) + " --photons " + num(o.photons) +
                     " --z-min " + num(-o.z_range_nm) + " --z-max " + num(o.z_range_nm) + " -o " + quote(path("movie.tif")),
                 path("simulate_movie.log"), last) != 0)
    throw InputError(path("simulate_movie.log"), "bench simulate movie --psf pupil failed: " + last);
  LocReadOptions read;
  read.pixel_size_nm = kPixelNm;
  const auto truth = read_localization_file(path("movie_truth.csv"), read).locs;
  std::map<std::int64_t, std::vector<std::size_t>> by_frame;
  for (std::size_t i = 0; i < truth.size(); ++i) by_frame[truth[i].frame].push_back(i);
  out << "  movie:                  " << path("movie.tif") << " (" << o.frames << " frames of " << o.grid * o.grid
      << " emitters, z evenly spaced over ±" << o.z_range_nm << " nm, " << o.photons << " photons, " << o.background
      << " background/px)\n";

  // 5. The bound of the true PSF per bin, and the maximum likelihood with that PSF (step 6), from one table of it
  // on a 2 nm grid: ±400 nm beyond the emitters' range, where a fit's z may wander (the table's samples do not
  // depend on its range).
  const int bins = static_cast<int>(std::lround(2 * o.z_range_nm / 100));
  std::vector<std::array<double, 3>> crb(static_cast<std::size_t>(bins));
  std::vector<ExactFitStats> exact(static_cast<std::size_t>(bins));
  {
    PupilPsfSettings fine = pupil;
    fine.table_step_nm = 2;
    const PupilPsf psf(fine, -o.z_range_nm - 400, o.z_range_nm + 400);
    const double c = (o.box - 1) / 2.0;
    const double sub[4][2] = {{0, 0}, {0.25, 0.5}, {0.5, 0.25}, {-0.25, -0.25}};
    for (int b = 0; b < bins; ++b) {
      std::array<double, 3> sum{0, 0, 0};
      int n = 0;
      for (int k = 0; k < 10; ++k)
        for (const auto& s : sub) {
          const auto v = pupil_crb(psf, o.box, c + s[0], c + s[1], -o.z_range_nm + 100 * b + 10 * (k + 0.5), o.photons,
                                   o.background);
          for (int a = 0; a < 3; ++a) sum[static_cast<std::size_t>(a)] += v[static_cast<std::size_t>(a)];
          ++n;
        }
      crb[static_cast<std::size_t>(b)] = {std::sqrt(sum[0] / n) * kPixelNm, std::sqrt(sum[1] / n) * kPixelNm,
                                          std::sqrt(sum[2] / n)};
      if (o.exact_fits > 0)
        exact[static_cast<std::size_t>(b)] =
            exact_pupil_mle(psf, o.box, -o.z_range_nm + 100 * b, -o.z_range_nm + 100 * (b + 1), o.photons,
                            o.background, o.exact_fits, o.seed + static_cast<std::uint64_t>(b));
    }
  }

  // 4. Fits and their errors per bin.
  for (const auto& [model, calibration] : {std::pair{"astigmatic", "astig.json"}, std::pair{"spline", "psf.h5"}}) {
    const std::string locs = path((std::string("locs_") + model + ".csv").c_str());
    fs::remove(locs);
    fs::remove(locs + ".yaml");
    const int status =
        (model == std::string("astigmatic") ? astig_cal : spline_cal) != 0
            ? -1
            : run_logged(quote(fit2d) + " " + quote(path("movie.tif")) + " --calibration " + quote(path(calibration)) +
                             " --box " + std::to_string(o.box) + " --device " + quote(o.device) +
                             (model == std::string("spline") ? " --recenter " + quote(o.recenter) : std::string()) +
                             " -o " + quote(locs),
                         path((std::string("fit_") + model + ".log").c_str()), last);
    out << "\n" << model << " (fit2d --calibration " << calibration << "): ";
    if (status != 0) {
      out << "no fit: " << (status == -1 ? std::string("its calibration failed") : last) << "\n";
      continue;
    }
    const auto found = read_localization_file(locs, read).locs;
    std::vector<BinStats> stats(static_cast<std::size_t>(bins));
    double mx = 0, my = 0;
    std::int64_t matched = 0;
    struct Match {
      double zt, dx, dy, dz;
    };
    std::vector<Match> matches;
    for (const auto& l : found) {
      const auto it = by_frame.find(l.frame);
      if (it == by_frame.end()) continue;
      double best = 250 / kPixelNm;
      const Localization* t = nullptr;
      for (const std::size_t i : it->second) {
        const double d = std::hypot(truth[i].x - l.x, truth[i].y - l.y);
        if (d < best) best = d, t = &truth[i];
      }
      if (!t) continue;
      matches.push_back({t->z, (l.x - t->x) * kPixelNm, (l.y - t->y) * kPixelNm, l.z - t->z});
      mx += matches.back().dx;
      my += matches.back().dy;
      ++matched;
    }
    if (matched == 0) {
      out << "no localization matched the truth\n";
      continue;
    }
    mx /= static_cast<double>(matched);
    my /= static_cast<double>(matched);
    for (const auto& m : matches) {
      const int b = std::clamp(static_cast<int>(std::floor((m.zt + o.z_range_nm) / 100)), 0, bins - 1);
      auto& s = stats[static_cast<std::size_t>(b)];
      ++s.n;
      s.sx += m.dx - mx, s.sy += m.dy - my, s.sz += m.dz;
      s.sxx += (m.dx - mx) * (m.dx - mx), s.syy += (m.dy - my) * (m.dy - my), s.szz += m.dz * m.dz;
    }
    out << matched << " of " << truth.size() << " emitters matched (" << found.size()
        << " localizations); x, y about the mean offset (" << mx << ", " << my << ") nm\n";
    out << "  z bin [nm]        n   x RMS   y RMS   z RMS  z bias |  CRB x   CRB y   CRB z | RMS/CRB x     y     z\n";
    for (int b = 0; b < bins; ++b) {
      const auto& s = stats[static_cast<std::size_t>(b)];
      const auto& c = crb[static_cast<std::size_t>(b)];
      const double n = std::max<double>(1, static_cast<double>(s.n));
      const double rx = std::sqrt(s.sxx / n), ry = std::sqrt(s.syy / n), rz = std::sqrt(s.szz / n), bz = s.sz / n;
      char line[256];
      std::snprintf(line, sizeof line,
                    "  %5.0f..%5.0f %7lld %7.2f %7.2f %7.2f %7.2f | %6.2f  %6.2f  %6.2f |      %5.2f %5.2f %5.2f\n",
                    -o.z_range_nm + 100 * b, -o.z_range_nm + 100 * (b + 1), static_cast<long long>(s.n), rx, ry, rz, bz,
                    c[0], c[1], c[2], rx / c[0], ry / c[1], rz / c[2]);
      out << line;
    }
  }
  if (o.exact_fits > 0) {
    out << "\nmaximum likelihood with the true pupil PSF itself (" << o.exact_fits
        << " centred boxes per bin, started from the truth and every 200 nm, best likelihood kept): the bound is "
           "asymptotic, and no calibration's fit can be expected to beat this\n"
        << "  z bin [nm]        n   x RMS   y RMS   z RMS  z bias  >150nm | RMS/CRB x     y     z\n";
    for (int b = 0; b < bins; ++b) {
      const auto& e = exact[static_cast<std::size_t>(b)];
      const auto& c = crb[static_cast<std::size_t>(b)];
      const double rx = e.rms_x_px * kPixelNm, ry = e.rms_y_px * kPixelNm;
      char line[256];
      std::snprintf(line, sizeof line, "  %5.0f..%5.0f %7lld %7.2f %7.2f %7.2f %7.2f %7lld |      %5.2f %5.2f %5.2f\n",
                    -o.z_range_nm + 100 * b, -o.z_range_nm + 100 * (b + 1), static_cast<long long>(e.fits), rx, ry,
                    e.rms_z_nm, e.bias_z_nm, static_cast<long long>(e.far), rx / c[0], ry / c[1], e.rms_z_nm / c[2]);
      out << line;
    }
  }
  out << "\n(files in " << o.dir << "; CRB: Poisson, the true pupil PSF over the " << o.box << "x" << o.box
      << " box, θ = x, y, z, photons, background; RMS in nm)\n";
}

}  // namespace nanoscopy
