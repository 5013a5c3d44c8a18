#include "nanoscopy/fit2d/calibrate.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <ostream>
#include <vector>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/astigmatism.hpp"
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

}  // namespace

void run_fit2d_calibrate(const Fit2dCalibrateOptions& o, ToolContext& ctx, std::ostream& out) {
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
