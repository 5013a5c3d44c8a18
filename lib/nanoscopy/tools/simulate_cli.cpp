#include "nanoscopy/tools/simulate_cli.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/io/table_writer.hpp"

namespace nanoscopy {

void add_movie_options(CLI::App& cmd, MovieCliOptions& o) {
  auto& s = o.settings;
  cmd.add_option("-o,--output", o.output, "output stack (.tif or .h5)")->default_val(o.output);
  cmd.add_option("--frames", s.frames, "number of frames")->default_val(s.frames)->check(CLI::Range(1, 100000000));
  cmd.add_option("--width", s.width, "frame width in pixels")->default_val(s.width)->check(CLI::Range(4, 65536));
  cmd.add_option("--height", s.height, "frame height in pixels")->default_val(s.height)->check(CLI::Range(4, 65536));
  cmd.add_option("--emitters", s.emitters, "number of emitters")->default_val(s.emitters)->check(CLI::Range(0, 10000000));
  cmd.add_option("--on-fraction", s.on_fraction, "mean fraction of frames an emitter is on")
      ->default_val(s.on_fraction)->check(CLI::Range(0.0, 1.0));
  cmd.add_option("--photons", s.photons, "photons per frame of an emitter that is on")->default_val(s.photons)->check(CLI::PositiveNumber);
  cmd.add_option("--psf-sigma", s.psf_sigma, "PSF standard deviation in pixels")->default_val(s.psf_sigma)->check(CLI::PositiveNumber);
  cmd.add_option("--background", s.background, "background photons per pixel")->default_val(s.background)->check(CLI::NonNegativeNumber);
  cmd.add_option("--pixel-size", s.pixel_size_nm, "pixel size in nm")->default_val(s.pixel_size_nm)->check(CLI::PositiveNumber);
  cmd.add_option("--structure", s.structure, "emitter positions: random, or a grid")->default_val(s.structure)
      ->check(CLI::IsMember({"random", "grid"}));
  cmd.add_option("--markers", s.markers, "fiducial markers: always on, 3x as bright")->default_val(s.markers)->check(CLI::Range(0, 100000));
  cmd.add_option("--drift-x", s.drift_x, "stage drift in x, px per frame")->default_val(s.drift_x);
  cmd.add_option("--drift-y", s.drift_y, "stage drift in y, px per frame")->default_val(s.drift_y);
}

void run_simulate_movie(MovieCliOptions o, std::uint64_t seed, bool quiet) {
  o.settings.seed = seed;
  OutputGroup outputs;  // the movie and its truth appear together
  const auto truth = simulate_movie(o.settings, o.output);
  const std::filesystem::path out(o.output);
  const auto truth_path = (out.parent_path() / (out.stem().string() + "_truth.csv")).string();
  auto table = create_csv_writer(truth_path, {{"frame", ColumnType::u32}, {"x [px]", ColumnType::f64},
                                              {"y [px]", ColumnType::f64}, {"photons", ColumnType::f64}});
  std::vector<double> rows;
  rows.reserve(truth.size() * 4);
  for (const auto& t : truth) rows.insert(rows.end(), {static_cast<double>(t.frame), t.x, t.y, t.photons});
  table->append(rows);
  table->finish();
  outputs.commit();
  if (!quiet)
    std::cerr << "wrote " << o.output << " (" << o.settings.frames << " frames of " << o.settings.width << "x"
              << o.settings.height << ", " << truth.size() << " emitter images) and " << truth_path << "\n";
}

void add_blinking_options(CLI::App& cmd, BlinkingCliOptions& o) {
  auto& s = o.settings;
  cmd.add_option("-o,--output", o.output, "output stack (.tif or .h5)")->default_val(o.output);
  cmd.add_option("--frames", s.frames, "number of frames")->default_val(s.frames)->check(CLI::Range(1, 100000000));
  auto* size = cmd.add_option("--size", o.size, "square frames of this edge in pixels")->check(CLI::Range(4, 65536));
  auto* width = cmd.add_option("--width", s.width, "frame width in pixels")->default_val(s.width)->check(CLI::Range(4, 65536));
  auto* height = cmd.add_option("--height", s.height, "frame height in pixels")->default_val(s.height)->check(CLI::Range(4, 65536));
  size->excludes(width)->excludes(height);
  cmd.add_option("--pixel-size", s.pixel_size_nm, "pixel size in nm")->default_val(s.pixel_size_nm)->check(CLI::PositiveNumber);
  cmd.add_option("--structure", s.structure, "emitter positions: random points, straight filaments (lines) or circles (rings)")
      ->default_val(s.structure)->check(CLI::IsMember({"random", "lines", "rings"}));
  auto* emitters = cmd.add_option("--emitters", s.emitters, "number of emitters")->default_val(s.emitters)
      ->check(CLI::Range(0, 10000000));
  cmd.add_option("--density", s.density, "emitters per µm² (instead of --emitters)")->check(CLI::NonNegativeNumber)
      ->excludes(emitters);
  cmd.add_option("--filaments", s.filaments, "lines: number of filaments (0: one per 40 emitters)")->default_val(s.filaments)
      ->check(CLI::Range(0, 1000000));
  cmd.add_option("--rings", s.rings, "rings: number of rings (0: one per 12 emitters)")->default_val(s.rings)
      ->check(CLI::Range(0, 1000000));
  cmd.add_option("--ring-radius-min", s.ring_radius_min_nm, "rings: smallest radius, nm")->default_val(s.ring_radius_min_nm)
      ->check(CLI::PositiveNumber);
  cmd.add_option("--ring-radius-max", s.ring_radius_max_nm, "rings: largest radius, nm")->default_val(s.ring_radius_max_nm)
      ->check(CLI::PositiveNumber);
  cmd.add_option("--blinking", s.blinking, "on/off durations: exponential, or power-law (quantum dots)")
      ->default_val(s.blinking)->check(CLI::IsMember({"exponential", "power-law"}));
  cmd.add_option("--mean-on", s.mean_on_frames, "exponential: mean on time, frames")->default_val(s.mean_on_frames)
      ->check(CLI::PositiveNumber);
  cmd.add_option("--mean-off", s.mean_off_frames, "exponential: mean off time, frames")->default_val(s.mean_off_frames)
      ->check(CLI::PositiveNumber);
  cmd.add_option("--alpha-on", s.alpha_on, "power-law: tail exponent μ of on times, P(τ>t) = (t_min/t)^μ")
      ->default_val(s.alpha_on)->check(CLI::PositiveNumber);
  cmd.add_option("--alpha-off", s.alpha_off, "power-law: tail exponent μ of off times")->default_val(s.alpha_off)
      ->check(CLI::PositiveNumber);
  cmd.add_option("--t-min", s.power_law_min_frames, "power-law: shortest on/off time, frames")
      ->default_val(s.power_law_min_frames)->check(CLI::PositiveNumber);
  cmd.add_option("--t-max", s.power_law_max_frames, "power-law: cap on on/off times, frames")
      ->default_val(s.power_law_max_frames)->check(CLI::PositiveNumber);
  cmd.add_option("--bleach-frames", s.bleach_frames, "mean on-time before bleaching, frames (0: never)")
      ->default_val(s.bleach_frames)->check(CLI::NonNegativeNumber);
  cmd.add_option("--photon-budget", s.photon_budget, "mean photons emitted before bleaching (0: unlimited)")
      ->default_val(s.photon_budget)->check(CLI::NonNegativeNumber);
  cmd.add_option("--brightness", s.brightness, "photons per frame while on")->default_val(s.brightness)
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--psf-sigma", s.psf_sigma, "PSF standard deviation in pixels")->default_val(s.psf_sigma)
      ->check(CLI::PositiveNumber);
  cmd.add_option("--background", s.background, "background photons per pixel per frame")->default_val(s.background)
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--em-gain", s.em_gain, "EM gain (1: none)")->default_val(s.em_gain)->check(CLI::Range(1.0, 10000.0));
  cmd.add_option("--read-noise", s.read_noise, "read noise, e- rms")->default_val(s.read_noise)->check(CLI::NonNegativeNumber);
  cmd.add_option("--baseline", s.baseline, "camera offset, ADU")->default_val(s.baseline)->check(CLI::Range(0.0, 65535.0));
  cmd.add_option("--sensitivity", s.sensitivity, "e- per ADU")->default_val(s.sensitivity)->check(CLI::PositiveNumber);
  cmd.add_flag("--noise-free", s.noise_free, "no shot, EM or read noise: each pixel its expected value");
  cmd.add_option("--truth-upsample", s.truth_upsample, "the truth image's grid: camera grid x this")
      ->default_val(s.truth_upsample)->check(CLI::Range(1, 64));
}

void run_simulate_blinking(BlinkingCliOptions o, std::uint64_t seed, bool quiet) {
  auto& s = o.settings;
  s.seed = seed;
  if (o.size > 0) s.width = s.height = o.size;
  OutputGroup outputs;  // the stack, its emitters, truth and mean images appear together
  const auto r = simulate_blinking(s, o.output, quiet);
  outputs.commit();
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(o.output, ec);
  char line[200];
  std::snprintf(line, sizeof line, "%lld frames of %lldx%lld, %lld emitters (%s), mean on-fraction %.3f, %.1f MB",
                static_cast<long long>(s.frames), static_cast<long long>(s.width), static_cast<long long>(s.height),
                static_cast<long long>(r.emitters), s.structure.c_str(), r.mean_on_fraction,
                ec ? 0.0 : static_cast<double>(bytes) / 1e6);
  std::cout << "wrote " << o.output << ": " << line
            << (r.bleached > 0 ? ", " + std::to_string(r.bleached) + " bleached" : std::string())
            << "; truth " << r.emitters_csv << ", " << r.truth_image << ", " << r.mean_image << "\n";
}

}  // namespace nanoscopy
