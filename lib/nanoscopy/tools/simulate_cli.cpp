#include "nanoscopy/tools/simulate_cli.hpp"

#include <filesystem>
#include <iostream>

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
  if (!quiet)
    std::cerr << "wrote " << o.output << " (" << o.settings.frames << " frames of " << o.settings.width << "x"
              << o.settings.height << ", " << truth.size() << " emitter images) and " << truth_path << "\n";
}

}  // namespace nanoscopy
