#include "nanoscopy/frc/decorr_cli.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/finite_pixels.hpp"
#include "nanoscopy/core/progress.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/io/plot_png.hpp"
#include "nanoscopy/io/stack_reader.hpp"

namespace nanoscopy {

using json = nlohmann::json;

namespace {

std::string fixed(double v, int digits) {
  std::ostringstream o;
  o.imbue(std::locale::classic());
  o << std::fixed << std::setprecision(digits) << v;
  return o.str();
}

double unit_scale(const std::string& units) {
  return units == "um" ? 1e-3 : 1.0;
}

// The resolution in the report's units, or 0 (no peak, or no pixel size).
double resolution_in_units(const DecorrReport& r, const DecorrResult& d) {
  if (!(r.pixel_size_nm > 0) || !(d.kc_max > 0)) return 0;
  return d.resolution_px() * r.pixel_size_nm * unit_scale(r.units);
}

json curve_json(const DecorrCurve& c) {
  return {{"g", c.g > 0 ? json(c.g) : json(nullptr)},
          {"radius", c.radius},
          {"d", c.d},
          {"peak_radius", c.kc},
          {"peak_amplitude", c.amplitude}};
}

}  // namespace

std::string decorr_result_line(const DecorrReport& r, std::size_t index) {
  const DecorrResult& d = r.results[index];
  std::ostringstream o;
  o << r.input;
  if (r.results.size() > 1 || r.frames[index] != 0) o << " frame " << r.frames[index];
  o << ": ";
  if (!(d.kc_max > 0)) {
    o << "resolution unknown (no peak of amplitude >= 0.05: too noisy or no structure; A0 " << fixed(d.a0, 3) << ")";
    return o.str();
  }
  if (r.pixel_size_nm > 0)
    o << "resolution " << fixed(resolution_in_units(r, d), r.units == "um" ? 4 : 1) << " " << r.units << " (kcMax "
      << fixed(d.kc_max, 4) << ", A0 " << fixed(d.a0, 3) << "; " << fixed(d.resolution_px(), 3) << " px of "
      << r.pixel_size_nm << " nm)";
  else
    o << "resolution " << fixed(d.resolution_px(), 3) << " px (kcMax " << fixed(d.kc_max, 4) << ", A0 "
      << fixed(d.a0, 3) << "; no pixel size: give --pixel-size for nm)";
  return o.str();
}

std::string decorr_json(const DecorrReport& r) {
  json j;
  j["tool"] = "frc decorr";
  j["input"] = r.input;
  j["backend"] = r.backend;
  j["width"] = r.results.empty() ? 0 : r.results.front().width;
  j["height"] = r.results.empty() ? 0 : r.results.front().height;
  j["pixel_size_nm"] = r.pixel_size_nm > 0 ? json(r.pixel_size_nm) : json(nullptr);
  j["units"] = r.pixel_size_nm > 0 ? r.units : "px";
  j["radii"] = r.settings.nr;
  j["filters"] = r.settings.ng;
  j["apodization_px"] = {r.apodization_x, r.apodization_y};
  j["frequency_units"] = "normalised: 1 = Nyquist (0.5 cycles/px); resolution = 2 px / kc_max";
  json frames = json::array();
  for (std::size_t i = 0; i < r.results.size(); ++i) {
    const DecorrResult& d = r.results[i];
    json f;
    f["frame"] = r.frames[i];
    const bool has = d.kc_max > 0;
    f["kc_max"] = has ? json(d.kc_max) : json(nullptr);
    f["a0"] = d.a0;
    f["resolution_px"] = has ? json(d.resolution_px()) : json(nullptr);
    f["resolution_nm"] = has && r.pixel_size_nm > 0 ? json(d.resolution_px() * r.pixel_size_nm) : json(nullptr);
    f["resolution"] =
        has ? (r.pixel_size_nm > 0 ? json(resolution_in_units(r, d)) : json(d.resolution_px())) : json(nullptr);
    f["d0"] = curve_json(d.d0);
    json coarse = json::array(), refined = json::array();
    for (const DecorrCurve& c : d.coarse) coarse.push_back(curve_json(c));
    for (const DecorrCurve& c : d.refined) refined.push_back(curve_json(c));
    f["highpass"] = std::move(coarse);
    f["refined"] = std::move(refined);
    frames.push_back(std::move(f));
  }
  j["frames"] = std::move(frames);
  return j.dump(1) + "\n";
}

std::string decorr_table_csv(const DecorrReport& r) {
  std::ostringstream o;
  o.imbue(std::locale::classic());
  o << "frame,kc_max,a0,resolution_px,resolution_nm\n" << std::setprecision(10);
  for (std::size_t i = 0; i < r.results.size(); ++i) {
    const DecorrResult& d = r.results[i];
    const bool has = d.kc_max > 0;
    o << r.frames[i] << "," << (has ? d.kc_max : NAN) << "," << d.a0 << "," << (has ? d.resolution_px() : NAN) << ","
      << (has && r.pixel_size_nm > 0 ? d.resolution_px() * r.pixel_size_nm : NAN) << "\n";
  }
  return o.str();
}

void write_decorr_plot(const std::string& path, const DecorrReport& r, std::size_t index) {
  const DecorrResult& d = r.results.at(index);
  PlotSpec spec;
  spec.title =
      "Decorrelation analysis" + (r.results.size() > 1 ? " (frame " + std::to_string(r.frames[index]) + ")" : "");
  spec.x_label = "normalised frequency (1 = Nyquist)";
  spec.y_label = "correlation d(r)";
  const auto add = [&](const DecorrCurve& c, const std::string& label, Rgb color, int thickness) {
    PlotSeries s;
    s.label = label;
    s.x = c.radius;
    s.y = c.d;
    s.color = color;
    s.thickness = thickness;
    spec.series.push_back(std::move(s));
  };
  for (std::size_t i = 0; i < d.coarse.size(); ++i)
    add(d.coarse[i], i == 0 ? "high-pass filtered" : "", Rgb{150, 150, 150}, 1);
  for (std::size_t i = 0; i < d.refined.size(); ++i)
    add(d.refined[i], i == 0 ? "refined filters" : "",
        Rgb{static_cast<std::uint8_t>(40),
            static_cast<std::uint8_t>(60 + 150 * i / std::max<std::size_t>(d.refined.size(), 1)), 200},
        1);
  add(d.d0, "d0 (no filter)", Rgb{44, 160, 44}, 3);
  spec.x_min = 0;
  spec.x_max = 1;
  spec.y_min = 0;
  double top = 0.1;
  for (const PlotSeries& s : spec.series)
    for (double v : s.y) top = std::max(top, v);
  spec.y_max = std::min(1.0, std::ceil(top * 10 + 0.5) / 10);
  if (d.kc_max > 0) {
    PlotMarker m;
    m.x = d.kc_max;
    m.label = "kcMax " + fixed(d.kc_max, 3) + " = " +
              (r.pixel_size_nm > 0 ? fixed(resolution_in_units(r, d), r.units == "um" ? 4 : 1) + " " + r.units
                                   : fixed(d.resolution_px(), 2) + " px");
    spec.markers.push_back(m);
  }
  write_plot_png(path, spec);
}

void run_decorr_cli(const DecorrCliOptions& options, ToolContext& ctx, std::ostream& out) {
  const Params& p = ctx.params;
  if (options.input.empty()) throw UsageError("command line", "no image given (see frc decorr --help)");
  plan_input(options.input.substr(0, options.input.rfind(":/")), "the input");
  plan_output(options.json, "the curves (--json)");
  plan_output(options.plot, "the plot (--plot)");
  plan_output(options.table, "the table (--table)");
  check_run_plan();

  DecorrReport report;
  report.input = options.input;
  report.settings.nr = static_cast<int>(p.get_int("Decorr/radii"));
  report.settings.ng = static_cast<int>(p.get_int("Decorr/filters"));
  report.units = p.get_string("Decorr/units");
  auto reader = open_stack(options.input);
  const StackInfo& info = reader->info();
  report.pixel_size_nm = info.pixel_size_nm;
  if (const double given = p.get_real("FRC/pixel size"); given > 0) report.pixel_size_nm = given;

  DecorrGeometry g;
  g.width = info.width;
  g.height = info.height;
  g.apodization_px = p.get_real("Decorr/apodization");
  if (g.width < kMinDecorrSide || g.height < kMinDecorrSide)
    throw UsageError(info.path, "an image of " + std::to_string(g.width) + "x" + std::to_string(g.height) +
                                    " px is too small for decorrelation analysis: it needs at least " +
                                    std::to_string(kMinDecorrSide) + "x" + std::to_string(kMinDecorrSide) + " px");
  report.apodization_x = std::min(g.apodization_px, static_cast<double>(g.width / 4));
  report.apodization_y = std::min(g.apodization_px, static_cast<double>(g.height / 4));
  const auto range = ctx.frames.resolve(info.frames, info.path);
  if (range.count() < 1) throw InputError(info.path, "--frames selects no frame");
  auto engine = make_decorr_engine(ctx.device, g);
  report.backend = engine->name();

  std::vector<float> image(static_cast<std::size_t>(info.pixels_per_frame()));
  Progress progress("frc decorr", range.count(), ctx.quiet || range.count() < 2);
  for (std::int64_t f = range.first; f < range.last; ++f) {
    reader->read_float(f, 1, image.data());
    require_finite_pixels(image, info.path + (info.frames > 1 ? " frame " + std::to_string(f) : std::string()));
    report.frames.push_back(f);
    report.results.push_back(compute_decorr(*engine, image, report.settings));
    progress.update(f - range.first + 1);
  }
  progress.finish();

  {
    OutputGroup outputs;  // the JSON, the table and the plot appear together
    if (!options.json.empty()) write_file_atomically(options.json, decorr_json(report));
    if (!options.table.empty()) write_file_atomically(options.table, decorr_table_csv(report));
    if (!options.plot.empty()) write_decorr_plot(options.plot, report);
    outputs.commit();
  }
  for (std::size_t i = 0; i < report.results.size(); ++i) out << decorr_result_line(report, i) << "\n";
  out.flush();
  if (!ctx.quiet)
    for (const std::string* o : {&options.json, &options.table, &options.plot})
      if (!o->empty()) std::cerr << "frc decorr: wrote " << *o << "\n";
}

}  // namespace nanoscopy
