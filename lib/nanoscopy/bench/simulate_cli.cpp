#include "nanoscopy/bench/simulate_cli.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <locale>
#include <sstream>

#include "nanoscopy/config.hpp"
#include "nanoscopy/core/astigmatism.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/camera_maps.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/core/sibling_path.hpp"
#include "nanoscopy/io/table_writer.hpp"
#include "nanoscopy/loc/undrift/drift_files.hpp"

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
  cmd.add_option("--structure", s.structure,
                 "emitter positions: random, a grid, straight filaments (lines, like microtubules) or circles "
                 "(rings, like nuclear pores); the positions are written to STEM_emitters.csv")
      ->default_val(s.structure)->check(CLI::IsMember({"random", "grid", "lines", "rings"}));
  cmd.add_option("--filaments", s.filaments, "lines: number of filaments (0: one per 40 emitters)")
      ->default_val(s.filaments)->check(CLI::Range(0, 1000000));
  cmd.add_option("--rings", s.rings, "rings: number of rings (0: one per 12 emitters)")->default_val(s.rings)
      ->check(CLI::Range(0, 1000000));
  cmd.add_option("--ring-radius-min", s.ring_radius_min_nm, "rings: smallest radius, nm")
      ->default_val(s.ring_radius_min_nm)->check(CLI::PositiveNumber);
  cmd.add_option("--ring-radius-max", s.ring_radius_max_nm, "rings: largest radius, nm")
      ->default_val(s.ring_radius_max_nm)->check(CLI::PositiveNumber);
  cmd.add_option("--markers", s.markers, "fiducial markers: always on, 3x as bright")->default_val(s.markers)->check(CLI::Range(0, 100000));
  cmd.add_option("--drift-x", s.drift_x, "stage drift in x, px per frame")->default_val(s.drift_x);
  cmd.add_option("--drift-y", s.drift_y, "stage drift in y, px per frame")->default_val(s.drift_y);
  cmd.add_option("--drift-linear", s.drift.linear_nm,
                 "steady drift, nm per 1000 frames, in the direction --drift-angle; the whole drift (with "
                 "--drift-walk, --drift-x/y) is written to STEM_drift.csv")
      ->default_val(s.drift.linear_nm);
  cmd.add_option("--drift-angle", s.drift.angle_deg, "direction of --drift-linear, degrees from +x towards +y")
      ->default_val(s.drift.angle_deg);
  cmd.add_option("--drift-walk", s.drift.walk_nm, "random-walk drift, nm per sqrt(frame) on each axis")
      ->default_val(s.drift.walk_nm)->check(CLI::NonNegativeNumber);
  // The camera.
  cmd.add_option("--camera", s.camera,
                 "poisson: shot noise only, ADU = baseline + e-/sensitivity; emccd: + gamma EM gain (excess noise 2) "
                 "and read noise; scmos: per-pixel offset, gain and read noise from maps (written as STEM_maps.h5)")
      ->default_val(s.camera)->check(CLI::IsMember({"poisson", "emccd", "scmos"}));
  cmd.add_option("--baseline", s.baseline, "camera offset, ADU (poisson, emccd)")->default_val(s.baseline)
      ->check(CLI::Range(0.0, 65535.0));
  cmd.add_option("--sensitivity", o.sensitivity, "e- per ADU (poisson, emccd) [default: 0.5; emccd: 10]")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--em-gain", s.em_gain, "emccd: EM gain")->default_val(s.em_gain)->check(CLI::Range(1.0, 10000.0));
  cmd.add_option("--read-noise", s.read_noise, "emccd: read noise after the EM gain, e- rms")->default_val(s.read_noise)
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--camera-maps", o.camera_maps,
                 "scmos: use these maps (maps.h5 with /offset, /gain [ADU/e-], /variance [ADU^2], or "
                 "offset.tif,gain.tif,variance.tif) instead of simulated ones")->type_name("MAPS");
  // Astigmatic 3D.
  cmd.add_flag("--astigmatic", o.astigmatic,
               "3D: astigmatic PSF, each emitter at a z uniform in [--z-min, --z-max], with the built-in calibration "
               "(foci at -250 and +250 nm, sigma0 130 nm, d 400 nm, valid -600..600 nm); writes STEM_astig.json and "
               "z in the truth");
  cmd.add_option("--calibration", o.calibration, "3D with this astigmatic calibration (JSON; implies --astigmatic)")
      ->type_name("ASTIG.json");
  cmd.add_option("--z-min", o.z_min, "3D: lowest z, nm [default: the calibration's range]");
  cmd.add_option("--z-max", o.z_max, "3D: highest z, nm [default: the calibration's range]");
  auto* z_stack = cmd.add_flag("--z-stack", s.z_stack,
                               "a bead z-stack for calibration (implies --astigmatic, or beads of --psf pupil): --beads always-on beads, frame t at "
                               "z = --z-min + t * --z-step up to --z-max (sets the number of frames)");
  z_stack->excludes(cmd.get_option("--frames"));
  cmd.add_flag("--z-even", s.z_even,
               "3D: the emitters' z evenly spaced over [--z-min, --z-max] (in random order) instead of uniform at "
               "random: every depth bin holds as many emitters (bench spline3d)");
  cmd.add_option("--z-step", o.z_step, "z-stack: z step between frames, nm [default: 10]")->check(CLI::PositiveNumber);
  cmd.add_option("--beads", o.beads, "z-stack: number of beads [default: 1; --psf pupil: 5]")->check(CLI::Range(1, 10000));
  cmd.add_option("--hot-pixels", s.hot_pixels, "this many hot pixels (the same in every frame), for calibration tests")
      ->default_val(s.hot_pixels)->check(CLI::Range(0, 100000000));
  cmd.add_option("--hot-pixel-photons", s.hot_pixel_photons, "extra photons per frame of a hot pixel")
      ->default_val(s.hot_pixel_photons)->check(CLI::NonNegativeNumber);
  // The pupil-function PSF.
  auto& p = o.pupil;
  cmd.add_option("--psf", o.psf,
                 "gaussian: the Gaussian (2D, or astigmatic with --astigmatic/--calibration); pupil: the scalar "
                 "pupil-function PSF (3D, not a Gaussian: defocus through the sample's index, Zernike aberrations; "
                 "emitters at z uniform in --z-min..--z-max [default -600..600 nm]; a --z-stack from -800 to 800 nm)")
      ->default_val(o.psf)->check(CLI::IsMember({"gaussian", "pupil"}));
  cmd.add_option("--na", p.na, "pupil: numerical aperture")->default_val(p.na)->check(CLI::Range(0.05, 1.7));
  cmd.add_option("--wavelength", p.wavelength_nm, "pupil: emission wavelength, nm")->default_val(p.wavelength_nm)
      ->check(CLI::Range(200.0, 2000.0));
  cmd.add_option("--n-immersion", p.n_immersion, "pupil: refractive index of the immersion medium")
      ->default_val(p.n_immersion)->check(CLI::Range(1.0, 2.5));
  cmd.add_option("--n-sample", p.n_sample, "pupil: refractive index of the sample (light beyond its critical angle "
                                          "does not reach an emitter: NA_eff = min(NA, n_sample))")
      ->default_val(p.n_sample)->check(CLI::Range(1.0, 2.5));
  cmd.add_option("--focus-depth", p.focus_depth_nm,
                 "pupil: depth of the focal plane in the sample, nm (the index mismatch's spherical aberration; 0: none)")
      ->default_val(p.focus_depth_nm)->check(CLI::Range(0.0, 100000.0));
  cmd.add_option("--zernike", o.zernike,
                 "pupil: aberrations as NOLL:WAVES_RMS,... (Noll index, amplitude in wavelengths RMS; 5/6 astigmatism, "
                 "7/8 coma, 11 spherical), or none [default: 6:0.12,8:0.03,11:0.04, so +z and -z differ]")
      ->type_name("LIST");
  cmd.add_option("--psf-half-width", p.half_width_px, "pupil: the PSF is drawn within this many px of the emitter")
      ->default_val(p.half_width_px)->check(CLI::Range(2, 256));
}

std::vector<ZernikeTerm> parse_zernike_list(const std::string& text, const std::string& option) {
  std::vector<ZernikeTerm> terms;
  if (text == "none" || text.empty()) return terms;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) {
    const auto colon = item.find(':');
    ZernikeTerm t;
    try {
      if (colon == std::string::npos) throw std::invalid_argument(item);
      std::size_t used = 0;
      t.noll = std::stoi(item.substr(0, colon), &used);
      if (used != colon) throw std::invalid_argument(item);
      const std::string amp = item.substr(colon + 1);
      t.waves_rms = std::stod(amp, &used);
      if (used != amp.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      throw UsageError(option, "'" + item + "' is not NOLL:WAVES_RMS (e.g. 6:0.12)");
    }
    if (t.noll < 1 || t.noll > 66) throw UsageError(option, "Noll index " + std::to_string(t.noll) + " is not 1 to 66");
    if (!std::isfinite(t.waves_rms) || std::abs(t.waves_rms) > 10)
      throw UsageError(option, "amplitude of Noll " + std::to_string(t.noll) + " must be within ±10 wavelengths RMS");
    terms.push_back(t);
  }
  return terms;
}

namespace {

// Completes the settings from the options that depend on each other (camera,
// maps, calibration, z range).
void resolve_movie_options(MovieCliOptions& o) {
  auto& s = o.settings;
  if (s.z_even && (s.z_stack || (o.psf != "pupil" && !o.astigmatic && o.calibration.empty())))
    throw UsageError("--z-even", "only for a 3D movie of emitters (--psf pupil, --astigmatic or --calibration), not "
                                 "with --z-stack");
  s.sensitivity = o.sensitivity.value_or(s.camera == "emccd" ? 10.0 : s.sensitivity);
  if (!o.camera_maps.empty() && s.camera != "scmos") throw UsageError("--camera-maps", "only with --camera scmos");
  if (s.camera == "scmos") {
    if (o.camera_maps.empty()) {
      s.maps = std::make_shared<const CameraMaps>(simulate_camera_maps(s.width, s.height, s.seed));
    } else {
      auto maps = read_camera_maps(o.camera_maps, "--camera-maps",
                                   {s.width, s.height, "the movie to simulate (--width/--height)"});
      maps.check_frame_size(s.width, s.height, "the movie to simulate (--width/--height)");
      s.maps = std::make_shared<const CameraMaps>(std::move(maps));
    }
  }
  if (o.psf == "pupil") {
    if (o.astigmatic || !o.calibration.empty())
      throw UsageError(o.astigmatic ? "--astigmatic" : "--calibration", "not with --psf pupil (the pupil makes the 3D)");
    if (!o.zernike.empty()) o.pupil.zernike = parse_zernike_list(o.zernike, "--zernike");
    o.pupil.pixel_size_nm = s.pixel_size_nm;
    s.z_min_nm = o.z_min.value_or(s.z_stack ? -800.0 : -600.0);
    s.z_max_nm = o.z_max.value_or(s.z_stack ? 800.0 : 600.0);
    if (!(s.z_min_nm <= s.z_max_nm)) throw UsageError("--z-min", "the z range is empty (--z-min > --z-max)");
    if (!s.z_stack && (o.z_step || o.beads)) throw UsageError(o.z_step ? "--z-step" : "--beads", "only with --z-stack");
    if (s.z_stack) {
      s.z_step_nm = o.z_step.value_or(s.z_step_nm);
      s.beads = o.beads.value_or(5);
      s.frames = static_cast<std::int64_t>(std::floor((s.z_max_nm - s.z_min_nm) / s.z_step_nm + 1e-9)) + 1;
      // The table on the stack's own z grid (exact slices) where the step allows, else 5 nm.
      o.pupil.table_step_nm = s.z_step_nm >= 2 ? s.z_step_nm : 5;
    }
    s.pupil = std::make_shared<const PupilPsf>(o.pupil, s.z_min_nm,
                                               s.z_stack ? s.z_min_nm + s.z_step_nm * static_cast<double>(s.frames - 1)
                                                         : s.z_max_nm);
    return;
  }
  if (!o.zernike.empty()) throw UsageError("--zernike", "only with --psf pupil");
  const bool three_d = o.astigmatic || !o.calibration.empty() || s.z_stack;
  if (!three_d) {
    if (o.z_min || o.z_max) throw UsageError(o.z_min ? "--z-min" : "--z-max", "only with --astigmatic, --calibration or --z-stack");
    if (o.z_step || o.beads) throw UsageError(o.z_step ? "--z-step" : "--beads", "only with --z-stack");
    return;
  }
  if (!s.z_stack && (o.z_step || o.beads)) throw UsageError(o.z_step ? "--z-step" : "--beads", "only with --z-stack");
  auto calibration = o.calibration.empty() ? default_astigmatic_calibration(s.pixel_size_nm)
                                           : read_astigmatic_calibration(o.calibration);
  // σ is in nm: the movie's own pixel size turns it into pixels.
  calibration.pixel_size_nm = s.pixel_size_nm;
  s.z_min_nm = o.z_min.value_or(calibration.z_min_nm);
  s.z_max_nm = o.z_max.value_or(calibration.z_max_nm);
  if (!(s.z_min_nm <= s.z_max_nm)) throw UsageError("--z-min", "the z range is empty (--z-min > --z-max)");
  calibration.require_covers(s.z_min_nm, s.z_max_nm, o.z_min || o.z_max ? "--z-min/--z-max" : "--calibration");
  if (s.z_stack) {
    s.z_step_nm = o.z_step.value_or(s.z_step_nm);
    s.beads = o.beads.value_or(s.beads);
    s.frames = static_cast<std::int64_t>(std::floor((s.z_max_nm - s.z_min_nm) / s.z_step_nm + 1e-9)) + 1;
  }
  s.astigmatism = std::move(calibration);
}

}  // namespace

void run_simulate_movie(MovieCliOptions o, std::uint64_t seed, bool quiet) {
  o.settings.seed = seed;
  resolve_movie_options(o);
  const auto& s = o.settings;
  if (s.ring_radius_min_nm > s.ring_radius_max_nm)
    throw UsageError("--ring-radius-min", "is larger than --ring-radius-max");
  // Every file of the run, checked against the maps or calibration it reads before any work.
  const std::filesystem::path planned(o.output);
  plan_output(o.output, "the movie (-o)");
  if (s.maps) plan_output(sibling_path(planned, "_maps.h5"), "the camera maps (_maps.h5)");
  if (s.astigmatism) plan_output(sibling_path(planned, "_astig.json"), "the calibration (_astig.json)");
  plan_output(sibling_path(planned, ".yaml"), "the movie's metadata (.yaml)");
  plan_output(sibling_path(planned, "_truth.csv"), "the truth (_truth.csv)");
  check_run_plan();
  OutputGroup outputs;  // the movie, its camera, maps, calibration and truth appear together
  MovieTruthExtras extras;
  const auto truth = simulate_movie(s, o.output, &extras);
  const std::filesystem::path out(o.output);
  const std::string software = std::string("nanoscopy bench simulate movie ") + NANOSCOPY_VERSION;
  std::string maps_path, calibration_path;
  if (s.maps) {
    maps_path = sibling_path(out, "_maps.h5");
    write_camera_maps_hdf5(maps_path, *s.maps, software);
  }
  if (s.astigmatism) {
    calibration_path = sibling_path(out, "_astig.json");
    write_astigmatic_calibration(calibration_path, *s.astigmatism);
  }
  // The Picasso camera of a non-default camera: EM gain, or the maps' means.
  double baseline = s.baseline, sensitivity = s.sensitivity, gain = 1;
  if (s.camera == "emccd") gain = s.em_gain;
  if (s.maps) {
    double offset_sum = 0, gain_sum = 0;
    for (std::size_t k = 0; k < s.maps->offset.size(); ++k) {
      offset_sum += s.maps->offset[k];
      gain_sum += s.maps->gain[k];
    }
    const auto n = static_cast<double>(s.maps->offset.size());
    baseline = offset_sum / n;
    sensitivity = n / gain_sum;
  }
  // The camera that made the counts, beside the movie as Picasso's movie info
  // (<stem>.yaml): fit2d reads Baseline, Sensitivity, Gain and Pixelsize from it.
  const auto yaml_path = sibling_path(out, ".yaml");
  {
    std::ostringstream f;
    f.imbue(std::locale::classic());
    f << std::setprecision(17) << "Width: " << s.width << "\nHeight: " << s.height << "\nFrames: " << s.frames
      << "\nData Type: uint16\nByte Order: '<'\nPixelsize: " << s.pixel_size_nm << "\nBaseline: " << baseline
      << "\nSensitivity: " << sensitivity << "\nGain: " << gain << "\nQe: 1\nGenerated by: nanoscopy bench simulate movie "
      << NANOSCOPY_VERSION;
    if (!maps_path.empty()) f << "\nCamera maps: " << std::filesystem::path(maps_path).filename().string();
    if (!calibration_path.empty())
      f << "\nAstigmatic calibration: " << std::filesystem::path(calibration_path).filename().string();
    if (s.pupil) {
      const auto& p = s.pupil->settings();
      f << "\nSimulation.PSF: pupil\nSimulation.NA: " << p.na << "\nSimulation.Wavelength [nm]: " << p.wavelength_nm
        << "\nSimulation.Immersion index: " << p.n_immersion << "\nSimulation.Sample index: " << p.n_sample
        << "\nSimulation.Focus depth [nm]: " << p.focus_depth_nm << "\nSimulation.Zernike [Noll index, waves RMS]: {";
      for (std::size_t i = 0; i < p.zernike.size(); ++i)
        f << (i ? ", " : "") << p.zernike[i].noll << ": " << p.zernike[i].waves_rms;
      f << "}";
    } else if (!s.astigmatism) {
      f << "\nSimulation.PSF sigma [px]: " << s.psf_sigma;
    }
    if (s.hot_pixels > 0)
      f << "\nSimulation.Hot pixels: " << s.hot_pixels << "\nSimulation.Hot pixel photons: " << s.hot_pixel_photons;
    f << "\nSimulation.Photons: " << s.photons << "\nSimulation.Background [photons/px]: " << s.background
      << "\nSimulation.Seed: " << s.seed << "\n";
    if (s.camera != "poisson") f << "Simulation.Camera: " << s.camera << "\n";
    if (s.camera == "emccd") f << "Simulation.Read noise [e-]: " << s.read_noise << "\n";
    if (s.astigmatism || s.pupil)
      f << "Simulation.Z range [nm]: [" << s.z_min_nm << ", " << s.z_max_nm << "]\n";
    if (s.z_stack) f << "Simulation.Z step [nm]: " << s.z_step_nm << "\nSimulation.Beads: " << s.beads << "\n";
    write_file_atomically(yaml_path, f.str());
  }
  // The truth in the localizations' own conventions (a ThunderSTORM CSV: frames
  // from 1, nm from the image's top-left corner), so it reads like fit2d's output.
  const auto truth_path = sibling_path(out, "_truth.csv");
  std::vector<Column> columns = {{"id", ColumnType::f64},
                                     {"frame", ColumnType::u32},
                                     {"x [nm]", ColumnType::f64},
                                     {"y [nm]", ColumnType::f64},
                                     {"intensity [photon]", ColumnType::f64}};
  const bool three_d = s.astigmatism || s.pupil;
  if (three_d) columns.push_back({"z [nm]", ColumnType::f64});  // from the focal plane, as the calibration's z
  auto table = create_csv_writer(truth_path, columns);
  std::vector<double> rows;
  rows.reserve(truth.size() * columns.size());
  double id = 0;
  for (const auto& t : truth) {
    rows.insert(rows.end(), {++id, static_cast<double>(t.frame + 1), (t.x + 0.5) * s.pixel_size_nm,
                             (t.y + 0.5) * s.pixel_size_nm, t.photons});
    if (three_d) rows.push_back(t.z);
  }
  table->append(rows);
  table->finish();
  // The emitters where they are without drift (the sample's structure), in the same conventions.
  const auto emitters_path = sibling_path(out, "_emitters.csv");
  {
    std::vector<Column> emitter_columns = {
        {"id", ColumnType::f64}, {"x [nm]", ColumnType::f64}, {"y [nm]", ColumnType::f64}, {"marker", ColumnType::u32}};
    if (three_d) emitter_columns.push_back({"z [nm]", ColumnType::f64});
    auto emitters = create_csv_writer(emitters_path, emitter_columns);
    std::vector<double> emitter_rows;
    double emitter_id = 0;
    for (const MovieEmitter& e : extras.emitters) {
      emitter_rows.insert(emitter_rows.end(), {++emitter_id, (e.x + 0.5) * s.pixel_size_nm,
                                               (e.y + 0.5) * s.pixel_size_nm, e.marker ? 1.0 : 0.0});
      if (three_d) emitter_rows.push_back(e.z);
    }
    emitters->append(emitter_rows);
    emitters->finish();
  }
  // The drift that moved them, as fit2d undrift writes its estimate (frame from 0, dx [nm], dy [nm]).
  std::string drift_path;
  if (s.drift.any() || s.drift_x != 0 || s.drift_y != 0) {
    drift_path = sibling_path(out, "_drift.csv");
    write_undrift_csv(drift_path, extras.drift, s.pixel_size_nm, false);
  }
  outputs.commit();
  if (!quiet)
    std::cerr << "wrote " << o.output << " (" << s.frames << " frames of " << s.width << "x" << s.height << ", "
              << truth.size() << (s.z_stack ? " bead images" : " emitter images") << "), its camera " << yaml_path
              << (maps_path.empty() ? "" : ", maps " + maps_path)
              << (calibration_path.empty() ? "" : ", calibration " + calibration_path) << ", truth " << truth_path
              << " (ThunderSTORM CSV: frames from 1, nm), emitters " << emitters_path
              << (drift_path.empty() ? "" : ", drift " + drift_path + " (frames from 0, nm)") << "\n";
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
  cmd.add_option("--drift-x", s.drift_x_px_per_frame, "stage drift in x, px per frame (sofi --undrift tests)")
      ->default_val(s.drift_x_px_per_frame);
  cmd.add_option("--drift-y", s.drift_y_px_per_frame, "stage drift in y, px per frame")->default_val(s.drift_y_px_per_frame);
  cmd.add_option("--drift-wobble", s.drift_wobble_px, "amplitude of a sinusoidal drift on top, px")
      ->default_val(s.drift_wobble_px);
  cmd.add_option("--drift-period", s.drift_wobble_period, "period of the wobble, frames")
      ->default_val(s.drift_wobble_period)->check(CLI::PositiveNumber);
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
