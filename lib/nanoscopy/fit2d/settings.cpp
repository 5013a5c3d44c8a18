#include "nanoscopy/fit2d/settings.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <filesystem>
#include <algorithm>
#include <fstream>
#include <memory>
#include <iostream>
#include <stdexcept>
#include <tuple>

#include "nanoscopy/cluster/fingerprint.hpp"
#include "nanoscopy/core/astigmatism.hpp"
#include "nanoscopy/core/camera_maps.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/spline_psf_io.hpp"
#include "nanoscopy/io/spline_calibration_formats.hpp"
#include "nanoscopy/loc/detect/detect.hpp"
#include "nanoscopy/loc/duplicates.hpp"
#include "nanoscopy/loc/recenter.hpp"
#include "nanoscopy/loc/formats/picasso_localize_keys.hpp"

namespace nanoscopy {
namespace {

FitSettings fit_settings(const Params& p) {
  FitSettings s;
  s.max_iterations = static_cast<int>(p.get_int("Fit/max iterations"));
  s.max_error = p.get_real("Fit/max error");
  s.min_delta = p.get_real("Fit/min delta");
  s.min_step = p.get_real("Fit/min step");
  const std::string model = p.get_string("Fit/model");
  s.model = model == "sampled"      ? ShapeModel::sampled
            : model == "elliptical" ? ShapeModel::elliptical
            : model == "astigmatic" ? ShapeModel::astigmatic
            : model == "spline"     ? ShapeModel::spline
                                    : ShapeModel::integrated;
  const std::string precision = p.get_string("Fit/precision");
  s.precision = precision == "float"    ? FitPrecision::fp32
                : precision == "double" ? FitPrecision::fp64
                                        : FitPrecision::automatic;
  const std::string estimator = p.get_string("Fit/estimator");
  // auto is resolved by fit2d_setup (mle for camera data); mle until then.
  s.estimator = estimator == "lsq" ? Estimator::lsq : estimator == "wlsq" ? Estimator::wlsq : Estimator::mle;
  return s;
}

// "-400:400" → (−400, 400) nm; UsageError naming `where` otherwise.
std::pair<double, double> parse_z_range(const std::string& text, const std::string& where) {
  const auto colon = text.find(':', text.empty() ? 0 : 1);  // a leading '-' is a sign
  try {
    if (colon == std::string::npos) throw std::invalid_argument("no colon");
    std::size_t used_a = 0, used_b = 0;
    const std::string a = text.substr(0, colon), b = text.substr(colon + 1);
    const double lo = std::stod(a, &used_a), hi = std::stod(b, &used_b);
    if (used_a != a.size() || used_b != b.size() || !(lo < hi)) throw std::invalid_argument("order");
    return {lo, hi};
  } catch (const std::exception&) {
    throw UsageError(where, "'" + text + "' is not a depth range 'min:max' in nm with min < max (e.g. -400:400)");
  }
}

// The astigmatic model's curves in pixels of the movie, over the requested depths.
void set_astigmatism(const Params& p, const Camera& camera, FitSettings& fit) {
  const std::string path = p.get_string("Fit/calibration");
  // --calibration overrides a 2D model from a parameter file (params/fit2d.prm names one), not one asked for
  // on the command line.
  const bool model_set = p.source("Fit/model").file.rfind("command line", 0) == 0;
  const bool z_factor_set = p.source("Fit/z factor").file != "default";
  if (path.empty()) {
    if (fit.model == ShapeModel::astigmatic)
      throw UsageError(p.source("Fit/model").describe(),
                       "the astigmatic model needs a calibration: --calibration astig.json (from fit2d calibrate)");
    if (fit.model == ShapeModel::spline)
      throw UsageError(p.source("Fit/model").describe(),
                       "the spline model needs a calibration: --calibration psf.h5 (from fit2d calibrate --model spline)");
    if (p.source("Fit/z range").file != "default")
      throw UsageError(p.source("Fit/z range").describe(), "a z range needs --calibration (3D)");
    if (z_factor_set) throw UsageError(p.source("Fit/z factor").describe(), "a z factor needs --calibration (3D)");
    return;
  }
  // The spline calibration is HDF5 (ours or Picasso's) or SMAP's MATLAB file (by content, or by its extension
  // when the content says nothing: then its reader says what is wrong); anything else is the astigmatic JSON.
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  bool matlab = false;
  {
    std::ifstream head(path, std::ios::binary);
    char text[6] = {};
    matlab = head.read(text, 6) && std::string(text, 6) == "MATLAB";
  }
  if (looks_like_hdf5(path) || matlab || extension == ".h5" || extension == ".hdf5" || extension == ".mat") {
    if (model_set && fit.model != ShapeModel::spline)
      throw UsageError(p.source("Fit/model").describe(), "--calibration " + path +
                                                             " (a spline calibration) localizes in 3D with the spline "
                                                             "model, not --model " + p.get_string("Fit/model"));
    if (p.source("Fit/z range").file != "default")
      throw UsageError(p.source("Fit/z range").describe(),
                       "the spline model fits over its calibration's whole z range (--z-range is for astigmatic "
                       "calibrations)");
    fit.model = ShapeModel::spline;
    auto psf = std::make_shared<SplinePsf>(read_spline_any(path));
    // A warning, not an error: the spline is in camera pixels of the bead stack.
    if (psf->pixel_size_nm > 0 && std::abs(psf->pixel_size_nm - camera.pixel_size_nm) > 0.02 * camera.pixel_size_nm)
      std::cerr << "fit2d: warning: the spline calibration " << path << " was made with " << psf->pixel_size_nm
                << " nm pixels, the movie has " << camera.pixel_size_nm << " nm: x, y and z are scaled wrongly\n";
    fit.spline = std::move(psf);
    fit.z_factor = p.get_real("Fit/z factor");
    return;
  }
  if (z_factor_set)
    throw UsageError(p.source("Fit/z factor").describe(),
                     "--z-factor applies to the spline model (the astigmatic calibration is made in the sample's z)");
  if (model_set && fit.model != ShapeModel::astigmatic)
    throw UsageError(p.source("Fit/model").describe(),
                     "--calibration localizes in 3D with the astigmatic model, not --model " + p.get_string("Fit/model"));
  fit.model = ShapeModel::astigmatic;
  const AstigmaticCalibration cal = read_astigmatic_calibration(path);
  double z_min = cal.z_min_nm, z_max = cal.z_max_nm;
  if (const std::string range = p.get_string("Fit/z range"); !range.empty()) {
    const std::string where = p.source("Fit/z range").describe();
    std::tie(z_min, z_max) = parse_z_range(range, where);
    cal.require_covers(z_min, z_max, where);
  }
  // A warning, not an error (a calibration in nm may hold across cameras); printed with --quiet too.
  if (const std::string warning = calibration_pixel_size_warning(cal, camera.pixel_size_nm); !warning.empty())
    std::cerr << "fit2d: warning: " << warning << "\n";
  fit.astigmatism = cal.in_pixels<double>(camera.pixel_size_nm);
  fit.astigmatism.z_min = z_min;
  fit.astigmatism.z_max = z_max;
}

// Whether the camera's photon conversion is known: a Camera/ value set by the
// user, or given by the movie's metadata.
bool camera_known(const Params& p, const std::vector<std::string>& from_movie) {
  for (const char* key : {"Camera/Baseline", "Camera/Sensitivity", "Camera/Gain"})
    if (p.source(key).file != "default") return true;
  for (const auto& key : from_movie)
    if (key == "Baseline" || key == "Sensitivity" || key == "Gain") return true;
  return false;
}

// "movie.tif" or "movie.tif, movie.yaml": where the movie's own values come from.
std::string movie_files(const StackInfo& info) {
  return info.metadata_path.empty() ? info.path : info.path + ", " + info.metadata_path;
}

// The movie's own camera (its metadata .yaml: Baseline, Sensitivity, Gain, Qe;
// the pixel size from the image file or that .yaml) wins over the defaults, but
// not over a value the user set. `from_movie` lists the keys taken from the movie.
Camera camera(const Params& p, const StackInfo& info, std::vector<std::string>& from_movie) {
  const auto value = [&](const char* key) {
    const std::string path = std::string("Camera/") + key;
    double v = p.get_real(path);
    if (p.source(path).file != "default") return v;
    if (std::string(key) == "Pixelsize") {
      if (info.pixel_size_nm > 0) from_movie.push_back(key);
      return info.pixel_size_nm > 0 ? info.pixel_size_nm : v;
    }
    if (const auto m = info.metadata_number(key)) {
      from_movie.push_back(key);
      v = *m;
    }
    return v;
  };
  Camera c;
  c.baseline = value("Baseline");
  c.sensitivity = value("Sensitivity");
  c.em_gain = value("Gain");
  c.qe = value("Qe");
  c.pixel_size_nm = value("Pixelsize");
  c.validate(from_movie.empty() ? p.source("Camera/Gain").describe() : movie_files(info));
  return c;
}

// Every parameter in effect, flattened "Section/key" -> value, for the YAML.
std::vector<std::pair<std::string, std::string>> provenance(const Params& p, const std::string& input) {
  std::vector<std::pair<std::string, std::string>> out{{"Input file", input}};
  const nlohmann::json values = p.to_json();
  for (const auto& spec : p.schema().specs()) {
    const nlohmann::json* node = &values;
    std::string rest = spec.path;
    for (auto slash = rest.find('/'); slash != std::string::npos; slash = rest.find('/')) {
      node = &node->at(rest.substr(0, slash));
      rest = rest.substr(slash + 1);
    }
    const auto& leaf = node->at(rest);
    out.emplace_back(spec.path, leaf.is_string() ? leaf.get<std::string>() : leaf.dump());
  }
  return out;
}

}  // namespace

std::string output_format(const Params& p) {
  const std::string format = p.get_string("Output/format");
  return format == "auto" ? "" : format;
}

TrackSettings fit2d_track_settings(const Params& p) {
  TrackSettings ts;
  ts.radius = p.get_real("Tracking/radius");
  ts.max_gap = p.get_int("Tracking/max gap");
  ts.min_length = p.get_int("Tracking/min length");
  ts.min_presence = p.get_real("Tracking/min presence");
  ts.validate("Tracking");
  return ts;
}

std::string fit2d_parameter_fingerprint(const Params& p, const Camera& camera, const std::string& regions_file) {
  Fnv f;
  for (const auto& [key, value] : provenance(p, ""))
    for (const char* section : {"Camera/", "Detection/", "Fit/", "Filter/"})
      if (key.rfind(section, 0) == 0) f.add(key + "=" + value + ";");
  f.add(camera.pixel_size_nm);
  f.add(file_fingerprint(regions_file));
  return f.hex();
}

Fit2dSetup fit2d_setup(const Params& p, const StackInfo& info, const std::string& regions_file, bool quiet) {
  Fit2dSetup setup;
  setup.movie_files = movie_files(info);
  PipelineSettings& settings = setup.settings;
  settings.detect.box = static_cast<int>(p.get_int("Detection/box"));
  settings.detect.threshold = p.get_real("Detection/threshold");
  settings.detect.min_net_gradient = p.get_real("Detection/min net gradient");
  validate_detect_settings(settings.detect, p.source("Detection/box").describe());
  settings.fit = fit_settings(p);
  settings.camera = camera(p, info, setup.camera_from_movie);
  // wlsq and mle fit photons: (ADU − Baseline)·Sensitivity/Gain, the conversion
  // to_localization applies to lsq's results (loc/convert.cpp).
  settings.fit.photon_offset = settings.camera.baseline;
  settings.fit.photons_per_value = settings.camera.photons_per_adu();
  set_astigmatism(p, settings.camera, settings.fit);
  const bool automatic = p.get_string("Fit/estimator") == "auto";
  // sCMOS maps (wlsq, mle): --camera-maps, else the movie's "Camera maps:" (as bench simulate movie writes it,
  // a file beside the .yaml). lsq fits the ADU as before: a given --camera-maps is an error there.
  std::string maps = p.get_string("Camera/maps");
  std::string maps_where = "--camera-maps";
  if (maps.empty() && settings.fit.estimator != Estimator::lsq) {
    for (const auto& [key, value] : info.metadata)
      if (key == "Camera maps" && !value.empty()) {
        const std::filesystem::path file(value);
        maps = file.is_absolute() ? value
                                  : (std::filesystem::path(info.metadata_path).parent_path() / file).string();
        maps_where = info.metadata_path;
      }
  }
  // auto: mle for camera data (a known photon conversion, or maps), lsq (the paper's method) otherwise.
  if (automatic) {
    const bool camera_data = camera_known(p, setup.camera_from_movie) || !maps.empty();
    settings.fit.estimator = camera_data ? Estimator::mle : Estimator::lsq;
    setup.estimator_reason = camera_data ? "auto: camera data" : "auto: no camera calibration given";
  }
  if (!maps.empty()) {
    if (settings.fit.estimator == Estimator::lsq)
      throw UsageError("--camera-maps", "camera maps need --estimator wlsq or mle (lsq fits the ADU as they are)");
    auto read = std::make_shared<CameraMaps>(read_camera_maps(maps, maps_where, {info.width, info.height, info.path}));
    read->check_frame_size(info.width, info.height, info.path);
    settings.camera_maps = std::move(read);
  }
  settings.filter = {p.get_real("Filter/min sigma"), p.get_real("Filter/max sigma"), p.get_real("Filter/min photons"),
                     p.get_real("Filter/max precision")};
  if (settings.fit.model == ShapeModel::spline) {
    // The spline fits no width: its sx, sy are the PSF's second moments at the fitted z, wider than 3 px far from
    // focus. A width cut would drop the emitters at the ends of the z range and bias z there (bench spline3d:
    // none kept above +400 nm, z 28-105 nm off below -400 nm).
    settings.filter.min_sigma = 0;
    settings.filter.max_sigma = std::numeric_limits<double>::infinity();
  }
  settings.recenter_px = recenter_distance_px(p.get_string("Fit/recenter"), settings.fit.model == ShapeModel::spline,
                                             p.source("Fit/recenter").describe());
  settings.duplicate_distance_px = duplicate_distance_px(
      p.get_string("Filter/duplicates"), settings.fit.model == ShapeModel::spline, p.source("Filter/duplicates").describe());
  settings.chunk_frames = p.get_int("Input/chunk frames");
  settings.read_threads = static_cast<int>(p.get_int("Input/read threads"));
  if (!regions_file.empty()) settings.regions = parse_regions(regions_file, info.width, info.height);
  settings.quiet = quiet;
  return setup;
}

LocWriterContext fit2d_writer_context(const Params& p, const StackInfo& info, const PipelineSettings& settings) {
  LocWriterContext wctx = writer_context(info, settings.camera);
  wctx.fit_diagnostics = p.get_bool("Output/fit diagnostics");
  wctx.elliptical = settings.fit.model == ShapeModel::elliptical;
  wctx.three_d = settings.fit.model == ShapeModel::astigmatic || settings.fit.model == ShapeModel::spline;
  wctx.spline = settings.fit.model == ShapeModel::spline;
  wctx.mle = settings.fit.estimator == Estimator::mle;
  // The camera in effect is written once, under Picasso's names (Pixelsize, Baseline, ...): the
  // Camera/ parameters are left out of the provenance so the two never disagree. The postprocessing
  // steps' parameters belong to the files those steps write (each records its own), not to the fit's.
  const auto fit_parameter = [](const std::string& key) {
    for (const char* section : {"Camera/", "Postprocess/", "Undrift/", "Link/", "Render/"})
      if (key.rfind(section, 0) == 0) return false;
    return true;
  };
  for (auto& entry : provenance(p, info.path))
    if (fit_parameter(entry.first)) wctx.parameters.push_back(std::move(entry));
  // Picasso's names for the same settings, for Picasso and the scripts written for its files.
  for (auto& entry :
       picasso_localize_keys(settings.detect.box, settings.detect.min_net_gradient, settings.fit.estimator))
    wctx.parameters.push_back(std::move(entry));
  return wctx;
}

}  // namespace nanoscopy
