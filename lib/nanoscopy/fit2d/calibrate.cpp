#include "nanoscopy/fit2d/calibrate.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <ostream>
#include <vector>

#include "nanoscopy/backend/registry.hpp"
#include <chrono>
#include <iomanip>

#include "nanoscopy/core/astigmatism.hpp"
#include "nanoscopy/fit2d/calibrate_spline.hpp"
#include "nanoscopy/io/spline_calibration_formats.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/fit/engine.hpp"
#include "nanoscopy/fit2d/settings.hpp"
#include "nanoscopy/io/plot_png.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/loc/detect/detect.hpp"

namespace nanoscopy {
namespace {

// The largest z range a calibration may span (nm): 100 µm, far beyond any objective's astigmatic range.
constexpr double kMaxCalibrationRangeNm = 100000;

std::string number_text(double v) {
  char text[64];
  const auto result = std::to_chars(text, text + sizeof text, v);
  return std::string(text, result.ptr);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string default_plot_path(const std::string& json) {
  std::filesystem::path p(json);
  p.replace_extension(".png");
  return p.string();
}

std::string lower_extension(const std::string& path) {
  std::string e = std::filesystem::path(path).extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return e;
}

void run_spline_calibrate(const Fit2dCalibrateOptions& o, ToolContext& ctx, std::ostream& out) {
  const auto started = std::chrono::steady_clock::now();
  const std::string ext = lower_extension(o.output);
  if (ext != ".h5" && ext != ".hdf5" && ext != ".mat")
    throw UsageError("-o", "the spline model writes psf.h5 (ours) or psf.mat (SMAP's *_3dcal.mat), not '" + ext + "'");
  if (ext == ".mat" && !smap_format_available())
    throw UsageError("-o", "this build cannot write MATLAB files (configured without libmatio): write psf.h5");
  if (!(o.smooth_z_nm >= 0) || !std::isfinite(o.smooth_z_nm)) throw UsageError("--smooth-z", "must be 0 or more nm");
  if (!(o.smooth_xy_px >= 0) || !std::isfinite(o.smooth_xy_px)) throw UsageError("--smooth-xy", "must be 0 or more px");
  if (o.oversample < 0 || o.oversample > 4) throw UsageError("--oversample", "must be 1 to 4 voxels per pixel");
  if (ext == ".mat" && o.oversample > 1)
    throw UsageError("--oversample", "SMAP's *_3dcal.mat has one voxel per camera pixel: --oversample 1, or write psf.h5");
  // SMAP's voxel is one camera pixel; ours is half a pixel by default (calibrate_spline.hpp, step 7).
  const int oversample = o.oversample > 0 ? o.oversample : ext == ".mat" ? 1 : 2;
  auto reader = open_stack(o.input);
  const std::string plot = o.plot.empty() ? default_plot_path(o.output) : o.plot;
  plan_output(o.output, "the calibration (-o)");
  plan_output(plot, o.plot.empty() ? "the calibration picture (the calibration's name with .png)" : "the picture (--plot)");
  check_run_plan();
  const StackInfo& info = reader->info();
  if (o.z_step * static_cast<double>(info.frames - 1) > kMaxCalibrationRangeNm)
    throw UsageError("--z-step", std::to_string(info.frames) + " frames of " + number_text(o.z_step) +
                                     " nm span more than " + number_text(kMaxCalibrationRangeNm) +
                                     " nm: not a bead z-stack (check the step's unit: nm)");
  if (o.z0 && std::abs(*o.z0) > kMaxCalibrationRangeNm)
    throw UsageError("--z0", "must be within ±" + number_text(kMaxCalibrationRangeNm) + " nm");
  const Fit2dSetup setup = fit2d_setup(ctx.params, info, "", ctx.quiet);
  const Camera& camera = setup.settings.camera;
  if (info.width * info.height * info.frames > (std::int64_t{1} << 31))
    throw InputError(info.path, "a bead stack of " + std::to_string(info.frames) + " frames of " +
                                    std::to_string(info.width) + "x" + std::to_string(info.height) +
                                    " is beyond what calibration reads at once (2^31 pixels): crop it");
  std::vector<float> stack(static_cast<std::size_t>(info.width * info.height * info.frames));
  reader->read_float(0, info.frames, stack.data());
  const double gain = camera.photons_per_adu();
  for (auto& v : stack) v = static_cast<float>((v - camera.baseline) * gain);
  SplineCalibrationSettings s;
  s.z_step_nm = o.z_step;
  s.z0_nm = o.z0;
  s.box = o.box > 0 ? o.box : 21;
  s.smooth_z_nm = o.smooth_z_nm;
  s.smooth_xy_px = o.smooth_xy_px;
  s.oversample = oversample;
  s.pixel_size_nm = camera.pixel_size_nm;
  const SplineCalibrationResult r = calibrate_spline(stack, info.width, info.height, info.frames, s, info.path);
  write_spline_calibration_png(plot, r);
  write_spline_any(o.output, r.psf, &r.volume);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::size_t used = 0;
  for (const auto& b : r.beads) used += b.used;
  out << "fit2d calibrate --model spline: " << info.path << ": " << info.frames << " frames of " << info.width << "x"
      << info.height << ", " << r.beads.size() << " spot" << (r.beads.size() == 1 ? "" : "s") << ", " << used
      << " bead" << (used == 1 ? "" : "s") << " used, " << r.hot_pixels << " hot pixel"
      << (r.hot_pixels == 1 ? "" : "s") << " repaired (" << std::fixed << std::setprecision(2) << seconds << " s)\n";
  out << std::defaultfloat;
  for (const auto& b : r.beads) {
    out << "  bead at (" << b.x << ", " << b.y << ") px: ";
    if (b.used)
      out << "used, shift " << std::setprecision(3) << b.shift_x << ", " << b.shift_y << " px, "
          << b.shift_z * o.z_step << " nm, residual " << b.residual << std::defaultfloat << std::setprecision(6) << "\n";
    else
      out << "dropped: " << b.dropped << "\n";
  }
  out << "  spline:             " << r.psf.size_x << " x " << r.psf.size_y << " x " << r.psf.size_z
      << " intervals (" << r.psf.voxel_xy_px << " px x " << r.psf.voxel_xy_px << " px x " << o.z_step << " nm), z " << r.psf.z_min_nm() << " to " << r.psf.z_max_nm()
      << " nm (frames " << r.first_frame << " to " << r.first_frame + r.nz - 1 << "), centre (" << r.psf.centre_x
      << ", " << r.psf.centre_y << ") voxels, focus at slice " << r.psf.focus_index << "\n"
      << "  smoothing:          z " << o.smooth_z_nm << " nm, x/y " << o.smooth_xy_px << " px (cut-off periods)\n"
      << "  output:             " << o.output << (ext == ".mat" ? " (SMAP's *_3dcal.mat)" : "") << "\n"
      << "  picture:            " << plot << " (xz, yz sections; each bead's residual vs the average)\n";
}

}  // namespace

void run_fit2d_calibrate(const Fit2dCalibrateOptions& given, ToolContext& ctx, std::ostream& out) {
  Fit2dCalibrateOptions o_in = given;
  if (o_in.model.empty() || o_in.model == "auto") {  // by the calibration's name
    const std::string ext = lower_extension(o_in.output);
    o_in.model = ext == ".h5" || ext == ".hdf5" || ext == ".mat" ? "spline" : "astigmatic";
  }
  if (o_in.model == "spline") {
    if (!(o_in.z_step > 0) || !std::isfinite(o_in.z_step)) throw UsageError("--z-step", "must be a positive number of nm");
    if (o_in.z_step > kMaxCalibrationRangeNm)
      throw UsageError("--z-step", "a step of " + number_text(o_in.z_step) + " nm is beyond any bead z-stack");
    if (o_in.z0 && !std::isfinite(*o_in.z0)) throw UsageError("--z0", "must be a finite number of nm");
    return run_spline_calibrate(o_in, ctx, out);
  }
  if (o_in.model != "astigmatic") throw UsageError("--model", "astigmatic or spline, not '" + o_in.model + "'");
  {
    const std::string ext = lower_extension(o_in.output);
    if (ext == ".h5" || ext == ".hdf5" || ext == ".mat")
      throw UsageError("-o", "the astigmatic calibration is a JSON file; " + ext + " is for --model spline");
  }
  Fit2dCalibrateOptions o = o_in;
  if (o.box <= 0) o.box = 15;
  if (!(o.z_step > 0) || !std::isfinite(o.z_step)) throw UsageError("--z-step", "must be a positive number of nm");
  // A bead z-stack spans micrometres; a step that puts the calibrated range beyond kMaxCalibrationRangeNm is a
  // typing error (1e300 wrote a calibration of ±3e301 nm). The frame count is checked once the stack is open.
  if (o.z_step > kMaxCalibrationRangeNm)
    throw UsageError("--z-step", "a step of " + number_text(o.z_step) + " nm is beyond any bead z-stack (at most " +
                                     number_text(kMaxCalibrationRangeNm) + " nm in all)");
  if (o.z0 && !std::isfinite(*o.z0)) throw UsageError("--z0", "must be a finite number of nm");
  auto reader = open_stack(o.input);
  plan_output(o.output, "the calibration (-o)");
  plan_output(o.plot.empty() ? default_plot_path(o.output) : o.plot,
              o.plot.empty() ? "the calibration plot (the calibration's name with .png)" : "the plot (--plot)");
  check_run_plan();
  const StackInfo& info = reader->info();
  if (info.frames < 6)
    throw InputError(info.path, std::to_string(info.frames) + " frame" + (info.frames == 1 ? "" : "s") +
                                    ": a calibration needs a bead z-stack of at least 6 frames");
  if (o.z_step * static_cast<double>(info.frames - 1) > kMaxCalibrationRangeNm)
    throw UsageError("--z-step", std::to_string(info.frames) + " frames of " + number_text(o.z_step) +
                                     " nm span more than " + number_text(kMaxCalibrationRangeNm) +
                                     " nm: not a bead z-stack (check the step's unit: nm)");
  if (o.z0 && std::abs(*o.z0) > kMaxCalibrationRangeNm)
    throw UsageError("--z0", "must be within ±" + number_text(kMaxCalibrationRangeNm) + " nm");
  Fit2dSetup setup = fit2d_setup(ctx.params, info, "", ctx.quiet);
  DetectSettings detect = setup.settings.detect;
  detect.box = o.box;
  validate_detect_settings(detect, "--box");
  check_frame_size(info.width, info.height, detect.box);
  FitSettings fit = setup.settings.fit;
  fit.model = ShapeModel::elliptical;
  const double pixel_nm = setup.settings.camera.pixel_size_nm;

  // Detect and cut every frame's beads, then fit them in one batch.
  const auto w = static_cast<int>(info.width), h = static_cast<int>(info.height);
  std::vector<float> frame(static_cast<std::size_t>(info.width * info.height));
  std::vector<float> rois;
  std::vector<std::int64_t> roi_frame;
  std::vector<Candidate> candidates;
  for (std::int64_t t = 0; t < info.frames; ++t) {
    reader->read_float(t, 1, frame.data());
    detect_cpu(frame.data(), t, 1, w, h, detect, 0, candidates);
    const auto cut = cut_rois<float>(frame.data(), t, 1, w, h, candidates, detect.box);
    rois.insert(rois.end(), cut.pixels.begin(), cut.pixels.end());
    roi_frame.insert(roi_frame.end(), candidates.size(), t);
  }
  if (roi_frame.empty())
    throw InputError(info.path, "no bead found in any of its " + std::to_string(info.frames) +
                                    " frames (lower --threshold, or check --box)");
  std::vector<FitResult> fits(roi_frame.size());
  auto engine = make_fit_engine(ctx.device, fit);
  engine->fit(RoiBatch{rois.data(), PixelType::f32, static_cast<std::int64_t>(roi_frame.size()), detect.box,
                       detect.box, nullptr},
              fits);

  // σx, σy per frame: the median over the frame's converged fits, in nm.
  const double centre = 0.5 * static_cast<double>(info.frames - 1);
  std::vector<double> z, sx, sy;
  std::int64_t beads = 0;
  for (std::int64_t t = 0, k = 0; t < info.frames; ++t) {
    std::vector<double> fx, fy;
    for (; k < static_cast<std::int64_t>(fits.size()) && roi_frame[k] == t; ++k)
      if (converged(fits[k].status)) fx.push_back(fits[k].sigma * pixel_nm), fy.push_back(fits[k].sigma_y * pixel_nm);
    if (fx.empty()) continue;
    beads = std::max<std::int64_t>(beads, static_cast<std::int64_t>(fx.size()));
    z.push_back(o.z0 ? *o.z0 + static_cast<double>(t) * o.z_step : (static_cast<double>(t) - centre) * o.z_step);
    sx.push_back(median(fx));
    sy.push_back(median(fy));
  }
  if (z.empty()) throw InputError(info.path, "no bead could be fitted in any frame");
  const AstigmaticCalibration cal = fit_astigmatic_calibration(z, sx, sy, pixel_nm, o.higher_order, info.path);
  double rx = 0, ry = 0;
  for (std::size_t i = 0; i < z.size(); ++i) {
    rx += std::pow(sx[i] - cal.sigma_x_nm(z[i]), 2);
    ry += std::pow(sy[i] - cal.sigma_y_nm(z[i]), 2);
  }
  rx = std::sqrt(rx / static_cast<double>(z.size()));
  ry = std::sqrt(ry / static_cast<double>(z.size()));

  // The plot first (the JSON is the result: written last, so a failed plot leaves none).
  const std::string plot = o.plot.empty() ? default_plot_path(o.output) : o.plot;
  PlotSpec spec;
  spec.title = "astigmatic calibration: " + std::filesystem::path(info.path).filename().string();
  spec.x_label = "z [nm]";
  spec.y_label = "sigma [nm]";
  std::vector<double> zc, cx, cy;
  for (int i = 0; i <= 200; ++i) {
    const double zi = cal.z_min_nm + (cal.z_max_nm - cal.z_min_nm) * i / 200.0;
    zc.push_back(zi);
    cx.push_back(cal.sigma_x_nm(zi));
    cy.push_back(cal.sigma_y_nm(zi));
  }
  const auto points = [&](const std::string& label, const std::vector<double>& s, Rgb color) {
    // Points as short dashes: one two-point series per sample would flood the legend, so a dotted series.
    PlotSeries p{label, {}, {}, color, false, 5};
    for (std::size_t i = 0; i < z.size(); ++i) {
      p.x.insert(p.x.end(), {z[i] - 0.15 * o.z_step, z[i] + 0.15 * o.z_step, NAN});
      p.y.insert(p.y.end(), {s[i], s[i], NAN});
    }
    return p;
  };
  spec.series.push_back(points("sigma x (beads)", sx, Rgb{31, 119, 180}));
  spec.series.push_back(points("sigma y (beads)", sy, Rgb{214, 39, 40}));
  spec.series.push_back(PlotSeries{"sigma x fit", zc, cx, Rgb{31, 119, 180}, true, 2});
  spec.series.push_back(PlotSeries{"sigma y fit", zc, cy, Rgb{214, 39, 40}, true, 2});
  write_plot_png(plot, spec);
  write_astigmatic_calibration(o.output, cal);

  out << "fit2d calibrate: " << info.path << ": " << info.frames << " frames, " << z.size() << " with a bead (up to "
      << beads << " per frame), elliptical fits on " << engine->name() << "\n"
      << "  z range:            " << cal.z_min_nm << " to " << cal.z_max_nm << " nm (step " << o.z_step << " nm)\n"
      << "  fit RMS:            sigma x " << rx << " nm, sigma y " << ry << " nm\n"
      << "  sigma0, c, d:       x " << cal.x.sigma0 << ", " << cal.x.c << ", " << cal.x.d << " nm; y " << cal.y.sigma0
      << ", " << cal.y.c << ", " << cal.y.d << " nm\n"
      << "  output:             " << o.output << "\n"
      << "  plot:               " << plot << "\n";
}

}  // namespace nanoscopy
