// fit2d undrift (loc/undrift/): the parts against exact answers (sub-pixel
// peak, the pairs' solve with an outlier, the spline, the robust smoother);
// RCC against an imposed drift on simulated blinking emitters; the markers'
// smoothing against their raw per-frame trace and against RCC; the command's
// files read back; Picasso's own file; the bad inputs.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/loc/undrift/drift_model.hpp"
#include "nanoscopy/loc/undrift/fiducial.hpp"
#include "nanoscopy/loc/undrift/peak_fit.hpp"
#include "nanoscopy/loc/undrift/rcc.hpp"
#include "nanoscopy/loc/undrift/rcc_solve.hpp"
#include "nanoscopy/loc/undrift/segment_choice.hpp"
#include "support/test_support.hpp"

using namespace nanoscopy;
using namespace nanoscopy::test;

namespace {

constexpr double kPixelNm = 130.0;

CommandResult fit2d(const std::string& args) { return run_command(shell_quote(app_path("fit2d")) + " " + args); }

// The imposed drift, camera px per frame.
struct Truth {
  std::vector<double> dx, dy;
};

// Linear (about 150 nm over the run) plus a smooth random walk: a random walk
// of the velocity, so that the drift wanders (≈ 60 nm) without a per-frame
// jitter, which no segment-wise method could follow. `wobble_nm` adds an
// oscillation of 700 frames' period, faster than 500-frame segments resolve.
Truth make_drift(std::int64_t frames, std::uint64_t seed, double wobble_nm = 0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> kick(0.0, 1.0);
  Truth t;
  double vx = 0, vy = 0, x = 0, y = 0;
  const double sigma_v = 2.0e-6;  // px/frame per frame: ≈ 1 px of wander over 10,000 frames
  for (std::int64_t f = 0; f < frames; ++f) {
    vx += sigma_v * kick(rng);
    vy += sigma_v * kick(rng);
    x += vx;
    y += vy;
    const double w = wobble_nm / kPixelNm * std::sin(2.0 * M_PI * static_cast<double>(f) / 700.0);
    t.dx.push_back(1.2 * static_cast<double>(f) / static_cast<double>(frames) + x + w);
    t.dy.push_back(-0.6 * static_cast<double>(f) / static_cast<double>(frames) + y + 0.5 * w);
  }
  return t;
}

struct Sites {
  std::vector<double> x, y;
};

Sites make_sites(int count, double field_px, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(2.0, field_px - 2.0);
  Sites s;
  for (int k = 0; k < count; ++k) {
    s.x.push_back(u(rng));
    s.y.push_back(u(rng));
  }
  return s;
}

// Sites that blink on with probability `p_on` per frame, localized with
// precision `lp_px`, displaced by the drift; `markers` sites on in every frame
// with precision `marker_lp_px` (fiducial beads).
std::vector<Localization> simulate(const Sites& sites, const Truth& drift, double p_on, double lp_px,
                                   const Sites& markers, double marker_lp_px, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<Localization> locs;
  const auto frames = static_cast<std::int64_t>(drift.dx.size());
  for (std::int64_t f = 0; f < frames; ++f) {
    const auto fi = static_cast<std::size_t>(f);
    const auto add = [&](double x, double y, double lp) {
      Localization l;
      l.frame = f;
      l.x = x + drift.dx[fi] + lp * g(rng);
      l.y = y + drift.dy[fi] + lp * g(rng);
      l.lpx = l.lpy = lp;
      l.photons = 1000;
      l.sigma = 1.2;
      locs.push_back(l);
    };
    for (std::size_t k = 0; k < sites.x.size(); ++k)
      if (u(rng) < p_on) add(sites.x[k], sites.y[k], lp_px);
    for (std::size_t k = 0; k < markers.x.size(); ++k) add(markers.x[k], markers.y[k], marker_lp_px);
  }
  return locs;
}

// RMS over the frames of estimate − truth after removing their mean difference (the free constant), nm.
double rms_error_nm(const DriftTrace& estimate, const Truth& truth) {
  const auto n = truth.dx.size();
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < n; ++i) {
    mx += estimate.dx[i] - truth.dx[i];
    my += estimate.dy[i] - truth.dy[i];
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double ex = estimate.dx[i] - truth.dx[i] - mx, ey = estimate.dy[i] - truth.dy[i] - my;
    s += ex * ex + ey * ey;
  }
  return std::sqrt(s / static_cast<double>(2 * n)) * kPixelNm;  // per axis
}

void write_locs(const std::filesystem::path& path, const std::vector<Localization>& locs, std::int64_t frames,
                std::int64_t side) {
  LocWriterContext c;
  c.camera.pixel_size_nm = kPixelNm;
  c.width = c.height = side;
  c.frames = frames;
  const auto counts = write_localizations(path.string(), "", c, locs);
  REQUIRE(counts.written == static_cast<std::int64_t>(locs.size()));
}

}  // namespace

TEST_CASE("undrift parts: sub-pixel peak, pairs with an outlier, spline, robust smoothing") {
  // A sampled Gaussian peak (σ 1.3 px, tilted a little) at (3.37, −2.81): the log-quadratic fit finds it.
  CorrelationPeak p;
  p.found = true;
  p.shift_x = 3;
  p.shift_y = -3;
  for (int v = -2; v <= 2; ++v)
    for (int u = -2; u <= 2; ++u) {
      const double dx = u - 0.37, dy = v - 0.19;
      p.window[static_cast<std::size_t>((v + 2) * 5 + u + 2)] =
          50.0 * std::exp(-(dx * dx + dy * dy + 0.3 * dx * dy) / (2 * 1.3 * 1.3));
    }
  const SubpixelShift s = fit_correlation_peak(p);
  CHECK(s.ok);
  CHECK(s.x == doctest::Approx(3.37).epsilon(1e-9));
  CHECK(s.y == doctest::Approx(-2.81).epsilon(1e-9));

  // Six segments with drifts d; every pair measures d_j − d_i, one pair is 5 px off: it is dropped, the rest exact.
  const std::vector<double> d{0, 0.3, 0.7, 0.8, 1.4, 2.0};
  std::vector<PairShift> pairs;
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0.0, 0.01);
  for (std::int64_t i = 0; i < 6; ++i)
    for (std::int64_t j = i + 1; j < 6; ++j)
      pairs.push_back({i, j, d[j] - d[i] + noise(rng), -(d[j] - d[i]) + noise(rng), true});
  pairs[7].x += 5.0;
  const RccSolution r = solve_rcc(6, pairs, 0);
  CHECK(r.dropped == 1);
  CHECK_FALSE(r.used[7]);
  for (std::size_t k = 0; k < 6; ++k) {
    CHECK(r.solved[k]);
    CHECK(std::abs(r.dx[k] - d[k]) < 0.02);
    CHECK(std::abs(r.dy[k] + d[k]) < 0.02);
  }
  // A segment with no usable pair is left unsolved; the others still are.
  for (PairShift& q : pairs)
    if (q.i == 5 || q.j == 5) q.valid = false;
  const RccSolution r5 = solve_rcc(6, pairs, 0);
  CHECK_FALSE(r5.solved[5]);
  CHECK(r5.solved[4]);

  // A straight line through the samples is followed exactly, inside and beyond them.
  const std::vector<double> t{10, 35, 60, 85}, v{1, 2, 3, 4};
  const auto line = interpolate_samples(t, v, 100);
  for (std::int64_t f = 0; f < 100; ++f) CHECK(line[static_cast<std::size_t>(f)] == doctest::Approx(1 + (f - 10) / 25.0));

  // The robust smoother keeps a line and ignores a wild frame.
  std::vector<double> values(300), weights(300, 1.0);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.01 * static_cast<double>(i);
  values[150] = 50.0;
  weights[20] = 0.0;
  values[20] = -1e9;  // carries no weight
  const auto smooth = robust_smooth(values, weights, 31);
  for (std::size_t i = 0; i < values.size(); ++i) CHECK(smooth[i] == doctest::Approx(0.01 * static_cast<double>(i)).epsilon(1e-6));
}

TEST_CASE("RCC recovers an imposed drift (linear + smooth random walk) within 2 nm RMS") {
  // 10,000 frames, 400 sites on a 40 px field, each on in 5 % of the frames: 200,000 localizations,
  // precision 0.08 px (10 nm); 20 segments of 500 frames.
  const std::int64_t frames = 10000;
  const Truth truth = make_drift(frames, 11);
  const Sites sites = make_sites(400, 40, 12);
  const auto locs = simulate(sites, truth, 0.05, 0.08, {}, 0, 13);
  RccSettings s;
  s.segment_frames = 500;
  const RccResult r = undrift_rcc(locs, frames, s, "simulated");
  CHECK(r.segments.size() == 20);
  CHECK(r.pairs == 190);
  const double error = rms_error_nm(r.trace, truth);
  MESSAGE("RCC: " << locs.size() << " localizations, RMS error " << error << " nm per axis, " << r.pairs_dropped
                  << " pairs dropped, grid " << r.geometry.width << " x " << r.geometry.height);
  CHECK(error < 2.0);
  // The drift's own size, for scale: far above the error.
  CHECK(rms_error_nm(DriftTrace{std::vector<double>(frames, 0.0), std::vector<double>(frames, 0.0), {}}, truth) > 30.0);
}

TEST_CASE("markers: smoothing takes the per-frame noise below RCC's error on the same data; combined beats RCC") {
  // As above with a 10 nm oscillation of 700 frames' period (faster than 500-frame segments) and three beads
  // seen in every frame with 0.15 px (20 nm) per-frame precision.
  const std::int64_t frames = 10000;
  const Truth truth = make_drift(frames, 21, 10.0);
  const Sites sites = make_sites(400, 40, 22);
  Sites beads;
  beads.x = {6, 20, 33};
  beads.y = {30, 8, 21};
  const auto locs = simulate(sites, truth, 0.05, 0.08, beads, 0.15, 23);
  RccSettings s;
  s.segment_frames = 500;
  const RccResult rcc = undrift_rcc(locs, frames, s, "simulated");
  const FiducialDrift f = fiducial_drift(locs, frames, TrackSettings{}, 100, "simulated");
  CHECK(f.summary.markers == 3);
  const DriftTrace combined = combine_drift(rcc.trace, f.raw, 100);
  const double e_rcc = rms_error_nm(rcc.trace, truth), e_raw = rms_error_nm(f.raw, truth),
               e_smooth = rms_error_nm(f.smooth, truth), e_combined = rms_error_nm(combined, truth);
  MESSAGE("RMS error per axis: RCC " << e_rcc << " nm, markers raw " << e_raw << " nm, smoothed " << e_smooth
                                     << " nm, combined " << e_combined << " nm");
  CHECK(e_raw > 8.0);              // 20 nm / √3 per frame
  CHECK(e_smooth < e_raw / 4.0);   // the smoothing's gain
  CHECK(e_smooth < e_rcc);         // the oscillation is beyond RCC's segments
  CHECK(e_combined < e_rcc);
  CHECK(e_combined < 2.5);
}

TEST_CASE("fit2d undrift: corrected localizations in both formats, drift.txt, drift.csv and the plot") {
  TempDir dir;
  const std::int64_t frames = 4000;
  const Truth truth = make_drift(frames, 31);
  const Sites sites = make_sites(200, 40, 32);
  const auto locs = simulate(sites, truth, 0.05, 0.08, {}, 0, 33);
  write_locs(dir / "in.hdf5", locs, frames, 48);
  for (const std::string ext : {".hdf5", ".csv"}) {
    const auto out = dir / ("undrifted" + ext);
    const auto r = fit2d("undrift " + shell_quote((dir / "in.hdf5").string()) + " -o " + shell_quote(out.string()) +
                         " --segment 400 --quiet");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.output, "10 segments"));
    // Corrected localizations: each within a few precisions of its site (the drift is ≈ 1.3 px).
    const auto back = read_localization_file(out.string());
    REQUIRE(back.locs.size() == locs.size());
    double mx = 0, my = 0;
    std::vector<double> ex, ey;
    for (std::size_t i = 0; i < locs.size(); ++i) {
      const auto fi = static_cast<std::size_t>(locs[i].frame);
      ex.push_back(back.locs[i].x - (locs[i].x - truth.dx[fi]));
      ey.push_back(back.locs[i].y - (locs[i].y - truth.dy[fi]));
      mx += ex.back();
      my += ey.back();
    }
    mx /= static_cast<double>(ex.size());
    my /= static_cast<double>(ey.size());
    double s = 0;
    for (std::size_t i = 0; i < ex.size(); ++i) s += (ex[i] - mx) * (ex[i] - mx) + (ey[i] - my) * (ey[i] - my);
    CHECK(std::sqrt(s / (2.0 * static_cast<double>(ex.size()))) * kPixelNm < 3.0);

    // drift.txt: one "dx dy" line per frame, as fit2d --track writes it; drift.csv in nm with the same numbers.
    std::ifstream txt(dir / ("undrifted_drift.txt"));
    std::ifstream csv(dir / ("undrifted_drift.csv"));
    std::string header;
    std::getline(csv, header);
    CHECK(header == "frame,dx [nm],dy [nm]");
    std::int64_t rows = 0;
    std::string tline, cline;
    while (std::getline(txt, tline)) {
      REQUIRE(std::getline(csv, cline));
      std::istringstream ts(tline);
      double dx = 0, dy = 0;
      ts >> dx >> dy;
      REQUIRE(ts);
      double frame = 0, cx = 0, cy = 0;
      char comma = 0;
      std::istringstream cs(cline);
      cs >> frame >> comma >> cx >> comma >> cy;
      CHECK(frame == static_cast<double>(rows));
      CHECK(std::abs(cx - dx * kPixelNm) < 1e-3);  // the .txt has 6 decimals of a px
      CHECK(std::abs(cy - dy * kPixelNm) < 1e-3);
      ++rows;
    }
    CHECK(rows == frames);
    const std::string png = read_file(dir / "undrifted_drift.png");
    REQUIRE(png.size() > 1000);
    CHECK(png.substr(1, 3) == "PNG");
  }
  // Fiducial and combined modes run on the same file with beads.
  Sites beads;
  beads.x = {10, 30};
  beads.y = {12, 25};
  write_locs(dir / "beads.hdf5", simulate(sites, truth, 0.05, 0.08, beads, 0.1, 34), frames, 48);
  for (const std::string method : {"fiducial", "combined"}) {
    const auto out = dir / (method + ".hdf5");
    const auto r = fit2d("undrift " + shell_quote((dir / "beads.hdf5").string()) + " -o " + shell_quote(out.string()) +
                         " --segment 400 --method " + method + " --smooth 50");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.output, "markers:            2"));
    std::ifstream csv(dir / (method + "_drift.csv"));
    std::string header;
    std::getline(csv, header);
    CHECK(header == "frame,dx [nm],dy [nm],markers");
  }
}

TEST_CASE("fit2d undrift on Picasso's own file (1,000 frames, 10 segments of 100)") {
  TempDir dir;
  const auto picasso = peer_file("picasso_testdata_locs.hdf5").string();
  const auto out = (dir / "undrifted.hdf5").string();
  const auto r = fit2d("undrift " + shell_quote(picasso) + " -o " + shell_quote(out) + " --segment 100");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(read_localization_file(out).locs.size() > 0);
  CHECK(std::filesystem::exists(dir / "undrifted_drift.txt"));
  CHECK(std::filesystem::exists(dir / "undrifted_drift.png"));
}

TEST_CASE("fit2d undrift: bad inputs are one-line errors naming the file, and leave nothing") {
  TempDir dir;
  const auto run = [&](const std::filesystem::path& in, const std::string& extra = "") {
    return fit2d("undrift " + shell_quote(in.string()) + " -o " + shell_quote((dir / "out.csv").string()) +
                 " --pixel-size 100 " + extra);
  };
  write_file(dir / "noframe.csv", "\"id\",\"x [nm]\",\"y [nm]\"\n1,100,200\n2,110,210\n");
  check_one_line_error(run(dir / "noframe.csv"), "fit2d", 3, "noframe.csv", "no frame column");
  write_file(dir / "empty.csv", "\"id\",\"frame\",\"x [nm]\",\"y [nm]\"\n");
  check_one_line_error(run(dir / "empty.csv"), "fit2d", 3, "empty.csv", "no localizations");
  write_file(dir / "one.csv", "\"id\",\"frame\",\"x [nm]\",\"y [nm]\"\n1,1,100,200\n");
  check_one_line_error(run(dir / "one.csv"), "fit2d", 3, "one.csv", "one localization");
  // 1,200 frames are one segment of 1,000 (Picasso's rounding): RCC needs two.
  std::string rows = "\"id\",\"frame\",\"x [nm]\",\"y [nm]\"\n";
  for (int k = 0; k < 1200; ++k) rows += std::to_string(k + 1) + "," + std::to_string(k + 1) + ",1000,2000\n";
  write_file(dir / "short.csv", rows);
  check_one_line_error(run(dir / "short.csv", "--segment 1000"), "fit2d", 2, "short.csv", "give a smaller --segment");
  check_one_line_error(run(dir / "short.csv", "--segment 12x"), "fit2d", 2, "--segment", "auto, or frames");
  // No marker: a point that moves 10 px every frame is never tracked.
  rows = "\"id\",\"frame\",\"x [nm]\",\"y [nm]\"\n";
  for (int k = 0; k < 300; ++k) rows += std::to_string(k + 1) + "," + std::to_string(k + 1) + "," + std::to_string(1000 * (k % 30)) + ",2000\n";
  write_file(dir / "nomarker.csv", rows);
  check_one_line_error(run(dir / "nomarker.csv", "--method fiducial"), "fit2d", 3, "nomarker.csv", "marker");
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    CHECK(e.path().extension() == ".csv");
  CHECK_FALSE(std::filesystem::exists(dir / "out.csv"));
}

// By hand (docs/benchmarks.md): tests/test_loc_undrift --no-skip -tc='*benchmark*'
TEST_CASE("undrift benchmark: RMS error and time vs localizations (256 px field, 20,000 frames)" * doctest::skip()) {
  const std::int64_t frames = 20000;
  const Truth truth = make_drift(frames, 41);
  const Sites sites = make_sites(5000, 256, 42);
  for (const double n : {1e4, 3e4, 1e5, 3e5, 1e6}) {
    const auto locs = simulate(sites, truth, n / (5000.0 * static_cast<double>(frames)), 0.08, {}, 0, 43);
    for (const std::int64_t segment : {1000, 500}) {
      RccSettings s;
      s.segment_frames = segment;
      const auto start = std::chrono::steady_clock::now();
      const RccResult r = undrift_rcc(locs, frames, s, "benchmark");
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      MESSAGE(locs.size() << " localizations, " << r.segments.size() << " segments of " << segment << ": RMS error "
                          << rms_error_nm(r.trace, truth) << " nm per axis, " << seconds << " s, grid "
                          << r.geometry.width << " x " << r.geometry.height << " of " << r.grid_pixel_px * kPixelNm
                          << " nm, spectra " << static_cast<double>(r.spectrum_bytes) / 1048576.0 << " MB, dropped "
                          << r.pairs_dropped << " of " << r.pairs);
    }
    if (n < 1e6) continue;
    // The command end to end: read the Picasso HDF5, undrift, write it and the drift files.
    TempDir dir;
    write_locs(dir / "in.hdf5", locs, frames, 262);
    const auto start = std::chrono::steady_clock::now();
    const auto r = fit2d("undrift " + shell_quote((dir / "in.hdf5").string()) + " -o " +
                         shell_quote((dir / "out.hdf5").string()) + " --quiet");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(r.exit_code == 0);
    MESSAGE("fit2d undrift, " << locs.size() << " localizations (Picasso HDF5 in and out): " << seconds << " s\n"
                              << r.output);
  }
}

TEST_CASE("fit2d undrift changes x and y only: the camera, every other column and its dtype carried, nothing added") {
  if (!python_available()) return;
  TempDir dir;
  // A Picasso MLE file (no chi2, no status: undrift wrote chi2 = 0 and status = 1 on every row before) with
  // group, log_likelihood, *_unc and a user's columns, and Sensitivity 0.5 in its .yaml.
  const auto in = (dir / "in.hdf5").string();
  const auto made = run_python("locs_carried.py", {"make", peer_file("picasso_testdata_locs.hdf5").string(), in});
  REQUIRE_MESSAGE(made.exit_code == 0, made.output);
  const auto out = (dir / "undrifted.hdf5").string();
  const auto r = fit2d("undrift " + shell_quote(in) + " -o " + shell_quote(out) + " --segment 100");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const auto check = run_python("locs_carried.py", {"check", in, out, "undrift"});
  INFO(check.output);
  CHECK(check.exit_code == 0);
}

TEST_CASE("auto segment: the shortest holding enough localizations, at least 20 frames, at most 40 segments") {
  // Sparse: 5 per frame need 300 frames for 1500 localizations.
  RccSegmentChoice c = choose_rcc_segment(3000, 15000);
  CHECK(c.segment_frames == 300);
  CHECK(c.segments == 10);
  CHECK(contains(c.why, "300 frames"));
  CHECK(contains(c.why, "sharp correlation peak"));
  // Dense: 50 per frame would take 30 frames, but 3,000 frames make at most 40 segments of 75.
  c = choose_rcc_segment(3000, 150000);
  CHECK(c.segment_frames == 75);
  CHECK(c.segments == 40);
  CHECK(contains(c.why, "40"));
  // Very dense on a short movie: the shortest segment auto takes.
  c = choose_rcc_segment(400, 400000);
  CHECK(c.segment_frames == kAutoMinFrames);
  CHECK(c.segments == 20);
  // Too few localizations for two sharp peaks: two halves, and the line says so.
  c = choose_rcc_segment(400, 1000);
  CHECK(c.segment_frames == 200);
  CHECK(c.segments == 2);
  CHECK(contains(c.why, "may be poor"));
  // No localizations, or a movie of 3 frames: never a segment RCC cannot cut twice.
  CHECK(choose_rcc_segment(1000, 0).segments == 2);
  CHECK(choose_rcc_segment(3, 100).segment_frames == 1);
}

TEST_CASE("fit2d undrift, segment auto (the default): a 400-frame file that 1000-frame segments refuse") {
  TempDir dir;
  const std::int64_t frames = 400;
  const Truth truth = make_drift(frames, 41);
  const auto locs = simulate(make_sites(300, 40, 42), truth, 0.1, 0.08, {}, 0, 43);  // 30 per frame
  write_locs(dir / "in.hdf5", locs, frames, 48);
  const std::string in = shell_quote((dir / "in.hdf5").string()), out = shell_quote((dir / "out.hdf5").string());
  const auto refused = fit2d("undrift " + in + " -o " + out + " --segment 1000");
  CHECK(refused.exit_code == 2);
  CHECK(contains(refused.output, "no segment of 1000 frames"));
  const auto r = fit2d("undrift " + in + " -o " + out);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // About 12,000 localizations: 1,500 a segment are about 50 frames, 8 segments; said on stderr and in the .yaml.
  const RccSegmentChoice c = choose_rcc_segment(frames, static_cast<std::int64_t>(locs.size()));
  CHECK(c.segments == 8);
  const std::string segment = std::to_string(c.segment_frames);
  CHECK(contains(r.output, "segment auto: " + segment + " frames, 8 segments"));
  CHECK(contains(r.output, "8 segments of ~" + segment + " frames"));
  const std::string yaml = read_file(dir / "out.yaml");
  CHECK(contains(yaml, "Undrift segmentation: " + segment));
  CHECK(contains(yaml, "Undrift segment choice:"));
  CHECK(contains(yaml, "segment auto: " + segment + " frames"));
  // -q: no line on stderr.
  const auto quiet = fit2d("-q undrift " + in + " -o " + shell_quote((dir / "q.hdf5").string()));
  CHECK(quiet.exit_code == 0);
  CHECK_FALSE(contains(quiet.output, "segment auto"));
}

TEST_CASE("auto segment on a short movie with a curved drift beats 1000-frame segments") {
  // 3,000 frames, 400 sites on a 40 px field on 3 % of the frames (12 localizations per frame): a drift that
  // settles (250 nm (1 - exp(-t/800)) in x) and swings (40 nm sin(2 pi t / 2000) in y). Three 1000-frame
  // segments cannot follow it; auto takes 125-frame segments (24 segments).
  const std::int64_t frames = 3000;
  Truth truth;
  for (std::int64_t f = 0; f < frames; ++f) {
    const auto t = static_cast<double>(f);
    truth.dx.push_back(250.0 * (1.0 - std::exp(-t / 800.0)) / kPixelNm);
    truth.dy.push_back(40.0 * std::sin(2.0 * M_PI * t / 2000.0) / kPixelNm);
  }
  const auto locs = simulate(make_sites(400, 40, 52), truth, 0.03, 0.08, {}, 0, 53);
  const RccSegmentChoice choice = choose_rcc_segment(frames, static_cast<std::int64_t>(locs.size()));
  RccSettings s;
  s.segment_frames = choice.segment_frames;
  const double e_auto = rms_error_nm(undrift_rcc(locs, frames, s, "simulated").trace, truth);
  s.segment_frames = 1000;
  const double e_1000 = rms_error_nm(undrift_rcc(locs, frames, s, "simulated").trace, truth);
  MESSAGE(choice.why << "; RMS error per axis: auto " << e_auto << " nm, 1000-frame segments " << e_1000 << " nm");
  CHECK(choice.segments >= 10);
  CHECK(e_auto < 2.0);
  CHECK(e_auto < e_1000 / 3);
}
